-- depends: search_log, lmr_examples
-- One lmr-data run next to paper 003's figures: the share of logged decisions that failed
-- low, and over the kept examples (fail low at the reduced and at the full depth) the mean
-- labels and full depth and the share labelled full - 1 (no re-search depth failed high, so
-- the label is the largest possible and a function of the depth alone); the run's logged
-- decisions, and of its examples those labelled, those whose re-search ran out of nodes
-- (capped) and those that found a mate (no label either).
with logged as (
    select count(*) as logged,
        avg(case when value <= alpha then 1.0 else 0.0 end) as fail_low_share
    from search_log
    where starts_with(run_id, $prefix)
),
examples as (
    select * from lmr_examples where data_run = $data_run
),
kept as (
    select * from examples where value <= alpha and fail_low_reduced and fail_low_full
)
select (select logged from logged) as logged,
    (select count(*) from examples where label_table is not null) as labelled,
    (select count(*) from examples where capped) as capped,
    (select count(*) from examples where mate and not capped) as mates,
    (select count(*) from examples) as examples,
    (select fail_low_share from logged) as fail_low_share,
    (select count(*) from kept) as kept,
    (select avg(label_table) from kept) as mean_label_table,
    (select avg(label_code) from kept) as mean_label_code,
    (select avg(depth_full) from kept) as mean_full_depth,
    (select avg(case when label_table = depth_full - 1 then 1.0 else 0.0 end) from kept)
        as at_max_share
