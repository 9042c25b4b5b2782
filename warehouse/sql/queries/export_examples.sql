-- The nnue_examples rows `chesslab export nnue_examples` writes: one engine ($engine_id, null:
-- every engine) at one depth ($depth, null: every depth), narrowed by the user's --where
-- predicate (checked by warehouse.predicate: one expression over the view's columns), in key
-- order so two exports of the same warehouse are the same file.
with nnue_examples as (select * from nnue_examples)
select position_key, fen, side_to_move, engine_id, depth, score_cp, result, best_move, game_id,
    split_key, in_check
from nnue_examples
where ($engine_id is null or engine_id = $engine_id)
    and ($depth is null or depth = $depth)
    and ({where})
order by position_key, engine_id, depth
