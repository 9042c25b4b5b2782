-- What a model version was trained on, for `chesslab export KIND@VERSION`: its label engines
-- (';'-joined) and depth, and the rows of its snapshot. $model_id: KIND@VERSION.
select model_id, view, label_engine_id, label_depths, train_rows, validation_rows
from model_datasets
where model_id = $model_id
