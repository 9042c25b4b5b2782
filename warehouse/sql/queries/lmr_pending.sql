-- depends: search_log, lmr_examples
-- Logged LMR decisions of one lmr-data run (run ids starting with $prefix) that have no
-- lmr_examples row yet, in key order.
select s.run_id, s.seq, s.fen, s.depth, s.move_no, s.depth_new, s.alpha, s.value, s.stat_eval,
    s.np_material_w, s.np_material_b
from search_log s
anti join lmr_examples e using (run_id, seq)
where starts_with(s.run_id, $prefix)
order by s.run_id, s.seq
