"""Issue 8: under Prefect `label` and `tournament` showed no progress and `tournament` printed
no ratings table. Both commands now print the same progress lines (stderr) and the same final
tables (stdout) under both runners."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from flows.cli import main
from tests.flows.conftest import progress_lines
from warehouse import Lake

SF = "stockfish?Threads=1&Hash=16"


@pytest.fixture(params=["--no-prefect", "prefect"])
def runner_flags(request: pytest.FixtureRequest) -> list[str]:
    if request.param == "prefect":
        request.getfixturevalue("prefect_harness")
        return ["--prefect"]
    return [request.param]


def test_label_progress_and_summary(home: Path, stockfish_path: str, runner_flags: list[str],
                                    capsys: pytest.CaptureFixture[str],
                                    selfplay_positions: list[dict[str, object]]) -> None:
    """12 positions in batches of 5 on one engine: the plan line, one line per batch with the
    running totals, then the summary on stdout."""
    Lake(home).write("positions", selfplay_positions[:12])
    assert main(["--home", str(home), "label", *runner_flags, "--depths", "2,3", "--workers",
                 "1", "--batch-size", "5"]) == 0
    captured = capsys.readouterr()
    lines = progress_lines(captured.err, "label: ")
    assert re.fullmatch(r"label: 12 positions to label in 3 batches with stockfish-\S+",
                        lines[0])
    # issue 49 §3: one style for every step, with the rate and the time left
    assert [re.sub(r"\), [\d.,]+ positions/(s|min)(, ETA [\w ]+)?;", ");", line)
            for line in lines[1:]] == [
        "label: 5/12 positions (42%); 10 labels, 0 errors",
        "label: 10/12 positions (83%); 20 labels, 0 errors",
        "label: 12/12 positions (100%); 24 labels, 0 errors"]
    assert re.search(r", ETA \d+ s;", lines[1]) and "ETA" not in lines[3], lines
    assert "12/12 positions labelled, 24 labels written, 0 errors" in captured.out


def test_tournament_progress_and_tables(home: Path, stockfish_path: str,
                                        runner_flags: list[str],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """One game pair between two Stockfish players: a line per game, then the ratings table
    and the tournament line; --no-progress drops the game lines only."""
    command = ["--home", str(home), "tournament", f"{SF}#a", f"{SF}#b", "--nodes", "1500",
               "--draw-move-number", "20", *runner_flags]
    assert main(command) == 0
    captured = capsys.readouterr()
    games = progress_lines(captured.err, "[")
    assert [line.split()[0] for line in games] == ["[1/2]", "[2/2]"]
    assert sorted(" ".join(line.split()[1:4]) for line in games) == ["a - b", "b - a"]
    out = captured.out.splitlines()
    assert out[0].split()[:3] == ["Rank", "Name", "Elo"]
    assert {line.split()[1] for line in out[1:3]} == {"a", "b"}
    assert re.fullmatch(r"tournament \w+: finished, 2/2 games \(2 played now\)", out[-1])
    assert main([*command, "--no-progress"]) == 0
    again = capsys.readouterr()
    assert progress_lines(again.err, "[") == []
    assert again.out.splitlines()[-1].endswith("finished, 2/2 games (0 played now)")
    # issue 49 §4: the standings as one JSON document, the table's rows and its interval mode
    assert main([*command, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["status"], document["games_done"], document["played_now"]) == (
        "finished", 2, 0)
    standings = document["standings"]
    assert standings["intervals"] == "variance"
    assert {row["name"] for row in standings["ratings"]} == {"a", "b"}
    assert any(line.startswith("+ and -: 95% intervals from each rating's variance")
               for line in out)


def test_a_progress_line_is_one_whole_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 49 §3: two progress lines were seen run together: ``print`` writes a line's text
    and its end apart, and lanes printing at once interleaved them. Each line is now one
    write of the whole line, under one lock."""
    import io
    import sys
    import threading

    from flows.step import print_progress

    writes: list[str] = []

    class Recorder(io.StringIO):
        def write(self, text: str) -> int:
            writes.append(text)
            return len(text)

    monkeypatch.setattr(sys, "stderr", Recorder())
    threads = [threading.Thread(target=lambda n=n: [print_progress(f"lane {n}: line {i}")
                                                    for i in range(200)]) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(writes) == 800
    assert all(re.fullmatch(r"lane \d: line \d+\n", text) for text in writes)
