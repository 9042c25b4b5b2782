"""`chesslab mcc kqk|solver|reti|roundrobin` through the command line at tiny budgets: what
each prints and the rows it writes to the warehouse (the experiments themselves are tested in
tests/pipelines/test_mcc.py)."""
from __future__ import annotations

from pathlib import Path

import chess
import pytest

from flows.cli import main
from warehouse import Lake, connect

ROOT = Path(__file__).resolve().parents[2]
MATES = ROOT / "tests" / "fixtures" / "mcts" / "mates.epd"


def results(home: Path, experiment: str) -> list[tuple[str, str, str, float, float | None]]:
    return connect(Lake(home)).execute(
        "select variant, label, metric, value, expected from mcc_results where experiment = ? "
        "order by all", [experiment]).fetchall()


def test_kqk_prints_and_records_both_repetition_rules(home: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    """20,000 playouts, seed 1: 96 White mates with twofold repetition and 173 with
    threefold (the counts pinned in tests/pipelines/test_mcc.py), each beside the thesis'
    4,988 per million scaled to 99.76."""
    assert main(["--home", str(home), "mcc", "kqk", "--playouts", "20000", "--seed", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("repetition 2: 96 White mates in 20000 playouts (0.480%; "
                               "thesis 4988 per 1,000,000), value ")
    assert lines[1].startswith("repetition 3: 173 White mates in 20000 playouts (0.865%;")
    rows = results(home, "kqk")
    assert [row[:4] for row in rows if row[2] == "white_mates"] == [
        ("mcc", "repetition=2", "white_mates", 96.0), ("mcc", "repetition=3", "white_mates", 173.0)]
    assert [row[4] for row in rows if row[2] == "white_mates"] == [pytest.approx(99.76)] * 2
    assert [(row[1], row[3] > 0, row[4]) for row in rows if row[2] == "mean_plies"] == [
        ("repetition=2", True, None), ("repetition=3", True, None)]


def test_solver_scores_the_mates_it_proves(home: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The seven mates in one and two of the fixture (distances checked by a tablebase or
    Stockfish in tests/engines/test_mcts.py): all found at their distance within 50,000
    iterations, a line and a row each; with 1 iteration none is proven, which the score
    line says (a missed problem is a result: the command still exits 0)."""
    easy = [line for line in MATES.read_text().splitlines() if " dm 1;" in line or " dm 2;" in line]
    epd = tmp_path / "easy.epd"
    epd.write_text("\n".join(easy) + "\n")
    assert main(["--home", str(home), "mcc", "solver", str(epd), "--iterations", "50000",
                 "--hash-mb", "64"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "7/7 exact within 50000 iterations"
    assert all(line.split()[:5] == ["dm", line.split()[1], "found", line.split()[1], "exact"]
               for line in lines[:-1])
    mates = [row for row in results(home, "solver") if row[2] == "mate_moves"]
    assert len(mates) == 7 and all(value == expected for *_, value, expected in mates)
    assert sorted(int(expected) for *_, expected in mates) == sorted(
        int(chess.Board.from_epd(line)[1]["dm"]) for line in easy)
    assert main(["--home", str(home), "mcc", "solver", str(epd), "--iterations", "1",
                 "--hash-mb", "64"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "0/7 exact within 1 iterations"


def test_reti_prints_and_records_each_variant_and_seed(home: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    """Two variants times one seed: a line each, and two figures each in mcc_results."""
    assert main(["--home", str(home), "mcc", "reti", "--iterations", "2000", "--seeds", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:3] for line in lines] == [["combined", "seed", "1:"],
                                                    ["combined-discard", "seed", "1:"]]
    assert all(", 2000 iterations in " in line for line in lines)
    rows = results(home, "reti")
    assert sorted((variant, metric) for variant, _, metric, *_ in rows) == [
        ("combined", "iterations_to_move"), ("combined", "seconds_to_move"),
        ("combined-discard", "iterations_to_move"), ("combined-discard", "seconds_to_move")]
