-- Rows per split of a run's NNUE snapshot and an order-independent content hash of its
-- position keys, recorded in model_datasets.
select
    validation,
    count(*) as positions,
    bit_xor((md5_number(position_key::varchar) % 18446744073709551616)::ubigint) as keys_hash
from read_parquet($snapshot)
group by all
order by validation
