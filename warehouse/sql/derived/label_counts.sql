-- depends: labels, position_facts
-- grouped by: kind, engine_id, depth, side_to_move, in_check, in_game, result, mate, bound, scored, with_best_move
-- by key range
-- increments over: labels, positions, moves, games
-- linear in: labels
-- Every label counted by what a report over a whole depth tells apart, its position's facts
-- as position_facts is kept in positions' files (position_facts_kept: as computed whole last,
-- the overlay's changes since not applied; label_counts_overlay corrects the labels of the
-- positions they change): the side to move, check, whether the position was played in a
-- game, the result from the side to move's view as nnue_examples gives it (the label's
-- imported result, else its lowest game's), whether the score is a mate, its bound, whether
-- there is a centipawn score and a best move; with the labels (positions) and the sum of
-- their centipawn scores (side to move's view). The view label_summary adds it up with
-- label_counts_overlay. Kept by compact beside the lake (warehouse/derived.py): while
-- position_facts' kept files are the same, rows added to its inputs only add the new labels'
-- counts (the query over them: it is linear in labels); otherwise computed whole.
-- (each side reduced to what the groups need before the join: a smaller hash table)
with facts as (
    select position_key, side_to_move, in_check, game_id is not null as in_game,
        side_result(game_result, side_to_move) as game_side_result
    from position_facts_kept
),
counted as (
    select position_key, engine_id, depth, result::double as label_result,
        score_mate is not null as mate, bound, score_cp, best_move is not null as with_best_move
    from labels
)
select
    'label' as kind,
    l.engine_id,
    l.depth,
    f.side_to_move,
    f.in_check,
    f.in_game,
    coalesce(l.label_result, f.game_side_result) as result,
    l.mate,
    l.bound,
    l.score_cp is not null as scored,
    l.with_best_move,
    count(*) as positions,
    coalesce(sum(l.score_cp), 0)::bigint as score_cp_sum
from counted l
join facts f using (position_key)
group by all
