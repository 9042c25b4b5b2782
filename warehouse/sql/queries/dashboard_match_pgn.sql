-- The PGN of one tournament's games ($tournament; $game: one game key, or null for all) in
-- schedule order.
with games as (select * from tournament_games)
select game_key, pgn
from games
where tournament_id = $tournament and ($game is null or game_key = $game)
order by round, pairing, game_in_pair
