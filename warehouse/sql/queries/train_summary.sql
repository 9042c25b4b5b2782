-- What `chesslab train` prints about the version it made ($model: 'nnue@3'): the last
-- epoch's losses and, for a volatility model, the validation ROC AUC and the chosen threshold.
select s.model_id, s.epochs, s.train_loss, s.val_loss, v.roc_auc, v.threshold, v.target_fpr
from model_status s
left join volatility_evaluations v using (model_id)
where s.model_id = $model
