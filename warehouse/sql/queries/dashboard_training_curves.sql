-- Loss curves per model version: every finished epoch's train and validation loss (runs in
-- progress included; they grow as the trainer writes epochs).
with metrics as (select * from model_metrics)
select model_id, epoch + 1 as epoch, train_loss, val_loss, positions_per_s, learning_rate
from metrics
order by model_id, epoch
