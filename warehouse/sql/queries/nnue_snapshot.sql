-- The NNUE data set of one label engine and depth, with its split, as written once per
-- training run into the run's folder (every epoch then reads that file, and a resumed run
-- trains on the same rows). A position is in the validation split when its split_key (lowest
-- game id) hashes below the permille: validation and training never share a game.
-- best_move goes along for the trainer's quiet-position filter (it needs the board).
select
    position_key,
    fen,
    score_cp,
    result,
    split_key,
    in_check,
    best_move,
    (md5_number(split_key) % 1000)::integer < $validation_permille as validation
from nnue_examples
where engine_id = $engine_id
    and depth = $depth
    and in_check is not true
order by position_key
