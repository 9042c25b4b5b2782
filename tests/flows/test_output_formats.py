"""Machine-readable output (issue 49 §4): ``--format json`` is one JSON document (``sql``'s
was JSON Lines, now ``jsonl``), for ``status``, ``ratings``, ``sprt`` and the tournament's
standings too; the ratings name the intervals they show."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from flows.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def three_players(path: Path) -> Path:
    """A round robin of three players, two games a pairing, colours reversed."""
    results = {("A", "B"): ("1-0", "1/2-1/2"), ("A", "C"): ("1-0", "0-1"),
               ("B", "C"): ("1/2-1/2", "1-0")}
    games = []
    for (first, second), (one, two) in results.items():
        for white, black, result in ((first, second, one), (second, first, two)):
            games.append(f'[White "{white}"]\n[Black "{black}"]\n[Result "{result}"]\n\n'
                         f"1. e4 e5 {result}\n\n")
    path.write_text("".join(games))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_sprt_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    counts = ("--counts", "10,100,200,110,20")
    document = json.loads(run(capsys, "sprt", *counts, "--format", "json"))
    assert document["counts"] == [10, 100, 200, 110, 20]
    assert (document["elo0"], document["elo1"], document["decision"]) == (0.0, 2.0, "continue")
    assert f"LLR {document['llr']:.3f} " in run(capsys, "sprt", *counts)
    forecast = json.loads(run(capsys, "sprt", "--forecast", "5", "--format", "json"))
    assert forecast["elo"] == 5.0 and forecast["config"]["elo1"] == 2.0


def test_ratings_name_their_intervals_and_print_as_json(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``ratings --help`` and docs/tournaments.md said the intervals came from the covariance;
    they were bayeselo's mm variance intervals: the output says which."""
    games = str(three_players(tmp_path / "games.pgn"))
    text = run(capsys, "--home", str(home), "ratings", "--pgn", games)
    assert text.splitlines()[0].startswith("Rank Name")
    assert "+ and -: 95% intervals from each rating's variance with the others fixed, " \
           "bayeselo's default after mm (--intervals variance; or covariance, exact)" in text
    wider = run(capsys, "--home", str(home), "ratings", "--pgn", games, "--intervals",
                "covariance")
    assert "intervals from the covariance matrix" in wider
    document = json.loads(run(capsys, "--home", str(home), "ratings", "--pgn", games,
                              "--format", "json", "--los"))
    assert document["intervals"] == "variance" and document["confidence"] == 0.95
    names = [row["name"] for row in document["ratings"]]
    assert [row["rank"] for row in document["ratings"]] == list(range(1, len(names) + 1))
    assert set(document["los"][names[0]]) == set(names[1:])


def test_status_as_json(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "--home", str(home), "ingest", "--no-prefect", "--workers", "1",
        str(FIXTURES / "label_engines" / "opera.pgn"))
    document = json.loads(run(capsys, "--home", str(home), "status", "--format", "json"))
    assert document["home"] == str(home)
    tables = {row["table"]: row for row in document["tables"]}
    assert tables["games"]["rows"] == 1 and document["labels"] == []
