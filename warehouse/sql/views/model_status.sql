-- depends: models, model_events, model_metrics
-- Every model version with its latest event (latest wins: trained, exported, deployed,
-- evaluated, promoted, retired) and the last epoch's losses; runs still training have a
-- 'started' event and no models row yet.
-- column model_id: KIND@VERSION, e.g. nnue@3
-- column kind: nnue, volatility, lmr, policy_value
-- column version: the version number within the kind
-- column name: a human label of the run; null while it trains
-- column status: the latest event: started, trained, exported, deployed, evaluated, promoted, retired
-- column status_at: when the latest event happened
-- column epochs: epochs finished (the last recorded epoch + 1); null without metrics
-- column train_loss: the last finished epoch's mean training loss
-- column val_loss: the last finished epoch's validation loss
-- column artifact_path: the exported file; null while it trains
-- column artifact_sha256: SHA-256 of the artifact, hex
-- column created_at: when the model was registered (its training finished)
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
