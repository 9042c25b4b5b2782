-- depends: labels
-- grouped by: engine_id, shallow, deep, agree
-- by key range
-- increments over: labels
-- Pairs of one engine's labels of a position at two depths (shallow <= deep; a label paired
-- with itself at shallow = deep), both with a best move, counted per engine, depth pair and
-- whether the best moves agree, with the sum (and count) of the absolute changes of the
-- centipawn score between them. best_move_disagreement adds up the rows of one depth pair
-- instead of joining a depth's labels with another's. Kept by compact beside the lake
-- (warehouse/derived.py); after labels are only added it is brought up to date from the pairs
-- the new labels make (increments/label_depth_pairs.sql); otherwise computed whole.
with moved as (
    select position_key, engine_id, depth, best_move, score_cp
    from labels
    where best_move is not null
)
select
    s.engine_id,
    s.depth as shallow,
    d.depth as deep,
    s.best_move = d.best_move as agree,
    count(*) as positions,
    count(d.score_cp - s.score_cp) as changes,
    coalesce(sum(abs(d.score_cp - s.score_cp)), 0)::bigint as change_sum
from moved s
join moved d on d.position_key = s.position_key and d.engine_id = s.engine_id
    and d.depth >= s.depth
group by all
