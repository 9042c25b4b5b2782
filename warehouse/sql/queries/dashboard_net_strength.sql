-- A net's strength over its versions: each evaluated model version's match Elo against each
-- baseline it was evaluated against (its latest evaluated event per baseline) with the 95%
-- interval, the SPRT's verdict, its ladder rating and whether it was promoted ($kind: one
-- kind, or null for all).
with events as (select * from model_events),
models as (select * from models),
evaluated as (
    select model_id, recorded_at, payload ->> 'against' as against,
        cast(payload ->> 'elo' as double) as elo,
        cast(payload ->> 'elo_lower' as double) as elo_lower,
        cast(payload ->> 'elo_upper' as double) as elo_upper,
        cast(payload ->> 'games' as integer) as games,
        payload ->> 'sprt_decision' as sprt,
        cast(payload ->> 'ladder_elo' as double) as ladder_elo
    from events
    where event = 'evaluated' and payload ->> 'elo' is not null
    qualify row_number() over (partition by model_id, payload ->> 'against'
                               order by recorded_at desc) = 1
),
promoted as (
    select distinct model_id
    from events
    where event = 'promoted'
)
select e.model_id, split_part(e.model_id, '@', 1) as kind,
    try_cast(split_part(e.model_id, '@', 2) as integer) as version,
    coalesce(m.name, e.model_id) as name, e.against, e.elo, e.elo_lower, e.elo_upper, e.games,
    e.sprt, e.ladder_elo, p.model_id is not null as promoted, e.recorded_at
from evaluated e
left join models m using (model_id)
left join promoted p using (model_id)
where $kind is null or split_part(e.model_id, '@', 1) = $kind
order by kind, version, e.against
