-- depends: volatility_split_examples
-- One split of paper 003's volatility data set for a label engine, shuffled per epoch:
-- stable = |V7 - V6| < $beta (formula 3.1), inputs delta_value = V6 - V5 and pv_change (and v6
-- for the value input set).
select position_key, fen, delta_value, pv_change, v6, change_67 < $beta as stable, split_key
from volatility_split_examples
where engine_id = $engine_id
    and ((md5_number(split_key) % 1000)::integer < $validation_permille) = $validation
order by hash(position_key, $shuffle_seed)
limit $max_positions
