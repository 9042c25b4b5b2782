-- The model versions being compared ($models): config, status and final losses, the run's
-- wall time (started to trained), the data set (size, labels, parameters, its keys' hash)
-- and the latest evaluation (match Elo and interval against its baseline, SPRT verdict and
-- LLR, ladder rating).
with status as (select * from model_status),
models as (select * from models),
datasets as (select * from model_datasets),
events as (select * from model_events),
runs as (
    select model_id, min(recorded_at) filter (where event = 'started') as started_at,
        max(recorded_at) filter (where event = 'trained') as trained_at
    from events
    group by model_id
),
evaluated as (
    select distinct on (model_id) model_id, payload, recorded_at
    from events
    where event = 'evaluated'
    order by model_id, recorded_at desc
)
select s.model_id, s.kind, s.version, coalesce(s.name, s.model_id) as name, s.status,
    s.epochs, s.train_loss, s.val_loss, m.config, d.view, d.parameters as dataset_parameters,
    d.train_rows, d.validation_rows, d.label_engine_id, d.label_depths,
    d.position_keys_hash, epoch(r.trained_at - r.started_at) as wall_s,
    e.payload ->> 'against' as against,
    cast(e.payload ->> 'elo' as double) as elo,
    cast(e.payload ->> 'elo_lower' as double) as elo_lower,
    cast(e.payload ->> 'elo_upper' as double) as elo_upper,
    cast(e.payload ->> 'games' as integer) as games,
    e.payload ->> 'sprt_decision' as sprt,
    cast(e.payload ->> 'sprt_llr' as double) as llr,
    cast(e.payload ->> 'ladder_elo' as double) as ladder_elo,
    cast(e.payload ->> 'ladder_plus' as double) as ladder_plus,
    cast(e.payload ->> 'ladder_minus' as double) as ladder_minus,
    e.recorded_at as evaluated_at
from status s
left join models m using (model_id)
left join datasets d using (model_id)
left join runs r using (model_id)
left join evaluated e using (model_id)
where list_contains($models, s.model_id)
order by s.version
