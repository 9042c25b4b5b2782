-- One model version's data set ($model) and its lineage down to the source files: the view
-- and parameters it was read with, the label engine and depths, the rows of each split, and
-- per source file the labelled positions it contributed (positions the label engine had
-- scored at the data set's depths when the data set was taken).
with datasets as (select * from model_datasets),
labels as (select * from labels),
positions as (select * from positions),
sources as (select * from sources),
dataset as (select * from datasets where model_id = $model),
used as (
    select distinct l.position_key
    from dataset d
    join labels l
        on list_contains(string_split(d.label_engine_id, ';'), l.engine_id)
        and list_contains(d.label_depths, l.depth)
        and l.labelled_at <= d.recorded_at
        and l.score_mate is null and l.score_cp is not null
),
files as (
    select s.path as source_path, s.format as source_format, count(*) as positions
    from used u
    join positions p using (position_key)
    join sources s on s.source_id = p.source_id
    group by all
)
select d.view, d.parameters, d.label_engine_id, d.label_depths, d.train_rows,
    d.validation_rows, d.position_keys_hash, d.recorded_at, f.source_path, f.source_format,
    f.positions
from dataset d
left join files f on true
order by f.positions desc, f.source_path
