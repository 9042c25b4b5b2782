"""benchmarks/eval_quality.py: Stockfish judges the moves hce and nnue searches choose."""
from __future__ import annotations

from pathlib import Path

import pytest

from engines.nnue.netfile import random_arrays, save_arrays
from tests.benchmarks.scripts import load_script

eval_quality = load_script("eval_quality.py", "eval_quality")

# Mates in one (back rank; the Scholar's mate): any search to depth 1 finds them, so each
# evaluation's regret is 0 whatever its net; the second line is EPD, as suites are written.
MATES = ["6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1",
         "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - bm Qxf7#;"]


def test_mates_in_one_cost_neither_evaluation_anything(
        tmp_path: Path, stockfish_path: str, capsys: pytest.CaptureFixture[str]) -> None:
    net = tmp_path / "net.npz"
    save_arrays(net, random_arrays(3))
    fens = tmp_path / "mates.epd"
    fens.write_text("\n".join(MATES) + "\n")
    assert eval_quality.main(["--net", str(net), "--fens", str(fens), "--depths", "1,2",
                              "--reference-depth", "6", "--stockfish", stockfish_path]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("2 positions, Stockfish depth 6 as the judge")
    for depth, line in zip((1, 2), lines[1:], strict=True):
        assert line.startswith(f"depth {depth}: regret hce 0.0 cp, nnue 0.0 cp "
                               "(nnue - hce +0.0 +- 0.0); blunders hce 0.0%, nnue 0.0%")


def test_paired_difference_and_its_standard_error() -> None:
    mean, se = eval_quality.paired([10.0, 20.0, 30.0], [12.0, 26.0, 30.0])
    assert mean == pytest.approx(8 / 3)
    assert se == pytest.approx((((2 - 8 / 3) ** 2 + (6 - 8 / 3) ** 2 + (8 / 3) ** 2) / 2 / 3) ** 0.5)
