-- Positions per source file (by the file they were first seen in), most first.
with positions as (select * from positions),
sources as (select * from sources)
select coalesce(s.path, p.source_id) as source, count(*) as positions
from positions p
left join sources s using (source_id)
group by all
order by positions desc, source
