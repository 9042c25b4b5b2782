-- Rows per split of a run's NNUE snapshot and an order-independent content hash of its
-- position keys, recorded in model_datasets (md5_number_upper is md5_number % 2^64, without
-- its 128-bit modulo).
select
    validation,
    count(*) as positions,
    bit_xor(md5_number_upper(position_key::varchar)) as keys_hash
from read_parquet($snapshot)
group by all
order by validation
