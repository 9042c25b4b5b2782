-- What went wrong in one tournament ($tournament), in the order it happened: the workers its
-- cluster lost and the batches played again (tournament_events), and the games lost on time,
-- each engine's measured seconds against its budget (tournament_games).
with events as (select * from tournament_events),
games as (select * from tournament_games)
select recorded_at as happened_at, event as incident, null as game_key, detail,
    null::double as white_time_s, null::double as white_budget_s,
    null::double as black_time_s, null::double as black_budget_s
from events
where tournament_id = $tournament and event in ('worker_lost', 'batch_replayed')
union all
select finished_at, 'time forfeit', game_key, reason,
    round(white_time_s, 3), round(cast(white_budget_s as double), 3),
    round(black_time_s, 3), round(cast(black_budget_s as double), 3)
from games
where tournament_id = $tournament and termination = 'time forfeit'
order by happened_at nulls last, game_key
