-- The Elo-against-positions curve: each evaluated model version's Elo against the baseline and
-- search limit it was evaluated at (the model_evaluations view: its latest evaluation of
-- each), with the 95% interval, beside the training positions it learnt from
-- (model_datasets.train_rows) and its architecture from the training config ($kind: one
-- kind, or null for all).
with evaluations as (select * from model_evaluations),
datasets as (select * from model_datasets),
models as (select * from models)
select e.model_id, e.kind, d.train_rows,
    coalesce(case when m.config ->> 'arch' = 'psq768'
                  then 'psq768-' || (m.config ->> 'hidden') || ' ' || (m.config ->> 'activation')
                  else m.config ->> 'arch' end,
             e.kind) as arch,
    e.against, e.limits, e.elo, e.elo_lower, e.elo_upper, e.games, e.recorded_at
from evaluations e
join datasets d using (model_id)
left join models m using (model_id)
where $kind is null or e.kind = $kind
order by d.train_rows, e.model_id
