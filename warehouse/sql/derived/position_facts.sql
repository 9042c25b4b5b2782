-- depends: positions, moves, games
-- sorted by: position_key
-- One row per position with what the training views join in besides the label: its FEN and
-- side to move, whether the side to move is in check (positions.in_check), the lowest game it
-- was played in (null for EPD/FEN-only positions) and that game's result tag. Kept by
-- compact as a file beside the lake (warehouse/derived.py) and read from it while positions,
-- moves and games are unchanged since; computed from them by this query otherwise.
with first_game as (
    select position_key, min(game_id) as game_id
    from moves
    group by position_key
)
select
    p.position_key,
    p.fen,
    split_part(p.fen, ' ', 2) as side_to_move,
    p.in_check,
    f.game_id,
    g.result as game_result
from positions p
left join first_game f using (position_key)
left join games g using (game_id)
