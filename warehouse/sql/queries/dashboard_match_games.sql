-- The finished games of one tournament ($tournament) in the order they finished: players,
-- result, opening and length (the PGN is downloaded separately).
with games as (select * from tournament_games)
select game_key, pairing, round, game_in_pair, white, black, result, white_score,
    termination, reason, plies, eco, opening, array_to_string(opening_moves, ' ') as opening_moves,
    opening_fen, round(duration_s, 1) as duration_s, finished_at
from games
where tournament_id = $tournament
order by finished_at nulls last, round, pairing, game_in_pair
