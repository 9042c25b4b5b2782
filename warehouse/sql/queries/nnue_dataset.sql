-- One split of the NNUE data set for a label engine and depth, shuffled per epoch. A position
-- is in the validation split when its split_key (lowest game id) hashes below the permille,
-- so validation and training positions never come from the same game.
select position_key, fen, score_cp, result, split_key, in_check
from nnue_examples
where engine_id = $engine_id
    and depth = $depth
    and in_check is not true
    and ((md5_number(split_key) % 1000)::integer < $validation_permille) = $validation
order by hash(position_key, $shuffle_seed)
limit $max_positions
