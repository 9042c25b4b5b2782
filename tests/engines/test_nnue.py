"""NNUE on the engine side (paper 002 with Stockfish 12's HalfKP): compiled feature extraction
against the python-chess reference, the compiled quantised network against the numpy
reference, the incremental accumulator against a rebuild, and a net playing over UCI."""
from __future__ import annotations

from pathlib import Path

import chess
import chess.pgn
import numpy as np
import pytest

from engines.nnue.features import halfkp_batch, halfkp_indices
from engines.nnue.reference import halfkp_reference

FIXTURES = Path(__file__).parent.parent / "fixtures"
GAME_FILES = ("core_games.pgn", "label_engines/selfplay.pgn")


def game_boards() -> list[chess.Board]:
    """Every position of the fixture games (core games and self-play), start positions too."""
    boards = []
    for name in GAME_FILES:
        with open(FIXTURES / name) as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                board = game.board()
                boards.append(board.copy(stack=False))
                for move in game.mainline_moves():
                    board.push(move)
                    boards.append(board.copy(stack=False))
    return boards


@pytest.fixture(scope="module")
def boards() -> list[chess.Board]:
    return game_boards()


def test_fixture_games_cover_promotions_and_both_sides(boards: list[chess.Board]) -> None:
    """The cross-checks below see thousands of positions, both sides to move, promoted pieces."""
    assert len(boards) > 2000
    assert {b.turn for b in boards} == {chess.WHITE, chess.BLACK}
    assert any(len(b.pieces(chess.QUEEN, chess.WHITE)) > 1 or b.promoted for b in boards)


def test_halfkp_matches_python_chess_reference(boards: list[chess.Board]) -> None:
    """Compiled HalfKP (both perspectives, batch and single) equals the python-chess reference
    on every game position; a wrong orientation or piece kind would differ somewhere."""
    rows = halfkp_batch([b.fen() for b in boards])
    assert rows.dtype == np.int32 and rows.shape == (len(boards), 2, 30)
    for board, row in zip(boards, rows):
        stm, other = halfkp_reference(board)
        assert sorted(row[0][row[0] > 0]) == stm and sorted(row[1][row[1] > 0]) == other
        assert halfkp_indices(board) == (stm, other)
        assert len(stm) == len(other) == len(board.piece_map()) - 2


def test_halfkp_known_indices() -> None:
    """Hand-computed contract indices: White king e1 (k=4), pawn e2 (sq 12): 4*641+1+0+12 =
    2577 for White; for Black (king e8 -> 60^63 = 3) the pawn is an enemy pawn (kind 1) on
    12^63 = 51: 3*641+1+64+51 = 2039. Counters, castling and en passant do not matter."""
    with_counters = halfkp_batch(["4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"])
    without = halfkp_batch(["4k3/8/8/8/8/8/4P3/4K3 w - -"])
    assert with_counters[0, :, 0].tolist() == [2577, 2039]
    assert (with_counters == without).all()
    black = halfkp_batch(["4k3/8/8/8/8/8/4P3/4K3 b - -"])
    assert black[0, :, 0].tolist() == [2039, 2577]
    castle = halfkp_batch(["r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1",
                           "r3k2r/8/8/3pP3/8/8/8/R3K2R w - - 0 1"])
    assert (castle[0] == castle[1]).all()


@pytest.mark.parametrize("fen", ["not a fen", "8/8/8/8/8/8/8/8 w - -",
                                 "4k3/8/8/8/8/8/4P3/4K3 x - -", "QQQQkQQQ/QQQQQQQQ/QQQQQQQQ/"
                                 "QQQQQQQQ/8/8/8/4K3 w - -"])
def test_halfkp_batch_rejects_bad_fens(fen: str) -> None:
    """A bad FEN (or one with more than 30 non-king pieces) is a ValueError quoting it."""
    with pytest.raises(ValueError, match=repr(fen)[1:-1][:20]):
        halfkp_batch(["4k3/8/8/8/8/8/8/4K3 w - -", fen])
