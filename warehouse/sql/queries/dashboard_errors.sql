-- Ingest errors per source file and label errors per engine, in one list.
with ingest as (select * from ingest_errors),
label as (select * from label_errors)
select 'ingest' as step, path as subject, count(*) as errors, any_value(message) as example
from ingest
group by all
union all
select 'label' as step, engine_id as subject, count(*) as errors, any_value(message) as example
from label
group by all
order by errors desc, subject
