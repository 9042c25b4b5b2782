-- depends: labels, engines
-- Labelled positions per engine and depth, with the engine's name and version.
-- column engine_id: engines.engine_id of the labelling engine
-- column engine_name: the engine's name (engines.name)
-- column engine_version: the engine's version (engines.version)
-- column depth: the label depth
-- column positions: positions labelled by the engine at the depth
-- column first_labelled: when the first of those labels was stored
-- column last_labelled: when the last of those labels was stored
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
