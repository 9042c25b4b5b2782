-- One tournament ($tournament): its plan, limits, SPRT settings (from its config) and its
-- latest progress event.
with tournaments as (select * from tournaments),
status as (select * from tournament_status)
select t.tournament_id, coalesce(t.event, t.tournament_id) as event, t.format, t.rounds,
    s.planned_games, s.games_done, s.status, s.detail, s.updated_at, t.time_control, t.nodes,
    t.depth, t.movetime_ms, t.openings, t.created_at,
    cast(json_extract(t.config, '$.sprt_elo0') as double) as sprt_elo0,
    cast(json_extract(t.config, '$.sprt_elo1') as double) as sprt_elo1,
    cast(json_extract(t.config, '$.sprt_alpha') as double) as sprt_alpha,
    cast(json_extract(t.config, '$.sprt_beta') as double) as sprt_beta,
    json_extract_string(t.config, '$.sprt_model') as sprt_model
from tournaments t
left join status s using (tournament_id)
where t.tournament_id = $tournament
