-- depends: labels, position_facts, pgn_annotations
-- grouped by: kind, engine_id, depth, side_to_move, in_check, in_game, result, mate, bound, scored, with_best_move
-- What label_counts (every label by its position's facts as kept in positions' files) lacks
-- for the facts as they are now, and the annotations: the labels of each position
-- position_facts' overlay holds (a new position, or one whose lowest game changed since
-- position_facts was computed whole) counted by the overlay's facts, less their counts by the
-- kept facts (negative counts); and every pgn_annotations row (kind 'annotation', its score
-- turned to the side to move's view) by its position's facts now. Grouped and summed as
-- label_counts; the view label_summary adds both up. Kept by compact beside the lake and
-- computed whole when its inputs change (warehouse/derived.py), in one query: its joins hold
-- the overlay's positions and their labels only (at most 1/8 of the positions: then
-- position_facts is computed whole and the overlay is empty) and the annotations. (Key range
-- by key range it took 35 CPU s at 100M against 21: each range reads every label's key.)
-- (each side reduced to what the groups need before the joins: smaller hash tables)
with kept as (
    select position_key, side_to_move, in_check, game_id is not null as in_game,
        side_result(game_result, side_to_move) as game_side_result
    from position_facts_kept
),
overlay as (
    select position_key, side_to_move, in_check, game_id is not null as in_game,
        side_result(game_result, side_to_move) as game_side_result
    from position_facts_overlay
),
now as (
    select position_key, side_to_move, in_check, game_id is not null as in_game,
        side_result(game_result, side_to_move) as game_side_result
    from position_facts
),
counted as (
    select position_key, engine_id, depth, result::double as label_result,
        score_mate is not null as mate, bound, score_cp, best_move is not null as with_best_move
    from labels
    where position_key in (select position_key from overlay)
),
scored as (
    -- the overlay's labels by the overlay's facts (+1) and by the kept facts (-1), and the
    -- annotations by the facts now
    select 1 as sign, 'label' as kind, l.engine_id, l.depth, l.score_cp, l.mate, l.bound,
        l.with_best_move, l.label_result, f.*
    from counted l
    join overlay f using (position_key)
    union all
    select -1, 'label', l.engine_id, l.depth, l.score_cp, l.mate, l.bound, l.with_best_move,
        l.label_result, f.*
    from counted l
    join kept f using (position_key)
    union all
    select 1, 'annotation', a.engine_id, a.depth,
        case when f.side_to_move = 'w' then a.white_cp else -a.white_cp end, false, null,
        a.best_move is not null, null, f.*
    from pgn_annotations a
    join now f using (position_key)
)
select
    kind,
    engine_id,
    depth,
    side_to_move,
    in_check,
    in_game,
    coalesce(label_result, game_side_result) as result,
    mate,
    bound,
    score_cp is not null as scored,
    with_best_move,
    sum(sign) as positions,
    coalesce(sum(sign * score_cp), 0)::bigint as score_cp_sum
from scored
group by all
having sum(sign) <> 0 or sum(sign * score_cp) <> 0
