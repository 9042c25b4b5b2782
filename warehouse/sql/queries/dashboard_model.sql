-- One model version ($model): its registry row, status and the run's config.
with status as (select * from model_status),
models as (select * from models)
select s.model_id, s.kind, s.version, coalesce(s.name, s.model_id) as name, s.status,
    s.status_at, s.epochs, s.train_loss, s.val_loss, m.config, m.artifact_path,
    m.artifact_sha256, m.created_at
from status s
left join models m using (model_id)
where s.model_id = $model
