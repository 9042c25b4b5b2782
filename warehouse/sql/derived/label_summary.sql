-- depends: labels, position_facts, pgn_annotations
-- grouped by: kind, engine_id, depth, side_to_move, in_check, in_game, result, mate, bound, scored, with_best_move
-- increments over: labels, positions
-- Labels and annotations counted per engine and depth and what a report over a whole depth
-- tells apart: kind ('label' or 'annotation', as nnue_examples has them), the side to move
-- and check (position_facts), whether the position was played in a game, the result from the
-- side to move's view as nnue_examples gives it (the label's imported result, else its lowest
-- game's), whether the score is a mate, its bound, whether there is a centipawn score and a
-- best move; with the labels (positions) and the sum of their centipawn scores (side to move's view). A
-- report over a whole depth (label_scores_by_side, nnue_examples_depth) adds up a few rows of
-- it instead of joining every label with its position. Kept by compact beside the lake
-- (warehouse/derived.py); after labels (and positions) are only added it is brought up to date
-- from the new labels (increments/label_summary.sql); otherwise computed whole.
with facts as (     -- what the groups need only: a smaller hash table than the game ids
    select position_key, side_to_move, in_check, game_id is not null as in_game, game_result
    from position_facts
),
scores as (
    select 'label' as kind, position_key, engine_id, depth, score_cp, null::integer as white_cp,
        score_mate is not null as mate, bound, best_move is not null as with_best_move,
        result as label_result
    from labels
    union all
    select 'annotation', position_key, engine_id, depth, null, white_cp, false, null,
        best_move is not null, null
    from pgn_annotations
),
joined as (
    select
        l.kind,
        l.engine_id,
        l.depth,
        f.side_to_move,
        f.in_check,
        f.in_game,
        coalesce(l.label_result::double, case
            when f.game_result = '1/2-1/2' then 0.5
            when f.game_result = '1-0' then (case when f.side_to_move = 'w' then 1.0 else 0.0 end)
            when f.game_result = '0-1' then (case when f.side_to_move = 'b' then 1.0 else 0.0 end)
        end::double) as result,
        l.mate,
        l.bound,
        case when l.white_cp is null then l.score_cp
            when f.side_to_move = 'w' then l.white_cp
            else -l.white_cp end as score_cp,
        l.with_best_move
    from scores l
    join facts f using (position_key)
)
select
    kind, engine_id, depth, side_to_move, in_check, in_game, result, mate, bound,
    score_cp is not null as scored, with_best_move,
    count(*) as positions,
    coalesce(sum(score_cp), 0)::bigint as score_cp_sum
from joined
group by all
