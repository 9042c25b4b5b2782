"""``chesslab perft`` and ``chesslab bench`` (flows/commands/core.py) end to end."""
from __future__ import annotations

import pytest

from flows.cli import main


def test_perft_prints_the_node_count(capsys: pytest.CaptureFixture[str]) -> None:
    """Perft 3 of the start position is 8,902 (chessprogramming wiki)."""
    assert main(["perft", "startpos", "3"]) == 0
    assert capsys.readouterr().out.strip() == "8902"


def test_perft_divide_lists_moves_and_total(capsys: pytest.CaptureFixture[str]) -> None:
    fen = "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"
    assert main(["perft", fen, "2", "--divide"]) == 0
    out = capsys.readouterr().out
    assert "b4b1: 16" in out and out.strip().endswith("Nodes searched: 191")


def test_perft_bad_fen_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["perft", "8/8/8 w", "2"]) == 2
    assert "'8/8/8 w'" in capsys.readouterr().err


def test_bench_prints_a_deterministic_node_count(capsys: pytest.CaptureFixture[str]) -> None:
    counts = []
    for _ in range(2):
        assert main(["bench", "--depth", "3", "--positions", "4", "--hash-mb", "1"]) == 0
        out = capsys.readouterr().out
        counts.append(int(out.split("Nodes searched  :")[1].split()[0]))
    assert counts[0] == counts[1] > 100
    assert main(["bench", "--depth", "0"]) == 2
