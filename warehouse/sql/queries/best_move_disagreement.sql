-- How often one engine ($engine_id) changes its best move between two depths ($shallow,
-- $deep): positions labelled at both with a best move at both, those whose best moves differ,
-- and the mean absolute score change (centipawns, side to move's view) of each group.
-- (Added up from label_depth_pairs, which compact keeps: no label is read where it is current.)
with pairs as (
    select agree, positions, changes, change_sum
    from label_depth_pairs
    where engine_id = $engine_id and shallow = least($shallow, $deep)
      and deep = greatest($shallow, $deep)
),
totals as (
    select
        coalesce(sum(positions), 0)::bigint as positions,
        coalesce(sum(positions) filter (where not agree), 0)::bigint as disagree,
        sum(change_sum) filter (where not agree)
            / nullif(sum(changes) filter (where not agree), 0) as change_disagree,
        sum(change_sum) filter (where agree)
            / nullif(sum(changes) filter (where agree), 0) as change_agree
    from pairs
)
select
    positions,
    disagree,
    round(100.0 * disagree / nullif(positions, 0), 2) as disagree_pct,
    round(change_disagree, 1) as score_change_when_disagree,
    round(change_agree, 1) as score_change_when_agree
from totals
