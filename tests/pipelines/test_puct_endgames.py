"""Paper 004's endgame generator (E8): 20% of each piece count 3..7, half White to move,
every position legal, not over and not trivially decided; ``chesslab endgames`` writes it."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import chess
import pytest

from flows.cli import main as cli_main
from pipelines.puct.endgames import EndgameError, decided, parse_pieces, random_endgames


def test_shares_legality_and_the_fairness_rule() -> None:
    fens = random_endgames(500, seed=7)
    boards = [chess.Board(f) for f in fens]
    assert Counter(len(b.piece_map()) for b in boards) == {n: 100 for n in range(3, 8)}
    assert sum(b.turn for b in boards) == 250
    for board in boards:
        assert board.is_valid() and not board.is_game_over()
        assert decided(board) is None
        assert not any(board.piece_type_at(m.to_square) in (chess.QUEEN, chess.ROOK)
                       for m in board.legal_moves)
    assert len(set(fens)) == len(fens)
    assert random_endgames(50, seed=7) == fens[:50]


def test_decided_positions_are_named() -> None:
    assert decided(chess.Board("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1")) == "mate in one"
    assert decided(chess.Board("k7/8/8/3r4/8/8/3Q4/K7 b - - 0 1")) == "wins a major piece"
    assert decided(chess.Board("7k/8/8/8/8/8/8/K7 w - - 0 1")) == "over"
    with pytest.raises(EndgameError, match="bad piece counts"):
        parse_pieces("three")


def test_command_writes_an_epd_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "starts.epd"
    assert cli_main(["endgames", "--count", "20", "--pieces", "3-7", "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 20 and 'id "endgame-0"' in lines[0]
    assert "White to move 10" in capsys.readouterr().out
