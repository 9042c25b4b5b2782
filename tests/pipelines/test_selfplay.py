"""Self-play (issue 9, item 1): games from varied starts through the ingest path, resumable,
deterministic, on a process pool; then labelled like any other positions."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pytest

from flows.cli import main
from flows.selfplay import SELFPLAY
from flows.step import LocalRunner
from pipelines.selfplay import (
    SelfplayConfig,
    SelfplayError,
    SelfplaySummary,
    plan_selfplay,
)
from pipelines.selfplay.game import play_game
from pipelines.selfplay.players import open_mover
from pipelines.tournament.openings import Opening
from warehouse import Lake, connect

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"


def run_selfplay(config: SelfplayConfig, home: Path) -> SelfplaySummary:
    """The selfplay step on the local runner (tests/flows/test_models_flow.py runs it on
    both runners)."""
    return LocalRunner(show_progress=False).run(SELFPLAY, config, Lake(home))


def test_plan_looks_up_only_the_runs_batch_files(home: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan finds which of the run's batch files are ingested by their SHA-256 in the key
    index of sources (as ingest does), without reading every source of the warehouse: the
    batch file ingested here is not planned again, the one ingested only into another home is,
    and another source of this warehouse changes nothing."""
    from pipelines.ingest import IngestConfig, ingest_file
    from pipelines.ingest.sources import source_for

    played = run_selfplay(SelfplayConfig.tiny(), tmp_path / "other")
    shutil.copytree(tmp_path / "other" / "selfplay", home / "selfplay")
    first, second = sorted((home / "selfplay" / played.run_id).glob("batch-*.pgn"))
    lake = Lake(home)
    for path in (first, FIXTURES / "pgn" / "quirks.pgn"):
        source = source_for(path)
        assert source is not None
        assert ingest_file(lake, source, IngestConfig(workers=1)).games > 0
    read: list[str] = []
    real_read = Lake.read

    def recording_read(self: Lake, name: str, *args: Any, **kwargs: Any) -> Any:
        read.append(name)
        return real_read(self, name, *args, **kwargs)

    monkeypatch.setattr(Lake, "read", recording_read)
    plan = plan_selfplay(lake, SelfplayConfig.tiny())
    assert (plan.run_id, plan.batches, plan.games_done) == (played.run_id, (), 4)
    assert plan.to_ingest == (str(second),)
    assert "sources" not in read
    monkeypatch.undo()
    assert plan_selfplay(Lake(tmp_path / "other"), SelfplayConfig.tiny()).to_ingest == ()


def lake_counts(lake: Lake) -> tuple[int, int, int]:
    """Rows of games, moves and positions in the Parquet files themselves (not the views)."""
    return tuple(lake.read(name, columns=[key]).num_rows for name, key in (
        ("games", "game_id"), ("moves", "game_id"), ("positions", "position_key")))


def distinct_games(lake: Lake) -> int:
    return pc.count_distinct(lake.read("games", columns=["game_id"]).column("game_id")).as_py()


def test_tiny_run_writes_exactly_its_games_and_a_rerun_adds_nothing(home: Path) -> None:
    """Four games at 200 nodes after two random plies: the summary's games and plies are the
    rows of games and moves in the files; the games carry how they were made; running the
    same command again plays and writes nothing."""
    lake = Lake(home)
    summary = run_selfplay(SelfplayConfig.tiny(), home)
    assert (summary.games, summary.plies, summary.batches_ingested) == (4, 577, 2)
    assert summary.terminations == {"checkmate": 3, "max_plies": 1}
    games, moves, positions = lake_counts(lake)
    assert (games, moves) == (4, summary.plies)
    assert positions == summary.new_positions == 573
    con = connect(lake)
    rows = con.execute("select event, white, result, termination, plies, tags from games "
                       "order by game_index, source_id").fetchall()
    assert {r[0] for r in rows} == {"chesslab selfplay"}
    assert {r[1] for r in rows} == {"alphabeta:eval=hce,hash=1"}
    assert sum(r[4] for r in rows) == 577
    assert sorted(r[3] for r in rows) == ["adjudication", "normal", "normal", "normal"]
    tags = json.loads(rows[0][5])
    assert (tags["SelfplayEngine"], tags["SelfplayLimit"], tags["SelfplaySeed"],
            tags["SelfplayRandomPlies"], tags["SelfplayRun"]) == (
        "alphabeta:eval=hce,hash=1", "nodes=200", "1", "2", summary.run_id)
    assert tags["SelfplayBatch"] in ("batch-000000-000001", "batch-000002-000003")
    again = run_selfplay(SelfplayConfig.tiny(), home)
    assert (again.games, again.plies, again.new_positions, again.games_in_run) == (0, 0, 0, 4)
    assert lake_counts(lake) == (4, 577, 573)


def test_same_seed_same_games_other_seed_other_games(tmp_path: Path) -> None:
    """Game g is seeded by (seed, g): two homes with the same config hold byte-identical batch
    files (and so the same game ids); another seed plays other games."""
    first = run_selfplay(SelfplayConfig.tiny(games=2), tmp_path / "a")
    second = run_selfplay(SelfplayConfig.tiny(games=2), tmp_path / "b")
    other = run_selfplay(SelfplayConfig.tiny(games=2, seed=2), tmp_path / "c")
    batch = "batch-000000-000001.pgn"
    text = (Path(first.folder) / batch).read_text()
    assert first.run_id == second.run_id != other.run_id
    assert text == (Path(second.folder) / batch).read_text()
    assert text != (Path(other.folder) / batch).read_text()
    uci = [Lake(tmp_path / h).read("moves", columns=["uci"]).column("uci").to_pylist()
           for h in "abc"]
    assert uci[0] == uci[1] != uci[2]


