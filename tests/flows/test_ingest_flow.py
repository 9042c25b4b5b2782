"""The ``ingest`` step on both runners: one unit per file, the same rows as the plain
pipeline, the same progress lines."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flows.ingest import INGEST, IngestJob
from flows.step import run_step
from pipelines.ingest import IngestConfig
from tests.flows.conftest import progress_lines
from warehouse import Lake, connect

PGN = Path(__file__).parent.parent / "fixtures" / "pgn"


def test_ingest_step_runs_one_unit_per_file(home: Path, runner: Any,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Guards the step wiring: every file is a unit, summaries come back in order with a
    progress line each, and a second run skips every file (sources keyed by SHA-256)."""
    paths = (str(PGN / "quirks.pgn"), str(PGN / "malformed.pgn"))
    job = IngestJob(paths, IngestConfig.tiny())
    first = run_step(INGEST, job, Lake(home), runner)
    assert [(Path(s.path).name, s.games, s.errors) for s in first] == [
        ("quirks.pgn", 5, 0), ("malformed.pgn", 6, 5)]
    err = progress_lines(capsys.readouterr().err, "ingest: ")
    assert err[0] == f"ingest: 2 files into {home}"
    assert err[1].startswith("ingest: [1/2] ") and err[1].endswith(
        "quirks.pgn: 5 games, 0 records, 99 new positions, 0 errors")
    assert err[2].startswith("ingest: [2/2] ") and "malformed.pgn: 6 games" in err[2]
    second = run_step(INGEST, job, Lake(home), runner)
    assert all(s.skipped for s in second)
    assert progress_lines(capsys.readouterr().err, "ingest: ")[2].endswith("malformed.pgn: already ingested")
    con = connect(Lake(home))
    assert con.execute("select count(*) from sources").fetchone() == (2,)
    assert con.execute("select count(*) from games").fetchone() == (11,)


def test_ingest_pool_is_a_fork_server_pool(home: Path) -> None:
    """The lake's runtime does not survive a fork after use: a pool of two workers ingests
    through a fork server (each worker in its own process group), with the same rows."""
    from flows.step import LocalRunner
    from pipelines.ingest.run import worker_pool

    with worker_pool(2) as pool:
        assert [p._mp_context.get_start_method() for p in pool.pools] == ["forkserver"] * 2

    job = IngestJob((str(PGN / "quirks.pgn"),), IngestConfig(workers=2, chunk_games=2, pool_from_mb=0))
    [summary] = run_step(INGEST, job, Lake(home), LocalRunner())
    assert (summary.games, summary.errors) == (5, 0)
    con = connect(Lake(home))
    assert con.execute("select count(*) from games").fetchone() == (5,)


def test_an_empty_file_is_said_in_the_summary(home: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 48: an empty input file ended with exit 0 and no word. Each file with nothing in
    it (no byte; no byte once decompressed; blank lines only) is "(empty file)" in the
    summary table and its progress line; a second empty file is empty too, not "already
    ingested" (every empty file has the same SHA-256); a file of no byte is no source."""
    import zstandard

    from flows.cli import main

    files = [tmp_path / "empty.pgn", tmp_path / "also-empty.pgn", tmp_path / "blank.jsonl",
             tmp_path / "nothing.pgn.zst"]
    files[0].write_bytes(b"")
    files[1].write_bytes(b"")
    files[2].write_text("\n\n")
    files[3].write_bytes(zstandard.ZstdCompressor().compress(b""))
    assert main(["--home", str(home), "ingest", "--no-prefect", "--workers", "1",
                 *map(str, files)]) == 0
    captured = capsys.readouterr()
    table = captured.out.splitlines()
    for path in files:
        [row] = [line for line in table if line.startswith(str(path))]
        assert row.startswith(f"{path} (empty file) "), row
    progress = progress_lines(captured.err, "ingest: ")
    assert [line.rsplit(": ", 1)[1] for line in progress[1:]] == ["empty file"] * 4
    assert connect(Lake(home)).execute("select count(*) from sources").fetchone() == (2,)


def test_workers_start_only_for_a_file_worth_their_start(home: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 49 §2: the default ``--workers 2`` was slower than one worker below some size
    (4,000 games 3.6-3.9 s against 1.1-1.7 s, 10,000 games 8.5 s against 4.4 s): the pool's
    start cost more than it saved. By default (one worker per CPU, two here) a small file is
    parsed in-process and the step says so; the first file of at least ``pool_from_mb`` (a
    compressed file's estimated text) starts the pool, once, and says so too. A ``--workers``
    given is used whatever the size."""
    import pipelines.ingest.run as run
    from flows.step import LocalRunner
    from pipelines.ingest.run import InProcess, PoolOnDemand
    from pipelines.ingest.sources import SourceFile

    started: list[int] = []

    class Pool(InProcess):
        def __init__(self, workers: int) -> None:
            started.append(workers)

    monkeypatch.setattr(run, "RoutedPool", Pool)
    monkeypatch.setattr(run, "default_workers", lambda: 2)
    quirks = PGN / "quirks.pgn"
    [summary] = LocalRunner().run(INGEST, IngestJob((quirks,), IngestConfig()), Lake(home))
    assert summary.games == 5 and started == []
    said = progress_lines(capsys.readouterr().err, "ingest: ")
    assert said[1] == ("ingest: 1 worker (this process) for quirks.pgn: 2.1 kB of PGN "
                       "text, under 24.0 MB (--pool-from-mb); --workers N to choose"), said
    assert said[2].startswith("ingest: [1/1] ")

    text = tmp_path / "games.pgn"
    text.write_bytes(b"x" * 3000)
    packed = tmp_path / "games.pgn.zst"
    packed.write_bytes(b"x" * 1000)          # about 7,000 bytes of text
    lines: list[str] = []
    with PoolOnDemand(None, pool_from_bytes=5000) as pools:
        assert pools.for_file(SourceFile(text, "pgn", "none"), lines.append) is None
        assert pools.for_file(SourceFile(text, "pgn", "none"), lines.append) is None
        first = pools.for_file(SourceFile(packed, "pgn", "zst"), lines.append)
        assert isinstance(first, Pool) and started == [2]
        assert pools.for_file(SourceFile(packed, "pgn", "zst"), lines.append) is first
        assert started == [2]
    assert lines == [
        "ingest: 1 worker (this process) for games.pgn: 3.0 kB of PGN text, under 5.0 kB "
        "(--pool-from-mb); --workers N to choose",
        "ingest: 2 workers from games.pgn.zst on: 7.0 kB of PGN text (estimated), at least "
        "5.0 kB (--pool-from-mb)"]
    with PoolOnDemand(1, pool_from_bytes=0) as pools:
        assert pools.for_file(SourceFile(packed, "pgn", "zst")) is None and started == [2]
    with PoolOnDemand(3, pool_from_bytes=10**9) as pools:   # given: whatever the size
        assert isinstance(pools.for_file(SourceFile(text, "pgn", "none"), lines.append), Pool)
    assert started == [2, 3] and len(lines) == 2
