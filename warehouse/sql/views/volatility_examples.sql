-- depends: labels, positions
-- Paper 003's volatility data set, one row per position and engine labelled at depths 5, 6, 7.
-- stable = |V7 - V6| < 18 cp (formula 3.1 with beta = 18); the network's extra inputs are
-- delta_value = V6 - V5 and pv_change = the best move changed from depth 5 to depth 6.
-- Mate scores count as +-10000 cp. change_67 lets a query pick another beta.
-- column position_key: positions.position_key
-- column fen: the position, normalised FEN
-- column engine_id: the labelling engine
-- column v5: the depth 5 score, side to move's view, cp (mates +-10000)
-- column v6: the depth 6 score, as v5
-- column v7: the depth 7 score, as v5
-- column delta_value: V6 - V5: a network input
-- column pv_change: the best move changed from depth 5 to depth 6: a network input
-- column change_67: |V7 - V6|, cp: compare it with another beta
-- column stable: |V7 - V6| < 18 cp: the label (formula 3.1, beta = 18)
with labels as (select * from labels),
positions as (select * from positions),
scored as (
    select
        position_key,
        engine_id,
        depth,
        best_move,
        case
            when score_mate is null then score_cp
            when score_mate > 0 then 10000
            else -10000
        end as value_cp
    from labels
    where depth in (5, 6, 7)
),
by_depth as (
    select
        position_key,
        engine_id,
        any_value(value_cp) filter (where depth = 5) as v5,
        any_value(value_cp) filter (where depth = 6) as v6,
        any_value(value_cp) filter (where depth = 7) as v7,
        any_value(best_move) filter (where depth = 5) as best_move_5,
        any_value(best_move) filter (where depth = 6) as best_move_6
    from scored
    group by position_key, engine_id
)
select
    d.position_key,
    p.fen,
    d.engine_id,
    d.v5,
    d.v6,
    d.v7,
    d.v6 - d.v5 as delta_value,
    d.best_move_5 is distinct from d.best_move_6 as pv_change,
    abs(d.v7 - d.v6) as change_67,
    abs(d.v7 - d.v6) < 18 as stable
from by_depth d
join positions p using (position_key)
where d.v5 is not null and d.v6 is not null and d.v7 is not null
