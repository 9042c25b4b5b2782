-- ROC curves of the volatility models (positive = stable), from the strictest threshold
-- ($model: one model, or null for all).
with roc as (select * from volatility_roc)
select model_id, point, fpr, tpr, threshold
from roc
where $model is null or model_id = $model
order by model_id, point
