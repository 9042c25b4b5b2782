-- depends: volatility_split_examples
-- Rows, stable share and an order-independent hash of the position keys per split of the
-- volatility data set (same filters as volatility_dataset), recorded in model_datasets.
select
    (md5_number(split_key) % 1000)::integer < $validation_permille as validation,
    count(*) as positions,
    avg((change_67 < $beta)::int) as stable_share,
    bit_xor((md5_number(position_key::varchar) % 18446744073709551616)::ubigint) as keys_hash
from volatility_split_examples
where engine_id = $engine_id
group by all
order by validation
