-- Every tournament a model version played in ($model, through its players' engines rows),
-- with its rating there (the tournament's latest rating table) and the match's progress.
with players as (select * from tournament_players),
engines as (select distinct engine_id, model from engines),
ratings as (select * from latest_ratings),
status as (select * from tournament_status)
select t.tournament_id, t.name as event, t.format, t.status, t.games_done, t.planned_games,
    p.player, round(r.elo, 1) as elo, round(r.plus, 1) as plus, round(r.minus, 1) as minus,
    r.games, t.updated_at
from players p
join engines e using (engine_id)
join status t using (tournament_id)
left join ratings r on r.tournament_id = p.tournament_id and r.player = p.player
where e.model = $model
order by t.updated_at desc
