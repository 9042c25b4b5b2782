-- Baseline: nnue_examples_depth as it was before the summaries compact keeps (label_summary,
-- label_depth_pairs: issue 51 §2), reading every label of the depth joined
-- with position_facts, the annotations computed from the moves (the view then, inlined).
with nnue_examples as (
    with labels as not materialized (select * from labels),
    moves as not materialized (select * from moves),
    games as not materialized (select * from games),
    annotations as (
        select
            after.position_key,
            'pgn:' || coalesce(json_extract_string(g.tags, '$.Annotator'), '[%eval]') as engine_id,
            coalesce(try_cast(nullif(regexp_extract(json_extract_string(g.tags, '$.Annotator'),
                'depth (\d+)', 1), '') as integer), 0) as depth,
            m.eval_cp as white_cp,
            after.uci as best_move
        from moves m
        join moves after on after.game_id = m.game_id and after.ply = m.ply + 1
        join games g on g.game_id = m.game_id
        where m.eval_cp is not null
        qualify row_number() over (partition by after.position_key, engine_id, depth
                                   order by m.game_id, m.ply) = 1
    ),
    scores as (
        -- labels carry the side to move's score; annotations White's, turned round below where
        -- the position (and so the side to move) is joined anyway
        select position_key, engine_id, depth, score_cp, null::integer as white_cp, best_move,
            result as label_result
        from labels
        where score_cp is not null and score_mate is null and bound is null
        union all
        select position_key, engine_id, depth, null, white_cp, best_move, null
        from annotations
    ),
    examples as (
        select
            l.position_key,
            p.fen,
            p.side_to_move,
            l.engine_id,
            l.depth,
            case when l.white_cp is null then l.score_cp
                when p.side_to_move = 'w' then l.white_cp
                else -l.white_cp end as score_cp,
            l.best_move,
            l.label_result,
            p.game_id,
            p.game_result,
            p.in_check
        from scores l
        join position_facts p using (position_key)
    )
    select
        position_key,
        fen,
        side_to_move,
        engine_id,
        depth,
        score_cp,
        coalesce(label_result::double, case
            when game_result = '1/2-1/2' then 0.5
            when game_result = '1-0' then (case when side_to_move = 'w' then 1.0 else 0.0 end)
            when game_result = '0-1' then (case when side_to_move = 'b' then 1.0 else 0.0 end)
        end::double) as result,
        game_id,
        coalesce(game_id, 'position:' || position_key::varchar) as split_key,
        in_check,
        best_move
    from examples
)
select
    count(*) as examples,
    count(game_id) as with_game,
    count(result) as with_result,
    count(*) filter (where in_check) as in_check,
    round(avg(score_cp), 1) as mean_score_cp
from nnue_examples
where engine_id = $engine_id and depth = $depth
