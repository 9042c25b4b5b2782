-- depends: moves, games
-- sorted by: position_key
-- The games' [%eval] annotations as labels (paper 002's training data from annotated games):
-- one row per position, annotator and depth, the score White's (as annotated: the position's
-- side to move is joined in where it is read) and the move played from the position as its
-- best move, from the first game (lowest game_id, then ply) that annotates it. An annotation
-- [%eval] after a move scores the position the move reached, whose next move is the one played
-- from it; an annotated last move (no move after it) gives none. engine_id is
-- 'pgn:<Annotator>' ('pgn:[%eval]' without the tag), depth the Annotator tag's 'depth N', else
-- 0. Kept by compact beside the lake (warehouse/derived.py), sorted by key (a key range reads
-- the row groups that hold it; the key delta-encoded); read by nnue_examples and
-- label_counts_overlay.
-- (the tables are named up front not materialized: each is read twice)
with moves as not materialized (select * from moves),
games as not materialized (select * from games)
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
