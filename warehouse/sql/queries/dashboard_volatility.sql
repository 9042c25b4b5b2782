-- Share of stable positions (paper 003, beta = 18 cp) per engine, with the mean |V7 - V6|.
with examples as (select * from volatility_examples)
select engine_id, count(*) as positions,
       round(100.0 * avg(stable::int), 1) as stable_pct,
       round(100.0 * avg(pv_change::int), 1) as pv_change_pct,
       round(median(change_67), 1) as median_change_67
from examples
group by engine_id
order by engine_id
