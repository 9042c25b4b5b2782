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
    NOT_READ = 2
    FEN_BYTES = 90

cdef uint64_t BACKRANKS = 0xFF000000000000FFULL
UNREAD = NOT_READ   # board_flags' in_check of a FEN the core cannot read
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


def board_flags(fens, moves=None):
    """(in_check, noisy) uint8 arrays of a string column of FENs and, optionally, a string
    column of UCI moves, one per FEN (null: no move).

    ``in_check`` is 1 when the side to move is in check, 0 when not, and ``UNREAD`` (2) for a
    FEN the core cannot read (a Chess960 castling field: the caller asks python-chess).
    ``noisy`` is 1 when the move promotes (five characters), lands on an occupied square (a
    capture) or moves a pawn to another file (en passant), read from the board as it stands;
    0 without a move or a board.

    >>> checks, noisy = board_flags(pa.array(["4k3/8/8/8/8/8/3r4/4K3 w - -", "x"]),
    ...                             pa.array(["e1d2", None]))
    >>> checks.tolist(), noisy.tolist()
    ([0, 2], [1, 0])
    """
    column = fens.combine_chunks() if isinstance(fens, pa.ChunkedArray) else fens
    if column.type == pa.large_string():
        column = column.cast(pa.string())
    cdef Py_ssize_t n = len(column)
    checks = np.zeros(n, np.uint8)
    noisy = np.zeros(n, np.uint8)
    if n == 0:
        return checks, noisy
    fen_ok = (np.ones(n, np.uint8) if column.null_count == 0 else
              column.is_valid().to_numpy(zero_copy_only=False).astype(np.uint8))
    fen_off, fen_data = string_buffers(column)
    move_col = None
    if moves is not None:
        move_col = moves.combine_chunks() if isinstance(moves, pa.ChunkedArray) else moves
        if move_col.type == pa.large_string():
            move_col = move_col.cast(pa.string())
        if len(move_col) != n:
            raise ValueError(f"{len(move_col)} moves for {n} FENs")
    has_moves = move_col is not None
    move_ok = (np.ones(n, np.uint8) if not has_moves or move_col.null_count == 0 else
               move_col.is_valid().to_numpy(zero_copy_only=False).astype(np.uint8))
    move_off, move_data = string_buffers(move_col) if has_moves else \
        (np.zeros(n + 1, np.int64), np.zeros(1, np.uint8))
    cdef const int64_t[:] foff = fen_off
    cdef const uint8_t[:] fsrc = fen_data
    cdef const int64_t[:] moff = move_off
    cdef const uint8_t[:] msrc = move_data
    cdef const uint8_t[:] mok = move_ok
    cdef const uint8_t[:] fok = fen_ok
    cdef uint8_t[:] check = checks
    cdef uint8_t[:] noise = noisy
    cdef Py_ssize_t i
    cdef Position pos
    cdef bint use_moves = has_moves
    with nogil:
        for i in range(n):
            if not fok[i] or \
                    set_fen_bytes(&pos, &fsrc[0] + foff[i], foff[i + 1] - foff[i]) != FEN_OK:
                check[i] = NOT_READ
                continue
            check[i] = attackers_to(&pos, lsb(pos.bb[pos.side][KING]), pos.all) \
                & pos.occ[pos.side ^ 1] != 0
            if use_moves and mok[i]:
                noise[i] = move_is_noisy(&pos, &msrc[0] + moff[i], moff[i + 1] - moff[i])
    return checks, noisy


def string_buffers(column):
    """(int64 offsets, uint8 data) of a string array, its slice offset applied."""
    n = len(column)
    buffers = column.buffers()
    offsets = np.frombuffer(buffers[1], np.int32)[column.offset:column.offset + n + 1]
    data = np.frombuffer(buffers[2], np.uint8) if buffers[2] is not None else \
        np.zeros(1, np.uint8)
    return offsets.astype(np.int64), (data if len(data) else np.zeros(1, np.uint8))


cdef uint8_t move_is_noisy(const Position* p, const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """1 when UCI move ``s`` promotes, captures or moves a pawn across files (en passant)."""
    cdef int from_file, from_rank, to_file, to_rank, frm, to
    if n == 5:
        return 1
    if n != 4:
        return 0
    from_file, from_rank = s[0] - 97, s[1] - 49
    to_file, to_rank = s[2] - 97, s[3] - 49
    if not (0 <= from_file < 8 and 0 <= from_rank < 8 and 0 <= to_file < 8
            and 0 <= to_rank < 8):
        return 0
    frm, to = from_rank * 8 + from_file, to_rank * 8 + to_file
    if p.all >> to & 1:
        return 1
    return from_file != to_file and \
        ((p.bb[WHITE][PAWN] | p.bb[BLACK][PAWN]) >> frm & 1) != 0
