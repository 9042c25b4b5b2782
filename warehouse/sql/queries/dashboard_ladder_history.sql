-- The Stockfish-ladder rating of each model version at each evaluation, in time order
-- ($model: one version, or null for all).
with events as (select * from model_events)
select model_id, split_part(model_id, '@', 1) as kind,
    try_cast(split_part(model_id, '@', 2) as integer) as version, recorded_at,
    cast(payload ->> 'ladder_elo' as double) as ladder_elo,
    cast(payload ->> 'ladder_plus' as double) as plus,
    cast(payload ->> 'ladder_minus' as double) as minus,
    payload ->> 'sprt_decision' as sprt
from events
where event = 'evaluated' and payload ->> 'ladder_elo' is not null
    and ($model is null or model_id = $model)
order by recorded_at, model_id
