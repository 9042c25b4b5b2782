-- One split of a run's NNUE snapshot (nnue_snapshot), shuffled per epoch by $shuffle_seed.
select position_key, fen, score_cp, result, split_key, in_check
from read_parquet($snapshot)
where validation = $validation
order by hash(position_key, $shuffle_seed)
limit $max_positions
