-- depends: volatility_fpr_table, volatility_evaluations
-- Paper 003's Table 4.1 side by side with a model's (validation split, split by game):
-- at each of the paper's FPR levels, our threshold, TPR, FPR, share of positions flagged
-- stable and precision, next to the paper's TPR and threshold and our always-unstable
-- baseline accuracy. $model_id: KIND@VERSION, e.g. volatility@3.
select
    t.target_fpr,
    t.threshold,
    t.tpr,
    t.fpr,
    t.flagged_share,
    t.precision,
    t.paper_tpr,
    t.paper_threshold,
    e.roc_auc,
    e.baseline_accuracy
from volatility_fpr_table t
join volatility_evaluations e using (model_id)
where t.model_id = $model_id
order by t.target_fpr
