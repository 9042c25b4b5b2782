-- The stored FEN of every key of `batch_keys` (position_key) that the `positions` table
-- (its current Delta version) already holds. Ingest compares it with the
-- FEN it met: the same FEN is a known position, another FEN is a Zobrist collision.
select distinct on (known.position_key)
    known.position_key,
    known.fen as stored_fen
from positions as known
semi join batch_keys on batch_keys.position_key = known.position_key
