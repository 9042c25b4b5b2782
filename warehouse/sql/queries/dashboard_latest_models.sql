-- The latest version of each model kind with its status and its last evaluation (the SPRT
-- verdict, the Elo against the baseline and the Stockfish-ladder rating).
with status as (select * from model_status),
events as (select * from model_events),
evaluated as (
    select distinct on (model_id) model_id, payload, recorded_at
    from events
    where event = 'evaluated'
    order by model_id, recorded_at desc
)
select distinct on (s.kind) s.kind, s.model_id, coalesce(s.name, s.model_id) as name,
    s.status, s.status_at, s.epochs, s.val_loss,
    e.payload ->> 'sprt_decision' as sprt,
    round(cast(e.payload ->> 'elo' as double), 1) as elo,
    round(cast(e.payload ->> 'ladder_elo' as double)) as ladder_elo,
    e.recorded_at as evaluated_at
from status s
left join evaluated e using (model_id)
order by s.kind, s.version desc
