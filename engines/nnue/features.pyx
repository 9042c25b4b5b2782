# cython: language_level=3
"""HalfKP feature extraction in C (Stockfish 12's feature set, paper 002's section 2.4).

For perspective c, ``orient(s) = s`` for White and ``s ^ 63`` for Black, ``k`` the oriented
square of c's own king; a non-king piece of python-chess type t (pawn = 1 .. queen = 5) and
colour col on square s is feature ``k * 641 + 1 + (2 * (t - 1) + (col != c)) * 64 + orient(s)``.
Index ``k * 641`` is never active, so 0 pads the fixed-width rows of :func:`halfkp_batch`.

>>> import chess
>>> stm, other = halfkp_indices(chess.Board("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"))
>>> stm, other
([2577], [2039])

The perspective net's 768 features (:func:`psq_batch`): for perspective c, a piece of type t
(pawn = 1 .. king = 6) and colour col on square s is ``(col != c) * 384 + (t - 1) * 64 + s'``
with ``s' = s`` for White and ``s ^ 56`` (the board flipped top to bottom) for Black; 768 pads.

>>> psq_batch(["4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"])[0, :, :3].tolist()
[[12, 324, 764], [324, 436, 764]]

:func:`halfkp_column` and :func:`psq_column` encode an Arrow string column of FENs the same
way, int64, reading the FENs from the column's buffers without the GIL (the training loader
encodes in several threads at once).
"""
from libc.stdint cimport int32_t, int64_t, uint8_t

import chess

from engines.core.position cimport (
    FEN_OK, KING, Position, lsb, set_fen, set_fen_bytes, set_from_board, u64,
)

# Rows of an Arrow column the nogil pass leaves to the GIL (encode_column).
cdef enum:
    ROW_OK = 0
    ROW_UNREAD = 1   # set_fen_bytes refused it: set_fen reads it (as the list encoders) or says why
    ROW_FULL = 2     # more active features than a row holds
    ROW_NULL = 3


cdef int active_features(const Position* p, int perspective, int* out, int limit) noexcept nogil:
    """Write perspective's active indices (ascending piece kind, then square) to ``out``;
    returns how many, or -1 when there are more than ``limit``."""
    cdef int n = 0, colour, t, sq, enemy
    cdef int king = orient(perspective, lsb(p.bb[perspective][KING]))
    cdef u64 b
    for t in range(KING):
        for enemy in range(2):
            colour = perspective ^ enemy
            b = p.bb[colour][t]
            while b:
                if n == limit:
                    return -1
                sq = lsb(b)
                b &= b - 1
                out[n] = feature_index(perspective, king, colour, t, sq)
                n += 1
    return n


cdef int fill_row(const Position* p, int* row, str what) except -1:
    """Both perspectives (side to move first) into a 2 x MAX_ACTIVE row, zero padded."""
    cdef int i
    for i in range(2):
        if active_features(p, p.side ^ i, row + i * MAX_ACTIVE, MAX_ACTIVE) < 0:
            raise ValueError(f"more than {MAX_ACTIVE} non-king pieces for HalfKP: {what!r}")
    return 0


def halfkp_batch(fens) -> np.ndarray:
    """Active HalfKP indices of each FEN (with or without move counters), int32 (n, 2, 30):
    [i, 0] the side to move's, [i, 1] the other side's, unused slots 0.

    >>> halfkp_batch(["4k3/8/8/8/8/8/4P3/4K3 b - -"])[0, :, :2].tolist()
    [[2039, 0], [2577, 0]]
    """
    import numpy as np   # here, not at import: engines that play hce never load numpy

    cdef Py_ssize_t i, n = len(fens)
    rows = np.zeros((n, 2, MAX_ACTIVE), dtype=np.int32)
    cdef int[:, :, ::1] view = rows
    cdef Position pos
    for i in range(n):
        fen = fens[i]
        if not isinstance(fen, str):
            raise ValueError(f"expected a FEN string, got {fen!r}")
        set_fen(&pos, fen)
        fill_row(&pos, &view[i, 0, 0], fen)
    return rows


def halfkp_indices(board: chess.Board) -> tuple[list[int], list[int]]:
    """(side to move's, other side's) sorted active HalfKP indices of a python-chess board."""
    cdef Position pos
    cdef int buf[2 * MAX_ACTIVE]
    set_from_board(&pos, board)
    fill_row(&pos, buf, board.fen())
    return (sorted(buf[i] for i in range(MAX_ACTIVE) if buf[i]),
            sorted(buf[MAX_ACTIVE + i] for i in range(MAX_ACTIVE) if buf[MAX_ACTIVE + i]))


cdef int psq_active(const Position* p, int perspective, int* out) noexcept nogil:
    """Write perspective's active 768-feature indices (own pieces first, pawn..king, then
    square); returns how many (at most 32 in a legal position: callers check)."""
    cdef int n = 0, colour, t, enemy
    cdef u64 b
    for enemy in range(2):
        colour = perspective ^ enemy
        for t in range(KING + 1):
            b = p.bb[colour][t]
            while b:
                if n == PSQ_MAX_ACTIVE:
                    return -1
                out[n] = psq_index(perspective, colour, t, lsb(b))
                b &= b - 1
                n += 1
    return n


