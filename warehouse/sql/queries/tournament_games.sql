-- The finished games of one tournament in schedule order ($1: tournament id).
with games as (select * from tournament_games)
select * exclude (tournament_id)
from games
where tournament_id = $1
order by round, pairing, game_in_pair
