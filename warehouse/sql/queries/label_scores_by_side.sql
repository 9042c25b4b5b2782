-- Labels of one engine ($engine_id) at one depth ($depth) joined with their positions: per
-- side to move, the positions, their mean score (side to move's view, centipawns; mates left
-- out) and how many are mate scores. (Added up from label_summary, which compact keeps: no
-- label is read where it is current.)
select
    side_to_move,
    sum(positions)::bigint as positions,
    round(sum(score_cp_sum) / nullif(sum(positions) filter (where scored), 0), 1) as mean_score_cp,
    coalesce(sum(positions) filter (where mate), 0)::bigint as mates
from label_summary
where kind = 'label' and engine_id = $engine_id and depth = $depth
group by all
order by side_to_move
