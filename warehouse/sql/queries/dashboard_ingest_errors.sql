-- Ingest errors per source and kind.
with errors as (select * from ingest_errors)
select path, kind, count(*) as errors, any_value(message) as example
from errors
group by path, kind
order by errors desc
