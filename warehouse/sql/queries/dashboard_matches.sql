-- Tournaments, running and recent first: who played (players sorted, joined by " vs "),
-- the limit per move, when it started, progress, the latest event and the SPRT verdict.
with status as (select * from tournament_status),
tournaments as (select * from tournaments),
players as (select * from tournament_players),
sprt as (select * from sprt_results),
latest_sprt as (
    select distinct on (tournament_id) tournament_id, decision, llr
    from sprt
    order by tournament_id, recorded_at desc
),
names as (
    select tournament_id, count(*) as player_count,
        string_agg(player, ' vs ' order by player) as players
    from players
    group by tournament_id
)
select t.tournament_id, coalesce(t.name, t.tournament_id) as event, n.players,
    n.player_count, concat_ws(', ',
        case when d.nodes is not null then format('{:,} nodes', d.nodes) end,
        case when d.depth is not null then format('depth {}', d.depth) end,
        case when d.movetime_ms is not null then format('{} ms', d.movetime_ms) end,
        case when d.time_control is not null and d.time_control not in ('-', '')
             then 'tc ' || d.time_control end) as limits,
    t.format, t.status, t.games_done, t.planned_games, s.decision as sprt,
    round(s.llr, 3) as llr, d.created_at as started_at, t.updated_at
from status t
left join tournaments d using (tournament_id)
left join names n using (tournament_id)
left join latest_sprt s using (tournament_id)
order by t.updated_at desc nulls last
