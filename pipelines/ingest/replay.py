"""Replaying a main line: keys and normalised FENs of every position, UCI and SAN of every move.

The compiled core's ``engines.core.replay_san`` does it at a few microseconds per ply; the
python-chess version below has the same contract and is the reference it is tested against
(and the replay for Chess960 games, whose castling the core does not model).

>>> keys, fens, ucis, sans, error = replay_reference(None, ["e4", "e5", "Qh5", "Ke7", "Qxe5#"])
>>> ucis[-1], sans[-1], fens[-1]
('h5e5', 'Qxe5#', 'rnbq1bnr/ppppkppp/8/4Q3/4P3/8/PPPP1PPP/RNB1KBNR b KQ -')
>>> replay_reference(None, ["e4", "Nf9"])[4]
(1, "invalid san 'Nf9' in rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import chess
import chess.polyglot

log = logging.getLogger(__name__)

ReplayError = tuple[int, str] | None
Replay = tuple[list[int], list[str], list[str], list[str], ReplayError]
ReplayFunction = Callable[[str | None, Sequence[str]], Replay]


def replay_reference(fen: str | None, sans: Sequence[str], chess960: bool = False) -> Replay:
    """python-chess replay with ``engines.core.replay_san``'s contract.

    Returns (keys, fens) for the positions before each move and after the last one, (ucis,
    canonical sans) for each move replayed, and ``(ply, reason)`` for the first move that could
    not be played, else None. A bad FEN raises ValueError quoting it.
    """
    board = chess.Board(fen or chess.STARTING_FEN, chess960=chess960)
    board.chess960 = board.chess960 or board.has_chess960_castling_rights()
    keys: list[int] = []
    fens: list[str] = []
    ucis: list[str] = []
    sans_out: list[str] = []
    for ply, san in enumerate(sans):
        keys.append(chess.polyglot.zobrist_hash(board))
        fens.append(board.epd())
        try:
            move = board.parse_san(san)
        except ValueError as exc:
            reason = str(exc).split(":")[0]
            return keys, fens, ucis, sans_out, (ply, f"{reason} {san!r} in {board.fen()}")
        ucis.append(board.uci(move))
        sans_out.append(board.san(move))
        board.push(move)
    keys.append(chess.polyglot.zobrist_hash(board))
    fens.append(board.epd())
    return keys, fens, ucis, sans_out, None


def core_replay() -> ReplayFunction | None:
    """The compiled core's replay, or None when the core is not built."""
    try:
        from engines.core import replay_san
    except ImportError as exc:
        log.debug("engines.core.replay_san unavailable (%s); using python-chess", exc)
        return None
    return replay_san  # type: ignore[return-value]  # the stub takes list[str]; any sequence works


def replay_function() -> ReplayFunction:
    """The fastest available replay for standard chess."""
    return core_replay() or replay_reference


def is_core(replay: ReplayFunction) -> bool:
    """Whether ``replay`` is the compiled core's (whose rules the compiled PGN reader's own
    replay follows, so it may replay instead)."""
    return replay is core_replay()
