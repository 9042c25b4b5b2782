-- depends: volatility_fpr_table, volatility_evaluations
-- Paper 003's Table 4.1 analogue for every volatility model: at each FPR level, our threshold
-- and TPR next to the paper's, with the model's ROC AUC ($model: one model, or null for all).
with fpr as (select * from volatility_fpr_table),
evaluations as (select * from volatility_evaluations)
select t.model_id, t.target_fpr, round(t.threshold, 3) as threshold, round(t.tpr, 3) as tpr,
    round(t.fpr, 3) as fpr, t.paper_tpr, t.paper_threshold, round(e.roc_auc, 3) as roc_auc
from fpr t
join evaluations e using (model_id)
where $model is null or t.model_id = $model
order by t.model_id, t.target_fpr
