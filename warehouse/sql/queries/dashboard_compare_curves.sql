-- The epochs of the model versions being compared ($models: a list of model ids), with each
-- epoch's optimiser step and wall time.
with metrics as (select * from model_metrics)
select model_id, epoch + 1 as epoch, step, train_loss, val_loss, recorded_at
from metrics
where list_contains($models, model_id)
order by model_id, epoch
