-- depends: model_events, tournaments
-- Each model version's latest evaluation per baseline and per search limit: the match Elo
-- and its 95% interval, the SPRT's verdict and the ladder rating, from the 'evaluated' events
-- of chesslab evaluate. A net evaluated at 2+0.02 and again at 10+0.1 has a row for each.
-- column model_id: KIND@VERSION, e.g. nnue@3
-- column kind: nnue, volatility, lmr, policy_value
-- column version: the version number within the kind
-- column against: the baseline the match was played against
-- column limits: the match's search limit as a person reads it: 10+0.1, 5000 nodes, depth 8, 100 ms
-- column elo: the match Elo of the model against the baseline
-- column elo_lower: the lower end of the Elo's 95% interval
-- column elo_upper: the upper end of the Elo's 95% interval
-- column games: games of the match
-- column sprt: the SPRT's verdict: H1, H0 or continue
-- column ladder_elo: the model's BayesElo rating on the Stockfish ladder; null without a ladder
-- column match_tournament: tournaments.tournament_id of the match
-- column recorded_at: when the evaluation was recorded
with events as (select * from model_events),
tournaments as (select * from tournaments),
evaluated as (
    select model_id, recorded_at, payload ->> 'against' as against,
        payload ->> 'match_tournament' as match_tournament,
        cast(payload ->> 'elo' as double) as elo,
        cast(payload ->> 'elo_lower' as double) as elo_lower,
        cast(payload ->> 'elo_upper' as double) as elo_upper,
        cast(payload ->> 'games' as integer) as games,
        payload ->> 'sprt_decision' as sprt,
        cast(payload ->> 'ladder_elo' as double) as ladder_elo
    from events
    where event = 'evaluated' and payload ->> 'elo' is not null
),
limited as (
    select e.*, coalesce(
        case when t.time_control is not null and t.time_control not in ('', '-')
             then t.time_control end,
        case when t.nodes is not null then cast(t.nodes as varchar) || ' nodes' end,
        case when t.depth is not null then 'depth ' || cast(t.depth as varchar) end,
        case when t.movetime_ms is not null then cast(t.movetime_ms as varchar) || ' ms' end,
        '?') as limits
    from evaluated e
    left join tournaments t on t.tournament_id = e.match_tournament
)
select model_id, split_part(model_id, '@', 1) as kind,
    try_cast(split_part(model_id, '@', 2) as integer) as version,
    against, limits, elo, elo_lower, elo_upper, games, sprt, ladder_elo, match_tournament,
    recorded_at
from limited
qualify row_number() over (partition by model_id, against, limits
                           order by recorded_at desc) = 1