def psq_batch(fens) -> np.ndarray:
    """Active 768-feature indices of each FEN, int32 (n, 2, 32): [i, 0] the side to move's
    view, [i, 1] the other side's, unused slots 768 (the padding row).

    >>> psq_batch(["4k3/8/8/8/8/8/4P3/4K3 b - -"])[0, :, :3].tolist()
    [[324, 436, 764], [12, 324, 764]]
    """
    import numpy as np

    cdef Py_ssize_t i, n = len(fens)
    cdef int c
    rows = np.full((n, 2, PSQ_MAX_ACTIVE), PSQ_PAD, dtype=np.int32)
    cdef int[:, :, ::1] view = rows
    cdef Position pos
    for i in range(n):
        fen = fens[i]
        if not isinstance(fen, str):
            raise ValueError(f"expected a FEN string, got {fen!r}")
        set_fen(&pos, fen)
        for c in range(2):
            if psq_active(&pos, pos.side ^ c, &view[i, c, 0]) < 0:
                raise ValueError(f"more than {PSQ_MAX_ACTIVE} pieces: {fen!r}")
    return rows



cdef int encode_row(const Position* p, bint halfkp, int64_t* out) noexcept nogil:
    """Both perspectives' active indices (side to move first) into a padded 2 x width row
    (width MAX_ACTIVE for HalfKP, PSQ_MAX_ACTIVE for the 768 features); -1 when they do not
    fit."""
    cdef int buf[PSQ_MAX_ACTIVE]
    cdef int c, k, n
    cdef int width = MAX_ACTIVE if halfkp else PSQ_MAX_ACTIVE
    for c in range(2):
        if halfkp:
            n = active_features(p, p.side ^ c, buf, MAX_ACTIVE)
        else:
            n = psq_active(p, p.side ^ c, buf)
        if n < 0:
            return -1
        for k in range(n):
            out[c * width + k] = buf[k]
    return 0


def halfkp_column(fens) -> np.ndarray:
    """:func:`halfkp_batch` of an Arrow string column (FENs read from its buffers without the
    GIL), int64 (n, 2, 30); the same rows, and the same ValueError for a bad FEN or a null.

    >>> import pyarrow as pa
    >>> halfkp_column(pa.array(["4k3/8/8/8/8/8/4P3/4K3 b - -"]))[0, :, :2].tolist()
    [[2039, 0], [2577, 0]]
    """
    return encode_column(fens, True)


def psq_column(fens) -> np.ndarray:
    """:func:`psq_batch` of an Arrow string column, int64 (n, 2, 32), as :func:`halfkp_column`.

    >>> import pyarrow as pa
    >>> psq_column(pa.array(["4k3/8/8/8/8/8/4P3/4K3 b - -"]))[0, :, :3].tolist()
    [[324, 436, 764], [12, 324, 764]]
    """
    return encode_column(fens, False)


cdef object encode_column(object fens, bint halfkp):
    """The rows of a string column: one pass without the GIL over the column's offsets and
    bytes; the rows it cannot encode (a null, a FEN ``set_fen_bytes`` refuses, too many pieces)
    are then taken in order with the GIL, as the list encoders take them: ``set_fen`` reads
    what it can and raises the list encoders' error at the first bad row."""
    import numpy as np
    import pyarrow as pa

    column = fens.combine_chunks() if isinstance(fens, pa.ChunkedArray) else fens
    if not isinstance(column, pa.Array) or not (
            pa.types.is_string(column.type) or pa.types.is_large_string(column.type)
            or pa.types.is_string_view(column.type)):
        raise ValueError(f"expected an Arrow column of FEN strings, got {type(column).__name__}"
                         f" {getattr(column, 'type', '')}".rstrip())
    if not pa.types.is_string(column.type):
        column = column.cast(pa.string())
    cdef Py_ssize_t i, n = len(column)
    cdef int width = MAX_ACTIVE if halfkp else PSQ_MAX_ACTIVE
    rows = np.full((n, 2, width), 0 if halfkp else PSQ_PAD, dtype=np.int64)
    if n == 0:
        return rows
    status = np.zeros(n, np.uint8)
    valid = np.ones(n, np.uint8) if column.null_count == 0 else \
        column.is_valid().to_numpy(zero_copy_only=False).astype(np.uint8)
    buffers = column.buffers()
    data = np.frombuffer(buffers[2], np.uint8) if buffers[2] is not None else None
    if data is None or len(data) == 0:
        data = np.zeros(1, np.uint8)
    cdef const int32_t[:] off = np.frombuffer(buffers[1], np.int32)[
        column.offset:column.offset + n + 1]
    cdef const uint8_t[:] src = data
    cdef const uint8_t[:] ok = valid
    cdef uint8_t[:] stat = status
    cdef int64_t[:, :, ::1] out = rows
    cdef Position pos
    cdef bint flagged = False
    with nogil:
        for i in range(n):
            if not ok[i]:
                stat[i] = ROW_NULL
            elif set_fen_bytes(&pos, &src[0] + off[i], off[i + 1] - off[i]) != FEN_OK:
                stat[i] = ROW_UNREAD
            elif encode_row(&pos, halfkp, &out[i, 0, 0]) < 0:
                stat[i] = ROW_FULL
            else:
                continue
            flagged = True
    if flagged:
        for i in np.flatnonzero(status).tolist():
            fen = column[i].as_py()
            if fen is None:
                raise ValueError(f"expected a FEN string, got {fen!r}")
            set_fen(&pos, fen)   # the list encoders' error for a bad FEN
            if encode_row(&pos, halfkp, &out[i, 0, 0]) < 0:
                raise ValueError(f"more than {MAX_ACTIVE} non-king pieces for HalfKP: {fen!r}"
                                 if halfkp else f"more than {PSQ_MAX_ACTIVE} pieces: {fen!r}")
    return rows
