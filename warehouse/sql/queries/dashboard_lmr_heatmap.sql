-- Mean largest safe reduction (Table 5.1's label) by node depth and move number (moves past
-- 30 pooled), with the number of labelled decisions behind each cell.
with examples as (select * from lmr_examples)
select depth, least(move_no, 30) as move_no, avg(label_table) as reduction, count(*) as examples
from examples
where label_table is not null
group by all
order by depth, move_no
