-- depends: tournament_games
-- Points, games and draws of every player of every tournament.
-- column tournament_id: tournaments.tournament_id
-- column player: the player's name in the games
-- column games: games the player finished
-- column points: points the player scored
-- column score_pct: points per game, percent, one decimal
-- column draws: drawn games of the player
with games as (select * from tournament_games),
sides as (
    select tournament_id, white as player, white_score as points, result from games
    union all
    select tournament_id, black as player, 1 - white_score as points, result from games
)
select
    tournament_id,
    player,
    count(*) as games,
    sum(points) as points,
    round(100 * avg(points), 1) as score_pct,
    count(*) filter (where result = '1/2-1/2') as draws
from sides
group by all
order by tournament_id, points desc
