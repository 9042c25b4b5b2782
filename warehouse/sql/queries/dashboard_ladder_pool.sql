-- The Stockfish ladder as one pool: each model version's latest ladder rating (anchored to
-- Stockfish's UCI_Elo, so versions of every kind compare), best first.
with events as (select * from model_events),
latest as (
    select distinct on (model_id) model_id, payload, recorded_at
    from events
    where event = 'evaluated' and payload ->> 'ladder_elo' is not null
    order by model_id, recorded_at desc
)
select row_number() over (order by cast(payload ->> 'ladder_elo' as double) desc) as rank,
    model_id as player,
    round(cast(payload ->> 'ladder_elo' as double), 1) as elo,
    round(cast(payload ->> 'ladder_plus' as double), 1) as plus,
    round(cast(payload ->> 'ladder_minus' as double), 1) as minus,
    cast(payload ->> 'ladder_games' as integer) as games, recorded_at
from latest
order by rank
