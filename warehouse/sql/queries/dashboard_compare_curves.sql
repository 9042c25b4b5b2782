-- The epochs of the model versions being compared ($models: a list of model ids).
with metrics as (select * from model_metrics)
select model_id, epoch + 1 as epoch, train_loss, val_loss
from metrics
where list_contains($models, model_id)
order by model_id, epoch
