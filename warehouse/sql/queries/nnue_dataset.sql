-- One key range ($key_lo..$key_hi, unsigned) of one split of a run's NNUE snapshot
-- (nnue_snapshot, sorted by position_key: the range reads its own row groups), shuffled per
-- epoch by $shuffle_seed. $hash_cutoff: the largest hash of the rows the whole split's
-- `order by hash limit $max_positions` keeps (pipelines/train/dataset.py: range_parameters).
select position_key, fen, score_cp, result, split_key, in_check
from read_parquet($snapshot)
where validation = $validation
    and position_key between $key_lo and $key_hi
    and hash(position_key, $shuffle_seed) <= $hash_cutoff
order by hash(position_key, $shuffle_seed)
limit $max_positions
