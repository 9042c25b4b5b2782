-- Baseline: best_move_disagreement as it was before the summaries compact keeps (label_summary,
-- label_depth_pairs: issue 51 §2), reading every label of the depth joined
-- with the other depth's.
-- How often one engine ($engine_id) changes its best move between two depths ($shallow,
-- $deep): positions labelled at both with a best move at both, those whose best moves differ,
-- and the mean absolute score change (centipawns, side to move's view) of each group.
with shallow as (
    select position_key, best_move, score_cp from labels
    where engine_id = $engine_id and depth = $shallow and best_move is not null
),
deep as (
    select position_key, best_move, score_cp from labels
    where engine_id = $engine_id and depth = $deep and best_move is not null
)
select
    count(*) as positions,
    count(*) filter (where s.best_move <> d.best_move) as disagree,
    round(100.0 * count(*) filter (where s.best_move <> d.best_move) / nullif(count(*), 0), 2)
        as disagree_pct,
    round(avg(abs(d.score_cp - s.score_cp)) filter (where s.best_move <> d.best_move), 1)
        as score_change_when_disagree,
    round(avg(abs(d.score_cp - s.score_cp)) filter (where s.best_move = d.best_move), 1)
        as score_change_when_agree
from shallow s
join deep d using (position_key)
