-- The NNUE data set of one or more label engines ($engine_ids, a list) at one depth, with its
-- split, as written once per training run into the run's folder (every epoch then reads that
-- file, and a resumed run trains on the same rows). A position several of the engines
-- labelled appears once, with the label of the first engine in the list (an anti-join on the
-- keys; with one engine its condition is false and DuckDB drops it). A position is in the
-- validation split when md5_number(split_key) % 1000 is below the permille (its split_key is
-- its lowest game id): validation and training never share a game. md5_number's 128-bit
-- modulo costs more than the rest of the query, so it is computed from its two 64-bit halves
-- (md5_number = upper + lower * 2^64, and 2^64 % 1000 = 616): the same number, 2.5x faster.
-- A training game is kept when another three digits of its hash, (md5_number_lower //
-- 1000) % 1000, are below $train_permille (1000: every game): a data-size knob whose smaller
-- subsets are inside the larger ones, with the validation split unchanged.
-- best_move goes along for the trainer's quiet-position filter (it needs the board).
-- $key_lo..$key_hi: the key range (unsigned) of this query; the snapshot is written range by
-- range in ascending order (pipelines/train/dataset.py: write_snapshot), each range joining
-- its own labels and position_facts (both sorted by key: their other row groups are skipped).
with examples as not materialized (
    select *, list_position($engine_ids, engine_id) as engine_rank
    from nnue_examples
    where list_contains($engine_ids, engine_id)
        and depth = $depth
        and in_check is not true
        and position_key between $key_lo and $key_hi
),
earlier as (
    select position_key, min(engine_rank) as engine_rank
    from examples
    where len($engine_ids) > 1
    group by position_key
)
select * exclude (keep) from (select
    e.position_key,
    e.fen,
    e.score_cp,
    e.result,
    e.split_key,
    e.in_check,
    e.best_move,
    ((md5_number_upper(e.split_key) % 1000) + (md5_number_lower(e.split_key) % 1000) * 616)
        % 1000 < $validation_permille as validation,
    (md5_number_lower(e.split_key) // 1000) % 1000 < $train_permille as keep
from examples e
anti join earlier f on f.position_key = e.position_key and f.engine_rank < e.engine_rank)
where validation or keep
order by position_key
