-- The stored FEN of every key of `batch_keys` (position_key) that `known_positions` (the
-- positions parts of the current Delta version: position_key as stored, a signed 64-bit
-- integer with the key's bits, and fen) already holds. Ingest compares it with the FEN it
-- met: the same FEN is a known position, another FEN is a Zobrist collision. The keys are
-- compared as stored (no conversion per row), and only the matching rows' FENs are kept.
select distinct on (known.position_key)
    known.position_key,
    known.fen as stored_fen
from known_positions as known
semi join batch_keys on batch_keys.position_key = known.position_key
