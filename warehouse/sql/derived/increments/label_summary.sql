-- The rows label_summary adds when labels (and positions) were only added (warehouse/refresh.py
-- extend_summary; games and moves unchanged, so each position held before keeps its facts and
-- annotations): the new labels' rows, over labels_new (the rows in the labels files added
-- since) and position_facts as it is now. A label's position is stored before it (every
-- writer does so), so no label held before gains a position among the new ones.
with facts as (     -- what the groups need only: a smaller hash table than the game ids
    select position_key, side_to_move, in_check, game_id is not null as in_game, game_result
    from position_facts
),
joined as (
    select
        'label' as kind,
        l.engine_id,
        l.depth,
        f.side_to_move,
        f.in_check,
        f.in_game,
        coalesce(l.result::double, case
            when f.game_result = '1/2-1/2' then 0.5
            when f.game_result = '1-0' then (case when f.side_to_move = 'w' then 1.0 else 0.0 end)
            when f.game_result = '0-1' then (case when f.side_to_move = 'b' then 1.0 else 0.0 end)
        end::double) as result,
        l.score_mate is not null as mate,
        l.bound,
        l.score_cp,
        l.best_move is not null as with_best_move
    from labels_new l
    join facts f using (position_key)
)
select
    kind, engine_id, depth, side_to_move, in_check, in_game, result, mate, bound,
    score_cp is not null as scored, with_best_move,
    count(*) as positions,
    coalesce(sum(score_cp), 0)::bigint as score_cp_sum
from joined
group by all
