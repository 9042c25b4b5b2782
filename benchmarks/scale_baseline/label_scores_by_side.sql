-- Baseline: label_scores_by_side as it was before the summaries compact keeps (label_summary,
-- label_depth_pairs: issue 51 §2), reading every label of the depth joined with
-- position_facts.
-- Labels of one engine ($engine_id) at one depth ($depth) joined with their positions: per
-- side to move, the positions, their mean score (side to move's view, centipawns; mates left
-- out) and how many are mate scores. (The side to move from position_facts: no FEN is read.)
select
    p.side_to_move,
    count(*) as positions,
    round(avg(l.score_cp), 1) as mean_score_cp,
    count(l.score_mate) as mates
from labels l
join position_facts p using (position_key)
where l.engine_id = $engine_id and l.depth = $depth
group by all
order by side_to_move
