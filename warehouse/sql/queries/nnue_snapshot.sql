-- The NNUE data set of one or more label engines ($engine_ids, a list) at one depth, with its
-- split, as written once per training run into the run's folder (every epoch then reads that
-- file, and a resumed run trains on the same rows). A position several of the engines
-- labelled appears once, with the label of the first engine in the list. A position is in
-- the validation split when its split_key (lowest game id) hashes below the permille:
-- validation and training never share a game.
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
where list_contains($engine_ids, engine_id)
    and depth = $depth
    and in_check is not true
qualify row_number() over (partition by position_key
                           order by list_position($engine_ids, engine_id)) = 1
order by position_key
