-- Cumulative gains of the volatility models, with the random and perfect references.
-- ($model: one model, or null for all).
with gains as (select * from volatility_gains)
select model_id, percent, stable_found, random, perfect
from gains
where $model is null or model_id = $model
order by model_id, percent
