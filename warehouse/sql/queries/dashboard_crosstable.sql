-- Crosstables: each player's points against each opponent per tournament (both colours).
with games as (select * from tournament_games),
sides as (
    select tournament_id, white as player, black as opponent, white_score as score
    from games
    where white_score is not null
    union all
    select tournament_id, black as player, white as opponent, 1 - white_score as score
    from games
    where white_score is not null
)
select tournament_id, player, opponent, sum(score) as points, count(*) as games
from sides
group by all
order by tournament_id, player, opponent
