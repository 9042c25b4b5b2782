-- The nnue_examples view at one engine ($engine_id) and depth ($depth): examples, those with
-- a game, with a result, in check, and their mean score (side to move's view, centipawns).
-- (Added up from label_summary, which compact keeps: its rows that nnue_examples holds, the
-- annotations and the labels with a centipawn score, neither mate nor bound.)
with examples as (
    select *
    from label_summary
    where engine_id = $engine_id and depth = $depth
      and (kind = 'annotation' or (scored and not mate and bound is null))
)
select
    coalesce(sum(positions), 0)::bigint as examples,
    coalesce(sum(positions) filter (where in_game), 0)::bigint as with_game,
    coalesce(sum(positions) filter (where result is not null), 0)::bigint as with_result,
    coalesce(sum(positions) filter (where in_check), 0)::bigint as in_check,
    round(sum(score_cp_sum) / nullif(sum(positions), 0), 1) as mean_score_cp
from examples
