-- What the import of one file stored, counted in the warehouse (after a resumed import, whose
-- earlier run stored part of it): the positions it saw first, the labels it stored (their
-- run_id is the file's source_id) and its errors. $source_id: the file's SHA-256.
with positions as (select * from positions),
labels as (select * from labels),
ingest_errors as (select * from ingest_errors)
select
    (select count(*) from positions where source_id = $source_id) as new_positions,
    (select count(*) from labels where run_id = $source_id) as labels,
    (select count(*) from ingest_errors where source_id = $source_id) as errors
