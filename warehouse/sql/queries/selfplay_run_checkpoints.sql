-- depends: models, model_metrics
-- The policy_value versions of a selfplay-train run by round, with the value head's figures
-- of each version's last validation: the share of decisive predictions (|v| > 0.5) next to
-- the share of decisive targets, the policy's accuracy and the value MSE.
with metrics as (
    select model_id, extra,
        row_number() over (partition by model_id order by epoch desc, step desc,
                           recorded_at desc) as latest
    from model_metrics
)
select cast(json_extract(m.config, '$.round') as integer) as round, m.model_id, m.version,
    cast(json_extract(x.extra, '$.decisive_share') as double) as decisive_share,
    cast(json_extract(x.extra, '$.decisive_target_share') as double) as decisive_target_share,
    cast(json_extract(x.extra, '$.policy_accuracy') as double) as policy_accuracy,
    cast(json_extract(x.extra, '$.value_mse') as double) as value_mse
from models m
left join metrics x on x.model_id = m.model_id and x.latest = 1
where m.kind = 'policy_value' and json_extract_string(m.config, '$.run_id') = $run_id
order by round
