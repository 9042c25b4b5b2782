-- The latest finished model of one kind, its dataset's label engine and depths, and how many
-- positions that engine labelled at those depths after the dataset was taken (retraining).
with models as (select * from models),
datasets as (select * from model_datasets),
labels as (select * from labels),
latest as (
    select m.model_id, m.version, d.label_engine_id, d.label_depths, d.recorded_at
    from models m
    join datasets d using (model_id)
    where m.kind = $kind
    order by m.version desc
    limit 1
)
select
    l.model_id,
    l.label_engine_id,
    l.label_depths,
    l.recorded_at as dataset_at,
    count(distinct x.position_key) as new_positions
from latest l
left join labels x
    on list_contains(string_split(l.label_engine_id, ';'), x.engine_id)
    and list_contains(l.label_depths, x.depth)
    and x.labelled_at > l.recorded_at
group by all
