-- Every model version with its kind, name (KIND-PRESET unless named), status, epochs and last
-- losses ($kind: one kind, or null for all): the dashboard's model lists.
with status as (select * from model_status)
select model_id, kind, version, coalesce(name, model_id) as name, status, status_at, epochs,
    train_loss, val_loss
from status
where $kind is null or kind = $kind
order by kind, version