def test_more_games_later_extends_the_same_run(home: Path) -> None:
    """--games is not part of the run: asking for 3 more games plays only those (batches fill
    their block first), and the first games are not played again."""
    run_selfplay(SelfplayConfig.tiny(games=3), home)
    more = run_selfplay(SelfplayConfig.tiny(games=6), home)
    names = sorted(p.name for p in Path(more.folder).glob("batch-*.pgn"))
    assert names == ["batch-000000-000001.pgn", "batch-000002-000002.pgn",
                     "batch-000003-000003.pgn", "batch-000004-000005.pgn"]
    assert (more.games, more.games_in_run, distinct_games(Lake(home))) == (3, 6, 6)


def test_in_process_and_uci_alphabeta_play_the_same_game() -> None:
    """The in-process searcher is the engine of `python -m engines.uci alphabeta`: same options,
    same node limit, same moves (guards the spec-to-searcher mapping)."""
    games = []
    for in_process in (True, False):
        mover = open_mover("alphabeta:eval=hce-simple,hash=1", 300, None, in_process)
        try:
            games.append(play_game(mover, 5, Opening(), 3, 7, 80))
        finally:
            mover.close()
    assert [c.move for c in games[0].moves] == [c.move for c in games[1].moves]
    assert games[0].plies == games[1].plies > 3


def test_stockfish_over_uci_from_an_epd_opening(home: Path, stockfish_path: str) -> None:
    """A Debian engine plays over UCI; game g starts from EPD opening g mod 2 (a SetUp game
    with its FEN tag), and the ingest replays every ply from it."""
    config = SelfplayConfig.tiny(engine="stockfish?Threads=1&Hash=16", games=3, nodes=400,
                                 random_plies=0, openings=str(FIXTURES / "openings" /
                                                              "two_positions.epd"))
    summary = run_selfplay(config, home)
    lake = Lake(home)
    assert lake_counts(lake)[:2] == (3, summary.plies)
    con = connect(lake)
    starts = con.execute("select start_fen from games order by tags->>'SelfplayGame'").fetchall()
    epd = (FIXTURES / "openings" / "two_positions.epd").read_text().split("\n")
    fens = [" ".join(line.split()[:4]) for line in epd if line.strip()]
    assert [" ".join(s[0].split()[:4]) for s in starts] == [fens[0], fens[1], fens[0]]
    assert con.execute("select count(*) from games where error is not null").fetchone() == (0,)


def test_bad_spec_and_bad_limits_are_one_line_errors(home: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown engine, an engine that cannot start and a missing limit: exit 2, one line
    naming the engine or option, nothing written."""
    base = ["--home", str(home), "selfplay", "--no-prefect", "--games", "2", "--workers", "1"]
    assert main([*base, "--engine", "nosuch", "--nodes", "100"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("chesslab selfplay: error: selfplay engine 'nosuch': unknown engine")
    assert len(err.splitlines()) == 1
    assert main([*base, "--engine", "uci:/bin/false", "--nodes", "100"]) == 2
    err = capsys.readouterr().err.strip()
    assert "engine 'uci:/bin/false' failed to start" in err and len(err.splitlines()) == 1
    assert main([*base, "--engine", "stockfish"]) == 2
    assert "give a search limit" in capsys.readouterr().err
    with pytest.raises(SelfplayError, match="alphabeta:eval=nope"):
        run_selfplay(SelfplayConfig.tiny(engine="alphabeta:eval=nope"), home)
    assert not Lake(home).parts("games")
    assert not list((home / "selfplay").rglob("batch-*.pgn"))


def test_kill_9_halfway_then_rerun_ends_with_exactly_n_games(home: Path) -> None:
    """`chesslab selfplay` on a pool of two processes killed with SIGKILL (its whole process
    group) after its first batch: the rerun plays only the missing games and the warehouse
    ends with exactly 12 games, each once, and every ply of them."""
    command = [sys.executable, "-m", "flows.cli", "--home", str(home), "selfplay",
               "--no-prefect", "--engine", "alphabeta:eval=hce,hash=1", "--games", "12",
               "--nodes", "2000", "--random-plies", "4", "--batch-games", "2",
               "--workers", "2", "--max-plies", "200"]
    run = subprocess.Popen(command, cwd=ROOT, start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lake = Lake(home)
    deadline = time.monotonic() + 120
    while not lake.parts("sources") and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(run.pid, signal.SIGKILL)
    assert run.wait() == -signal.SIGKILL
    plan = plan_selfplay(lake, SelfplayConfig.tiny(engine="alphabeta:eval=hce,hash=1",
                                                   games=12, nodes=2000, random_plies=4))
    assert 0 < plan.games_done < 12, "the run was not killed halfway"

    rerun = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert f"{12 - plan.games_done} games played now (12 in the run)" in rerun.stdout
    assert distinct_games(lake) == 12
    con = connect(lake)
    plies = con.execute("select sum(plies) from games").fetchone()[0]
    assert con.execute("select count(*) from moves").fetchone() == (plies,)
    assert not list(Path(plan.folder).glob(".*.tmp"))


def test_label_the_selfplay_positions(home: Path, stockfish_path: str,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """`chesslab label` labels self-play positions like any others: every position at both
    depths."""
    summary = run_selfplay(SelfplayConfig.tiny(games=2), home)
    assert main(["--home", str(home), "label", "--no-prefect", "--depths", "1,2",
                 "--workers", "1"]) == 0
    out = capsys.readouterr().out
    n = summary.new_positions
    assert f"{n}/{n} positions labelled, {2 * n} labels written, 0 errors" in out
    con = connect(Lake(home))
    assert con.execute("select count(*) from labels").fetchone() == (2 * n,)
