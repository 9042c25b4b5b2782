-- depends: selfplay_samples
-- The replay window of a selfplay-train run: samples of rounds $first_round..$last_round,
-- in key order (the training split is made from it by position).
select fen, moves, visits, played, outcome, material, search_value, round, game, ply
from selfplay_samples
where run_id = $run_id and round between $first_round and $last_round
order by round, game, ply
