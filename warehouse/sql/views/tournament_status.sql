-- depends: tournament_events, tournament_games, tournaments
-- Latest progress event of each tournament (its incidents, worker_lost and batch_replayed,
-- left out), with its finished-game count from the games.
-- planned_games is the latest event's: an SPRT rerun with more rounds (a larger games cap)
-- continues the same tournament, whose tournaments row keeps the first run's plan.
-- column tournament_id: tournaments.tournament_id
-- column name: the tournament's PGN Event tag
-- column format: round-robin or gauntlet
-- column planned_games: games planned by the latest run (the first run's when no event is recorded)
-- column games_done: games finished and stored
-- column status: the latest event: started, resumed, finished, interrupted, sprt_stopped
-- column detail: the latest event's detail (an interruption's reason, the SPRT's decision)
-- column updated_at: when the latest event happened
with events as (select * from tournament_events),
games as (select * from tournament_games),
tournaments as (select * from tournaments),
latest as (
    select distinct on (tournament_id) tournament_id, event, detail, planned_games, recorded_at
    from events
    where event in ('started', 'resumed', 'finished', 'interrupted', 'sprt_stopped')
    order by tournament_id, recorded_at desc
),
counts as (
    select tournament_id, count(*) as games_done
    from games
    group by tournament_id
)
select
    t.tournament_id,
    t.event as name,
    t.format,
    coalesce(l.planned_games, t.planned_games) as planned_games,
    coalesce(c.games_done, 0) as games_done,
    l.event as status,
    l.detail,
    l.recorded_at as updated_at
from tournaments t
left join latest l using (tournament_id)
left join counts c using (tournament_id)
order by l.recorded_at desc
