-- Classify a batch of (position_key, fen) pairs met while ingesting against the positions
-- already known. Inputs: `batch_positions` (position_key, fen, game_index, line, seq: arrival
-- order) and `known_positions` (position_key, fen). Output, one row per distinct pair:
-- status 'new' (the first fen of an unknown key), 'known' (same key and fen already stored)
-- or 'collision' (the key is taken by another fen: a Zobrist collision), with the fen it
-- collides with.
with pairs as (
    select position_key, fen, min(seq) as seq,
        arg_min(game_index, seq) as game_index, arg_min(line, seq) as line
    from batch_positions
    group by position_key, fen
),

ranked as (
    select *, row_number() over (partition by position_key order by seq) as arrival
    from pairs
),

known as (
    select distinct on (position_key) position_key, fen
    from known_positions
),

first_in_batch as (
    select position_key, fen
    from ranked
    where arrival = 1
)

select
    ranked.position_key,
    ranked.fen,
    ranked.game_index,
    ranked.line,
    case
        when known.position_key is null and ranked.arrival = 1 then 'new'
        when known.fen = ranked.fen then 'known'
        else 'collision'
    end as status,
    coalesce(known.fen, first_in_batch.fen) as stored_fen
from ranked
left join known on known.position_key = ranked.position_key
left join first_in_batch on first_in_batch.position_key = ranked.position_key
order by ranked.seq
