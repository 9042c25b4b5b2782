-- depends: position_facts, pgn_annotations, labels
-- NNUE training examples (paper 002): one row per labelled position, engine and depth with a
-- centipawn score from the side to move's view (mate scores and bounds left out: a
-- lowerbound/upperbound label is a limit, not a score to fit). game_id is the lowest
-- game the position was played in (null for EPD/FEN-only positions): the split unit. result
-- is that game's result from the side to move's view (1, 0.5, 0; null when unknown), or the
-- result imported training data carries with its label (labels.result), which comes first.
-- in_check is the positions table's (read from the board when the position was stored); null
-- for positions stored before that column existed, where the reader checks the board.
-- best_move is the label's (UCI; null when the engine gave none): the trainer can keep quiet
-- positions only, those whose best move is no capture or promotion.
-- column position_key: positions.position_key
-- column fen: the position, normalised FEN
-- column side_to_move: w or b
-- column engine_id: the labelling engine, or pgn:<Annotator> for games' [%eval] annotations
-- column depth: the label depth (annotations: the Annotator tag's 'depth N', else 0)
-- column score_cp: the score in centipawns, side to move's view (mate scores left out)
-- column result: 1, 0.5 or 0 for the side to move: the label's imported result, else the game's
-- column game_id: the lowest game the position was played in; null for EPD/FEN-only positions
-- column split_key: game_id, or 'position:<key>' without one: the unit of the train/validation split
-- column in_check: the side to move is in check; null when unknown (stored before positions.in_check)
-- column best_move: the label's best move, UCI; null when the engine gave none
-- The FEN, side to move, check, lowest game and its result come from position_facts (a
-- derived table: kept by compact, see warehouse/derived.py), one join per label.
-- The annotations come from pgn_annotations (a derived table: kept by compact like
-- position_facts).
with labels as not materialized (select * from labels),
annotations as (select * from pgn_annotations),
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
    coalesce(label_result::double, side_result(game_result, side_to_move)) as result,
    game_id,
    coalesce(game_id, 'position:' || position_key::varchar) as split_key,
    in_check,
    best_move
from examples
