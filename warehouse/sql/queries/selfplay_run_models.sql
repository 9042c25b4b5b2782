-- depends: models
-- The policy_value versions a selfplay-train run registered, one per round, by round.
select cast(json_extract(config, '$.round') as integer) as round, model_id, version,
    artifact_path
from models
where kind = 'policy_value' and json_extract_string(config, '$.run_id') = $run_id
order by round
