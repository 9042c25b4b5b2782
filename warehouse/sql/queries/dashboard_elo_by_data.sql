-- The Elo-against-positions curve: each evaluated model version's Elo against the baseline it
-- was evaluated against (its latest evaluated event per baseline), with the 95% interval,
-- beside the training positions it learnt from (model_datasets.train_rows) and its
-- architecture from the training config ($kind: one kind, or null for all).
with events as (select * from model_events),
datasets as (select * from model_datasets),
models as (select * from models),
evaluated as (
    select model_id, recorded_at, payload ->> 'against' as against,
        cast(payload ->> 'elo' as double) as elo,
        cast(payload ->> 'elo_lower' as double) as elo_lower,
        cast(payload ->> 'elo_upper' as double) as elo_upper,
        cast(payload ->> 'games' as integer) as games
    from events
    where event = 'evaluated' and payload ->> 'elo' is not null
    qualify row_number() over (partition by model_id, payload ->> 'against'
                               order by recorded_at desc) = 1
)
select e.model_id, split_part(e.model_id, '@', 1) as kind, d.train_rows,
    coalesce(case when m.config ->> 'arch' = 'psq768'
                  then 'psq768-' || (m.config ->> 'hidden') || ' ' || (m.config ->> 'activation')
                  else m.config ->> 'arch' end,
             split_part(e.model_id, '@', 1)) as arch,
    e.against, e.elo, e.elo_lower, e.elo_upper, e.games, e.recorded_at
from evaluated e
join datasets d using (model_id)
left join models m using (model_id)
where $kind is null or split_part(e.model_id, '@', 1) = $kind
order by d.train_rows, e.model_id
