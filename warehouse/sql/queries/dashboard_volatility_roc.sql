-- ROC curves of the volatility models (positive = stable), from the strictest threshold.
with roc as (select * from volatility_roc)
select model_id, point, fpr, tpr, threshold
from roc
order by model_id, point
