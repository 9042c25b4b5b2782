-- depends: models, model_events, model_metrics
-- Every model version with its latest event (latest wins: trained, exported, deployed,
-- evaluated, promoted, retired) and the last epoch's losses; runs still training have a
-- 'started' event and no models row yet.
with models as (select * from models),
events as (select * from model_events),
metrics as (select * from model_metrics),
latest as (
    select distinct on (model_id) model_id, event as status, recorded_at as status_at
    from events
    order by model_id, recorded_at desc, event_id
),
last_epoch as (
    select distinct on (model_id) model_id, epoch, train_loss, val_loss
    from metrics
    order by model_id, epoch desc
),
ids as (
    select model_id from models
    union
    select model_id from latest
)
select
    i.model_id,
    coalesce(m.kind, split_part(i.model_id, '@', 1)) as kind,
    coalesce(m.version, try_cast(split_part(i.model_id, '@', 2) as integer)) as version,
    m.name,
    l.status,
    l.status_at,
    e.epoch + 1 as epochs,
    e.train_loss,
    e.val_loss,
    m.artifact_path,
    m.artifact_sha256,
    m.created_at
from ids i
left join models m using (model_id)
left join latest l using (model_id)
left join last_epoch e using (model_id)
order by kind, version
