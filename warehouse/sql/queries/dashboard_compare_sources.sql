-- The source files each compared version ($models) learnt from: per file, the positions its
-- label engine had scored at the data set's depths when the data set was taken (as
-- dashboard_model_lineage counts them for one version).
with datasets as (select * from model_datasets),
labels as (select * from labels),
positions as (select * from positions),
sources as (select * from sources),
chosen as (select * from datasets where list_contains($models, model_id)),
used as (
    select distinct d.model_id, l.position_key
    from chosen d
    join labels l
        on list_contains(string_split(d.label_engine_id, ';'), l.engine_id)
        and list_contains(d.label_depths, l.depth)
        and l.labelled_at <= d.recorded_at
        and l.score_mate is null and l.score_cp is not null
)
select u.model_id, s.path as source_path, count(*) as positions
from used u
join positions p using (position_key)
join sources s on s.source_id = p.source_id
group by all
order by u.model_id, positions desc, source_path
