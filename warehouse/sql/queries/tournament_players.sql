-- The players of one tournament ($1: tournament id).
with players as (select * from tournament_players)
select player, engine_id, kind, protocol, command, options, anchor_elo
from players
where tournament_id = $1
order by player
