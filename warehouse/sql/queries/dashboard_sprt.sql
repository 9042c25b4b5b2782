-- SPRT runs: the log-likelihood ratio of each against its bounds, latest first.
with sprt as (select * from sprt_results),
tournaments as (select * from tournaments)
select s.tournament_id, coalesce(t.event, s.tournament_id) as event, s.elo0, s.elo1,
    round(s.llr, 3) as llr, round(s.lower_bound, 3) as lower_bound,
    round(s.upper_bound, 3) as upper_bound, s.decision, s.recorded_at
from sprt s
left join tournaments t using (tournament_id)
order by s.recorded_at desc
