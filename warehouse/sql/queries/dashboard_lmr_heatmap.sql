-- Mean largest safe reduction (Table 5.1's label) by node depth and move number (moves past
-- 30 pooled), with the number of labelled decisions behind each cell: of the lmr-data run an
-- lmr model ($model) was fitted on, or of every run ($model null, or a model fitted on all).
with examples as (select * from lmr_examples),
datasets as (select * from model_datasets),
fitted as (
    select json_extract_string(parameters, '$.data_run') as data_run
    from datasets
    where model_id = $model
)
select depth, least(move_no, 30) as move_no, avg(label_table) as reduction,
    count(*) as examples
from examples
where label_table is not null
    and ((select data_run from fitted) is null or data_run = (select data_run from fitted))
group by all
order by depth, move_no
