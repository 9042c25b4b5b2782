-- depends: labels, engines
-- Labelled positions per engine and depth, with the engine's name and version.
with labels as (select * from labels),
engines as (select * from engines)
select
    l.engine_id,
    e.name as engine_name,
    e.version as engine_version,
    l.depth,
    count(*) as positions,
    min(l.labelled_at) as first_labelled,
    max(l.labelled_at) as last_labelled
from labels l
left join engines e using (engine_id)
group by all
order by l.engine_id, l.depth
