-- The players with the most games ($limit of them): games, wins, draws and losses, and their
-- mean Elo over those games.
with sides as (
    select white as player, white_elo as elo,
        case result when '1-0' then 1 when '0-1' then 0 when '1/2-1/2' then 0.5 end as score
    from games
    union all
    select black, black_elo,
        case result when '0-1' then 1 when '1-0' then 0 when '1/2-1/2' then 0.5 end
    from games
)
select
    player,
    count(*) as games,
    count(*) filter (where score = 1) as wins,
    count(*) filter (where score = 0.5) as draws,
    count(*) filter (where score = 0) as losses,
    round(avg(elo)) as mean_elo
from sides
where player is not null
group by player
order by games desc, player
limit $limit
