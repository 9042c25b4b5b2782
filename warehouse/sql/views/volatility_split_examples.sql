-- depends: volatility_examples, moves
-- Paper 003's volatility examples with the split unit of the NNUE data set: split_key is the
-- lowest game the position was played in ('position:<key>' for EPD/FEN-only positions), so
-- the same md5_number(split_key) % 1000 test sends the same games to validation in both data
-- sets and a game's positions never straddle the splits.
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
-- column split_key: the lowest game the position was played in, or 'position:<key>': the split unit
with first_game as (
    select position_key, min(game_id) as game_id
    from moves
    group by position_key
)
select
    e.*,
    coalesce(f.game_id, 'position:' || e.position_key::varchar) as split_key
from volatility_examples e
left join first_game f using (position_key)
