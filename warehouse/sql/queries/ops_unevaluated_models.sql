-- Finished model versions with no 'evaluated' (or 'retired') event, oldest first: what the
-- scheduled evaluation runs next.
with models as (select * from models),
events as (select * from model_events),
done as (
    select distinct model_id
    from events
    where event in ('evaluated', 'retired')
)
select m.model_id, m.kind, m.version, m.config
from models m
where m.model_id not in (select model_id from done)
order by m.created_at, m.model_id
