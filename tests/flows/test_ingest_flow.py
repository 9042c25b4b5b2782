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

    job = IngestJob((str(PGN / "quirks.pgn"),), IngestConfig(workers=2, chunk_games=2))
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
