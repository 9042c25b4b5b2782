-- Models of one kind by their latest promotion, most recent first (KIND@best).
select model_id, max(recorded_at) as promoted_at
from model_events
where event = 'promoted' and split_part(model_id, '@', 1) = $kind
group by model_id
order by promoted_at desc
