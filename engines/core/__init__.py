"""The compiled engine core: a bitboard board private to the engines, python-chess at the edges.

``engines.core.position`` (Cython) holds the board. Python code sees only FEN strings,
``chess.Board`` and ``chess.Move``, plus the small ``CoreBoard`` wrapper used by tests and
benchmarks. Every rule is checked against python-chess in tests/engines/test_core.py.

Fast PGN replay for ingest
--------------------------
``replay_san(fen, sans)`` replays SAN moves at about a microsecond or two per ply and returns
``(keys, fens, ucis, sans_out, error)``:

* ``keys``/``fens``: the Polyglot key (``chess.polyglot.zobrist_hash``, unsigned 64-bit int) and
  the 4-field FEN (``board.epd()``, en passant only when legal) of the position before each move
  and after the last one (``plies + 1`` entries);
* ``ucis``/``sans_out``: each replayed move in UCI and in canonical SAN (``board.san()``);
* ``error``: None, or ``(ply_index, "illegal san 'Nf9' in <fen>")`` for the first move that could
  not be read ("invalid san", "illegal san" or "ambiguous san"); the lists then hold what was
  replayed before it.

SAN is read as leniently as python-chess (``0-0``, ``e8Q``, needless disambiguation, trailing
``+#!?``); null moves (``--``, ``Z0``) pass the turn and are written ``0000``/``--``.

``fen=None`` is the standard start position; a bad FEN raises ``InvalidFenError`` (a
ValueError) quoting it. ``position_key(fen)`` and ``normalise_fen(fen)`` do the same for one
position.

>>> keys, fens, ucis, sans, error = replay_san(None, ["e4", "e5", "Nf3"])
>>> ucis, sans, error
(['e2e4', 'e7e5', 'g1f3'], ['e4', 'e5', 'Nf3'], None)
>>> hex(keys[1])
'0x823c9b50fd114196'
"""
from engines.core.position import (
    CoreBoard,
    CoreError,
    IllegalMoveError,
    InvalidFenError,
    normalise_fen,
    perft_count,
    perft_divide,
    position_key,
    random_playouts,
    replay_san,
)

__all__ = [
    "CoreBoard",
    "CoreError",
    "IllegalMoveError",
    "InvalidFenError",
    "normalise_fen",
    "perft_count",
    "perft_divide",
    "position_key",
    "random_playouts",
    "replay_san",
]
