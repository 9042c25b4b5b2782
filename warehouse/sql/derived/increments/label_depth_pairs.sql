-- The rows label_depth_pairs adds when labels were only added (warehouse/refresh.py
-- extend_summary), over labels_new (the rows in the labels files added since): the pairs of
-- the labels of each (position, engine) a new label has, less those of its labels held
-- before (the pairs counted already), as rows with signed counts that the summary adds.
with touched as (
    select distinct position_key, engine_id from labels_new where best_move is not null
),
now as (
    select l.position_key, l.engine_id, l.depth, l.best_move, l.score_cp
    from labels l
    semi join touched using (position_key, engine_id)
    where l.best_move is not null
),
held as (
    select n.*
    from now n
    anti join labels_new a using (position_key, engine_id, depth)
),
pairs as (
    select 1 as sign, s.engine_id, s.depth as shallow, d.depth as deep,
        s.best_move = d.best_move as agree, d.score_cp - s.score_cp as change
    from now s
    join now d on d.position_key = s.position_key and d.engine_id = s.engine_id
        and d.depth >= s.depth
    union all
    select -1, s.engine_id, s.depth, d.depth, s.best_move = d.best_move,
        d.score_cp - s.score_cp
    from held s
    join held d on d.position_key = s.position_key and d.engine_id = s.engine_id
        and d.depth >= s.depth
)
select
    engine_id, shallow, deep, agree,
    sum(sign) as positions,
    coalesce(sum(sign) filter (where change is not null), 0) as changes,
    coalesce(sum(sign * abs(change)), 0)::bigint as change_sum
from pairs
group by all
