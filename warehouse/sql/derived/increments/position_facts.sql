-- The rows of position_facts that change when rows are added to positions, moves and games
-- (warehouse/refresh.py extend_kept: only added, never removed; compaction's rewrites keep
-- every row), over these views beside the lake's:
--   positions_new, moves_new, games_new  the rows in the files added since facts_before was
--       computed (a compaction's rewrite of older rows may be among them: their games are
--       no lower, and their results no different, than what facts_before holds)
--   facts_before  position_facts as computed then, with its stored-only columns and
--                 replaces (the row is in the files it was kept in: an overlay row for it
--                 replaces that one; a new position's row replaces none)
-- Each new position's row: its lowest game among every move (ingest writes a game's moves
-- before its positions, so some may be older than the position's file). And the row of each
-- position held before that a new move plays in a lower game (or in its first game), or
-- whose game's row came since (ingest writes a game's row last).
with fresh_first as (
    select position_key, min(game_id) as game_id
    from moves
    where position_key in (select position_key from positions_new)
    group by position_key
),
seen_again as (     -- positions held before that new moves play (few: the new ones are
    select position_key, min(game_id) as game_id    -- left out before any join with the
    from moves_new                                  -- whole of facts_before)
    where position_key not in (select position_key from positions_new)
    group by position_key
),
moved as (      -- keys and games only: the rows of facts_before read in full are these
    select position_key, min(game_id) as game_id
    from (
        select b.position_key, f.game_id
        from (select position_key, game_id from facts_before) b
        join seen_again f using (position_key)
        where b.game_id is null or f.game_id < b.game_id
        union all
        select position_key, game_id      -- a filter on one column before any join
        from facts_before
        where game_result is null and game_id is not null
          and game_id in (select game_id from games_new)
    )
    group by position_key
),
changed as (
    select p.position_key, p.fen, split_part(p.fen, ' ', 2) as side_to_move, p.in_check,
           f.game_id, p.source_id, p.first_seen, false as replaces
    from positions_new p
    left join fresh_first f using (position_key)
    union all
    select b.position_key, b.fen, b.side_to_move, b.in_check, m.game_id, b.source_id,
           b.first_seen, b.replaces
    from facts_before b
    join moved m using (position_key)
)
select
    c.position_key,
    c.fen,
    c.side_to_move,
    c.in_check,
    c.game_id,
    g.result as game_result,
    c.source_id,
    c.first_seen,
    c.replaces
from changed c
left join games g using (game_id)
