-- The largest hash(position_key, $shuffle_seed) among the first $max_positions rows of one
-- split of a run's snapshot in that hash order: the rows an epoch keeps, range by range, are
-- those at or below it (a top-N of one 64-bit column: no FEN is read or sorted).
select max(h) as hash_cutoff
from (
    select hash(position_key, $shuffle_seed) as h
    from read_parquet($snapshot)
    where validation = $validation
    order by h
    limit $max_positions
)
