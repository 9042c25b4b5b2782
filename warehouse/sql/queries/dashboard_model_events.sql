-- One model version's events ($model), oldest first: started, trained, exported, evaluated,
-- promoted.
with events as (select * from model_events)
select recorded_at, event, payload
from events
where model_id = $model
order by recorded_at, event_id
