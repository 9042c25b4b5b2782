-- The value head's decisive share (|v| > 0.5) against the share of decisive targets at each
-- checkpoint of the self-play run a policy_value version ($model) belongs to.
with models as (select * from models),
metrics as (
    select model_id, extra,
        row_number() over (partition by model_id order by epoch desc, step desc,
                           recorded_at desc) as latest
    from model_metrics
),
run as (
    select json_extract_string(config, '$.run_id') as run_id
    from models
    where model_id = $model
)
select cast(json_extract(m.config, '$.round') as integer) as round, m.model_id, m.version,
    cast(json_extract(x.extra, '$.decisive_share') as double) as decisive_share,
    cast(json_extract(x.extra, '$.decisive_target_share') as double) as decisive_target_share
from models m
left join metrics x on x.model_id = m.model_id and x.latest = 1
where m.kind = 'policy_value'
    and json_extract_string(m.config, '$.run_id') = (select run_id from run)
order by round, m.version
