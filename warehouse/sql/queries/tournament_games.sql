-- The finished games of one tournament in schedule order ($1: tournament id).
with games as (select * from tournament_games)
select game_key, pairing, round, game_in_pair, white, black, result, white_score,
    termination, reason, plies, duration_s, engine_s, pgn
from games
where tournament_id = $1
order by round, pairing, game_in_pair
