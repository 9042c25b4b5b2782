-- depends: label_counts, label_counts_overlay
-- Labels and annotations counted per engine and depth by what a report over a whole depth
-- tells apart, as nnue_examples has them: label_scores_by_side and nnue_examples_depth add up
-- a few of its rows instead of joining every label with its position. The sum of the derived
-- tables label_counts (every label by its position's facts as kept) and label_counts_overlay
-- (the corrections for the positions changed since, and the annotations), both kept by
-- compact (warehouse/derived.py).
-- column kind: 'label' (the labels table) or 'annotation' (a game's [%eval], pgn_annotations)
-- column engine_id: the labelling engine, or pgn:<Annotator> for annotations
-- column depth: the label depth
-- column side_to_move: w or b
-- column in_check: the side to move is in check; null when unknown
-- column in_game: the position was played in a game
-- column result: 1, 0.5 or 0 for the side to move as nnue_examples gives it; null when unknown
-- column mate: the label is a mate score
-- column bound: 'lower'/'upper' when the label's score is a bound; null: exact
-- column scored: the label has a centipawn score
-- column with_best_move: the label has a best move
-- column positions: the labels (one a position) of the group
-- column score_cp_sum: the sum of their centipawn scores, side to move's view
select
    kind, engine_id, depth, side_to_move, in_check, in_game, result, mate, bound, scored,
    with_best_move,
    sum(positions)::bigint as positions,
    sum(score_cp_sum)::bigint as score_cp_sum
from (
    select * from label_counts
    union all by name
    select * from label_counts_overlay
)
group by all
having sum(positions) <> 0 or sum(score_cp_sum) <> 0
