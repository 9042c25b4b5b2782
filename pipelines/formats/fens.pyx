# cython: language_level=3
"""FENs to Polyglot keys and normalised FENs, a whole Arrow column at a time (compiled).

The import of the field's data sets (text, JSONL, Parquet) spends most of its time here:
each FEN is set up on the engine core's board without the GIL (``set_fen_bytes``), keyed
with the core's Polyglot Zobrist (``chess.polyglot.zobrist_hash``'s key) and written back as
python-chess's ``board.epd()``; positions python-chess calls no chess position at all (a king
missing, pawns on the back rank, the side not to move in check) are refused, as
:func:`pipelines.ingest.epd.checked_board` refuses them.
"""
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.string cimport memcpy

import numpy as np
import pyarrow as pa

from engines.core.position cimport (
    BLACK, FEN_OK, KING, PAWN, WHITE, Position, attackers_to, full_key, lsb, set_fen_bytes,
    write_fen,
)
from engines.core.position import FEN_REASONS

# Status codes beyond the core's FEN_* ones.
cdef enum:
    BACKRANK_PAWNS = 9
    THEM_IN_CHECK = 10
    MISSING = 11
    FEN_BYTES = 90

cdef uint64_t BACKRANKS = 0xFF000000000000FFULL
PAWNS_ON_BACKRANK = BACKRANK_PAWNS
OPPOSITE_CHECK = THEM_IN_CHECK
NO_FEN = MISSING
REASONS = (*FEN_REASONS, "pawns on the back rank", "the side not to move is in check",
           "no FEN")


cdef int checked(Position* p) noexcept nogil:
    """0, or why python-chess's status says this is no chess position."""
    cdef int king = lsb(p.bb[p.side ^ 1][KING])
    if (p.bb[WHITE][PAWN] | p.bb[BLACK][PAWN]) & BACKRANKS:
        return BACKRANK_PAWNS
    if attackers_to(p, king, p.all) & p.occ[p.side]:
        return THEM_IN_CHECK
    return 0


def fen_keys(fens):
    """(keys uint64, normalised FENs, side to move int8 0/1, status uint8) of a string column.

    status 0 is a position; otherwise ``REASONS[status]`` says what is wrong (keys 0, FEN
    empty, side -1).
    """
    column = fens.combine_chunks() if isinstance(fens, pa.ChunkedArray) else fens
    if column.type == pa.large_string():
        column = column.cast(pa.string())
    cdef Py_ssize_t n = len(column)
    keys = np.zeros(n, np.uint64)
    sides = np.full(n, -1, np.int8)
    status = np.zeros(n, np.uint8)
    out_offsets = np.zeros(n + 1, np.int32)
    out_data = np.empty(max(n * FEN_BYTES, 1), np.uint8)
    if n == 0:
        return keys, pa.array([], pa.string()), sides, status
    valid = np.ones(n, np.uint8) if column.null_count == 0 else \
        column.is_valid().to_numpy(zero_copy_only=False).astype(np.uint8)
    buffers = column.buffers()
    offsets = np.frombuffer(buffers[1], np.int32)[column.offset:column.offset + n + 1]
    offsets = offsets.astype(np.int64)
    data = np.frombuffer(buffers[2], np.uint8) if buffers[2] is not None else \
        np.zeros(1, np.uint8)
    if len(data) == 0:
        data = np.zeros(1, np.uint8)
    cdef const int64_t[:] off = offsets
    cdef const uint8_t[:] src = data
    cdef const uint8_t[:] ok = valid
    cdef uint64_t[:] key = keys
    cdef signed char[:] side = sides
    cdef uint8_t[:] stat = status
    cdef int[:] out_off = out_offsets
    cdef uint8_t[:] out = out_data
    cdef Py_ssize_t i, written = 0
    cdef int code, length
    cdef Position pos
    with nogil:
        for i in range(n):
            out_off[i] = written
            if not ok[i]:
                stat[i] = MISSING
                continue
            code = set_fen_bytes(&pos, &src[0] + off[i], off[i + 1] - off[i])
            if code == FEN_OK:
                code = checked(&pos)
            if code:
                stat[i] = code
                continue
            key[i] = full_key(&pos)
            side[i] = pos.side
            length = write_fen(&pos, &out[written])
            written += length
        out_off[n] = written
    normalised = pa.StringArray.from_buffers(
        n, pa.py_buffer(out_offsets), pa.py_buffer(out_data[:max(written, 1)]))
    return keys, normalised, sides, status
