-- The model versions being compared ($models): config, data set size and final figures.
with status as (select * from model_status),
models as (select * from models),
datasets as (select * from model_datasets)
select s.model_id, s.kind, s.version, coalesce(s.name, s.model_id) as name, s.status,
    s.epochs, s.train_loss, s.val_loss, m.config, d.train_rows, d.validation_rows,
    d.label_engine_id, d.label_depths
from status s
left join models m using (model_id)
left join datasets d using (model_id)
where list_contains($models, s.model_id)
order by s.version
