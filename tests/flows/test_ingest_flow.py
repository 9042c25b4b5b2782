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
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 49 §2: the default ``--workers 2`` was slower than one worker below some size
    (4,000 games 3.6-3.9 s against 1.1-1.7 s, 10,000 games 8.5 s against 4.4 s): the pool's
    start cost more than it saved. A small file is parsed in-process; the first file of at
    least ``pool_from_mb`` (a compressed file's estimated text) starts the pool, once."""
    import pipelines.ingest.run as run
    from pipelines.ingest.run import PoolOnDemand
    from pipelines.ingest.sources import SourceFile

    started: list[int] = []

    class Pool:
        def __init__(self, workers: int) -> None:
            started.append(workers)

        def __exit__(self, *exc: object) -> None:
            return None

    monkeypatch.setattr(run, "RoutedPool", Pool)
    [summary] = run_step(INGEST, IngestJob((PGN / "quirks.pgn",), IngestConfig(workers=2)),
                         Lake(home))
    assert summary.games == 5 and started == []
    text = tmp_path / "games.pgn"
    text.write_bytes(b"x" * 3000)
    packed = tmp_path / "games.pgn.zst"
    packed.write_bytes(b"x" * 1000)          # about 7,000 bytes of text
    with PoolOnDemand(2, pool_from_bytes=5000) as pools:
        assert pools.for_file(SourceFile(text, "pgn", "none")) is None and started == []
        first = pools.for_file(SourceFile(packed, "pgn", "zst"))
        assert isinstance(first, Pool) and started == [2]
        assert pools.for_file(SourceFile(packed, "pgn", "zst")) is first and started == [2]
    with PoolOnDemand(1, pool_from_bytes=0) as pools:
        assert pools.for_file(SourceFile(packed, "pgn", "zst")) is None and started == [2]
