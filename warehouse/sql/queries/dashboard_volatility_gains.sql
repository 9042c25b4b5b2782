-- Cumulative gains of the volatility models, with the random and perfect references.
with gains as (select * from volatility_gains)
select model_id, percent, stable_found, random, perfect
from gains
order by model_id, percent
