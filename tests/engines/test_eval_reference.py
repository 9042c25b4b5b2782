"""The Python evaluators of engines/eval_tables.py compute exactly what the compiled ``hce`` and
``hce-simple`` compute, on positions of real games and of random playouts from them."""
from __future__ import annotations

import random
from pathlib import Path

import chess
import chess.pgn
import pytest

from engines.alphabeta import EVALS, NNUE_EVALS, AlphaBeta, SearchConfig
from engines.eval_tables import REFERENCE_EVALUATIONS, SEF_MATERIAL_MAX, SEF_PIECE_VALUES

#: The evaluations with a Python reference here (the NNUE has its own, engines/nnue/reference.py).
HAND_CRAFTED = tuple(name for name in EVALS if name not in NNUE_EVALS)

FIXTURES = Path(__file__).parent.parent / "fixtures"
SEED = 20261123
PLAYOUTS = 40
PLAYOUT_PLIES = 120


def game_boards() -> list[chess.Board]:
    """Every position of the fixture games (core_games.pgn: Stockfish games, promotions)."""
    boards = []
    with (FIXTURES / "core_games.pgn").open() as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            board = game.board()
            for move in game.mainline_moves():
                board.push(move)
                boards.append(board.copy(stack=False))
    return boards


def playout_boards(starts: list[chess.Board]) -> list[chess.Board]:
    """Random legal playouts (fixed seed) from random game positions, every 4th ply kept:
    unbalanced material, lone bishops, promotions to any piece."""
    rng = random.Random(SEED)
    boards = []
    for _ in range(PLAYOUTS):
        board = rng.choice(starts).copy(stack=False)
        for ply in range(PLAYOUT_PLIES):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
            if ply % 4 == 3:
                boards.append(board.copy(stack=False))
    return boards


@pytest.fixture(scope="module")
def positions() -> list[chess.Board]:
    games = game_boards()
    rng = random.Random(SEED)
    return rng.sample(games, 200) + playout_boards(games)


def material(board: chess.Board, color: chess.Color) -> int:
    return sum(SEF_PIECE_VALUES[piece.piece_type] for piece in board.piece_map().values()
               if piece.color == color and piece.piece_type != chess.KING)


def test_positions_cover_every_term(positions: list[chess.Board]) -> None:
    """The sample is a few hundred positions that reach every term the two sides could
    disagree on: a bishop pair against none, material past the 4000 of the scaling, both
    sides to move, and the end-game king table."""
    assert len(positions) >= 400
    assert any(len(b.pieces(chess.BISHOP, chess.WHITE)) >= 2
               and len(b.pieces(chess.BISHOP, chess.BLACK)) < 2 for b in positions)
    assert any(max(material(b, chess.WHITE), material(b, chess.BLACK)) > SEF_MATERIAL_MAX
               for b in positions)
    assert {b.turn for b in positions} == {chess.WHITE, chess.BLACK}
    assert any(not b.pieces(chess.QUEEN, chess.WHITE) and not b.pieces(chess.QUEEN, chess.BLACK)
               for b in positions)


@pytest.mark.parametrize("name", HAND_CRAFTED)
def test_reference_equals_compiled_evaluation(name: str,
                                              positions: list[chess.Board]) -> None:
    """Centipawn for centipawn, side to move's view, on every position."""
    engine = AlphaBeta(SearchConfig(eval=name, hash_mb=1))
    reference = REFERENCE_EVALUATIONS[name]
    mismatches = [(board.fen(), engine.evaluate(board), reference(board)) for board in positions
                  if engine.evaluate(board) != reference(board)]
    assert not mismatches, f"{len(mismatches)} of {len(positions)} differ, e.g. {mismatches[:3]}"


def test_known_values() -> None:
    """Hand-checked values, so both sides cannot drift together. Start position: hce is the
    10-point tempo, hce-simple 0. White Ke1 Bc1 Bf1 against a bare Ke8 (kings cancel):
    hce, phase 2: mg 2*365 - 14 - 12 + 30 (pair) = 734, eg 2*297 - 23 - 16 + 50 = 605,
    (734*2 + 605*22) / 24 = 615.75 -> 615, + 10 = 625; hce-simple: bishops c1, f1 -10 each,
    end-game king e1 -30, so 660 + trunc(-50 * 660 / 4000 = -8.25) = 652 (651 if floored)."""
    start = chess.Board()
    assert REFERENCE_EVALUATIONS["hce"](start) == 10
    assert REFERENCE_EVALUATIONS["hce-simple"](start) == 0
    board = chess.Board("4k3/8/8/8/8/8/8/2B1KB2 w - - 0 1")
    assert REFERENCE_EVALUATIONS["hce"](board) == 625
    assert REFERENCE_EVALUATIONS["hce-simple"](board) == 652
    assert REFERENCE_EVALUATIONS["hce-simple"](board.mirror()) == 652
