-- Crosstable of one tournament ($tournament): each player's points against each opponent
-- (both colours).
with games as (select * from tournament_games),
sides as (
    select white as player, black as opponent, white_score as score
    from games
    where white_score is not null and tournament_id = $tournament
    union all
    select black as player, white as opponent, 1 - white_score as score
    from games
    where white_score is not null and tournament_id = $tournament
)
select player, opponent, sum(score) as points, count(*) as games
from sides
group by all
order by player, opponent
