-- Labelled positions per engine and depth, and their share of all positions.
with coverage as (select * from label_coverage),
totals as (select count(*) as all_positions from positions)
select
    c.engine_name,
    c.engine_version,
    c.engine_id,
    c.depth,
    c.positions,
    round(100.0 * c.positions / nullif(t.all_positions, 0), 1) as pct_of_positions
from coverage c, totals t
order by c.engine_id, c.depth
