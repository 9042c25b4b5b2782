-- Baseline: label_scores_by_side as it was before position_facts (main's query).
-- Labels of one engine ($engine_id) at one depth ($depth) joined with their positions: per
-- side to move, the positions, their mean score (side to move's view, centipawns; mates left
-- out) and how many are mate scores.
select
    split_part(p.fen, ' ', 2) as side_to_move,
    count(*) as positions,
    round(avg(l.score_cp), 1) as mean_score_cp,
    count(l.score_mate) as mates
from labels l
join positions p using (position_key)
where l.engine_id = $engine_id and l.depth = $depth
group by all
order by side_to_move
