-- depends: lmr_examples
-- The regression rows of paper 003 Table 6.1: labelled decisions that failed low when logged
-- (Ch.6 section 1) and whose re-search fails low at both the reduced and the full depth (A.3's
-- kept records); $data_run: one lmr-data run, or null for every run. In key order.
select run_id, seq, depth, move_no, alpha, stat_eval, np_material_w, np_material_b,
    depth_full, label_table, label_code, label_engine
from lmr_examples
where not mate and not capped and value <= alpha and fail_low_reduced and fail_low_full
    and ($data_run is null or data_run = $data_run)
order by run_id, seq
