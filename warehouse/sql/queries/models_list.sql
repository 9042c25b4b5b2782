-- Model versions with status and headline metrics, optionally of one kind (chesslab models).
select model_id, kind, version, name, status, epochs, round(train_loss, 6) as train_loss,
    round(val_loss, 6) as val_loss, status_at
from model_status
where $kind is null or kind = $kind
order by kind, version
