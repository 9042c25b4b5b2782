-- depends: selfplay_games
-- The finished games of one round of a selfplay-train run.
select game, result, plies, samples, model_id
from selfplay_games
where run_id = $run_id and round = $round
order by game
