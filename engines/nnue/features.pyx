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
"""
import chess

from engines.core.position cimport KING, Position, lsb, set_from_board, set_fen, u64


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
