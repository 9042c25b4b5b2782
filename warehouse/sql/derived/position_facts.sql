-- depends: positions, moves, games
-- sorted by: position_key
-- kept in: positions
-- stored only: source_id, first_seen
-- One row per position with what the training views join in besides the label: its FEN and
-- side to move, whether the side to move is in check (positions.in_check), the lowest game it
-- was played in (null for EPD/FEN-only positions) and that game's result tag. Kept by
-- compact in the positions table itself (warehouse/derived.py): its files rewritten sorted by
-- key with these columns beside its own (source_id and first_seen, stored only: not in the
-- view), so every FEN is stored once; read from them while positions, moves and games are
-- unchanged since; computed from them by this query otherwise.
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
    g.result as game_result,
    p.source_id,
    p.first_seen
from positions p
left join first_game f using (position_key)
left join games g using (game_id)
