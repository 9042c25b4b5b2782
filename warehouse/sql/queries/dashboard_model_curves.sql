-- One model version's epochs ($model): losses, learning rate, speed and the kind's own
-- metrics (extra, a JSON object).
with metrics as (select * from model_metrics)
select epoch + 1 as epoch, step, train_loss, val_loss, learning_rate, positions_per_s, extra,
    recorded_at
from metrics
where model_id = $model
order by epoch
