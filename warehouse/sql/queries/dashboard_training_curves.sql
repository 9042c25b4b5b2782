-- Loss curves per model version ($kind: one kind, or null for all): every finished epoch's
-- train and validation loss with its optimiser step and wall time, runs in progress included
-- (they grow as the trainer writes epochs).
with metrics as (select * from model_metrics)
select model_id, split_part(model_id, '@', 1) as kind, epoch + 1 as epoch, step, train_loss,
    val_loss, positions_per_s, learning_rate, recorded_at
from metrics
where $kind is null or split_part(model_id, '@', 1) = $kind
order by model_id, epoch
