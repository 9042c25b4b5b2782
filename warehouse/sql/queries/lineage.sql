-- Lineage: which labels trained the model that scored a rating ($model: a model id such as
-- 'nnue@3', or null for every rated model). One row per rating of a player that loads the
-- model and per source file of the model's data set, linking:
--   rating (latest table of each tournament) -> tournament player -> engine (engines row,
--   model column) -> model version -> its data set (view, query parameters, label engine and
--   depths, lake table versions read, row counts, position-key hash) -> the files the
--   labelled positions were first ingested from.
-- positions: positions the label engine had scored at the data set's depths (mate scores left
-- out) when the data set was taken, per file; the view's own filters (in check) are applied
-- after, so their sum is at least train_rows + validation_rows. A data set of games' [%eval]
-- annotations (label engine 'pgn:...') counts the annotated positions of nnue_examples.
-- A data set of several label sources names them 'A;B' in label_engine_id.
with ratings as (select * from latest_ratings),
players as (select * from tournament_players),
engines as (select distinct engine_id, model from engines),
models as (select * from models),
datasets as (select * from model_datasets),
labels as (select * from labels),
annotated as (select * from nnue_examples where engine_id like 'pgn:%'),
positions as (select * from positions),
sources as (select * from sources),
rated as (
    select r.source as rating_source, r.tournament_id, r.player, r.rank, r.elo, r.plus,
        r.minus, r.games, p.engine_id, e.model as model_id
    from ratings r
    join players p using (tournament_id, player)
    join engines e using (engine_id)
    where e.model is not null and ($model is null or e.model = $model)
),
used as (
    select distinct d.model_id, l.position_key
    from datasets d
    join labels l
        on list_contains(string_split(d.label_engine_id, ';'), l.engine_id)
        and list_contains(d.label_depths, l.depth)
        and l.labelled_at <= d.recorded_at
        and l.score_mate is null and l.score_cp is not null
    where d.model_id in (select model_id from rated)
    union
    select d.model_id, a.position_key
    from datasets d
    join annotated a
        on list_contains(string_split(d.label_engine_id, ';'), a.engine_id)
        and list_contains(d.label_depths, a.depth)
    where d.model_id in (select model_id from rated)
),
files as (
    select u.model_id, s.path as source_path, s.format as source_format,
        count(*) as positions
    from used u
    join positions p using (position_key)
    join sources s on s.source_id = p.source_id
    group by all
)
select
    r.rating_source, r.player, r.rank, round(r.elo, 1) as elo, round(r.plus, 1) as plus,
    round(r.minus, 1) as minus, r.games, r.engine_id, r.model_id, m.name as model_name,
    m.artifact_sha256, d.view, d.query, d.parameters, d.label_engine_id, d.label_depths,
    d.table_versions, d.train_rows, d.validation_rows, d.position_keys_hash,
    f.source_path, f.source_format, f.positions
from rated r
join models m using (model_id)
join datasets d using (model_id)
left join files f using (model_id)
order by r.elo desc, r.rating_source, f.positions desc, f.source_path
