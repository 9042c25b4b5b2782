-- Labelled positions per depth over time: the cumulative count at the end of each minute in
-- which labels were written.
with labels as (select * from labels),
per_minute as (
    select depth, date_trunc('minute', labelled_at) as minute, count(*) as labels
    from labels
    where labelled_at is not null
    group by all
)
select depth, minute,
    sum(labels) over (partition by depth order by minute) as labelled
from per_minute
order by depth, minute
