-- A net's strength over its versions: each evaluated model version's match Elo against each
-- baseline and search limit it was evaluated at (the model_evaluations view: its latest
-- evaluation of each) with the 95% interval, the SPRT's verdict, its ladder rating and
-- whether it was promoted ($kind: one kind, or null for all).
with evaluations as (select * from model_evaluations),
events as (select * from model_events),
models as (select * from models),
promoted as (
    select distinct model_id
    from events
    where event = 'promoted'
)
select e.model_id, e.kind, e.version, coalesce(m.name, e.model_id) as name, e.against,
    e.limits, e.elo, e.elo_lower, e.elo_upper, e.games, e.sprt, e.ladder_elo,
    p.model_id is not null as promoted, e.recorded_at
from evaluations e
left join models m using (model_id)
left join promoted p using (model_id)
where $kind is null or e.kind = $kind
order by e.kind, e.version, e.against, e.limits
