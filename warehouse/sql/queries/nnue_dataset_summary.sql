-- Rows per split and an order-independent content hash of the position keys of the NNUE
-- data set (same filters as nnue_dataset), recorded in model_datasets.
select
    (md5_number(split_key) % 1000)::integer < $validation_permille as validation,
    count(*) as positions,
    bit_xor((md5_number(position_key::varchar) % 18446744073709551616)::ubigint) as keys_hash
from nnue_examples
where engine_id = $engine_id
    and depth = $depth
    and in_check is not true
group by all
order by validation
