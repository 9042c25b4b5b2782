-- Tournaments, running and recent first: progress, the latest event and the SPRT verdict.
with status as (select * from tournament_status),
sprt as (select * from sprt_results),
latest_sprt as (
    select distinct on (tournament_id) tournament_id, decision, llr
    from sprt
    order by tournament_id, recorded_at desc
)
select t.tournament_id, coalesce(t.name, t.tournament_id) as event, t.format, t.status,
    t.games_done, t.planned_games, s.decision as sprt, round(s.llr, 3) as llr, t.updated_at
from status t
left join latest_sprt s using (tournament_id)
order by t.updated_at desc nulls last
