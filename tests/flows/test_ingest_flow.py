"""The ``ingest`` Prefect flow: one task per file, the same rows as the plain pipeline."""
from __future__ import annotations

from pathlib import Path

import pytest

from flows.ingest import ingest
from flows.runtime import run_flow
from pipelines.ingest import IngestConfig
from warehouse import Lake, connect

PGN = Path(__file__).parent.parent / "fixtures" / "pgn"


@pytest.mark.usefixtures("prefect_harness")
def test_ingest_flow_runs_one_task_per_file(home: Path) -> None:
    """Guards the flow wiring: every file gets a task, summaries come back in order, and a
    second run skips every file (sources keyed by SHA-256)."""
    paths = [str(PGN / "quirks.pgn"), str(PGN / "malformed.pgn")]
    first = run_flow(ingest, workers=1, paths=paths, config=IngestConfig.tiny(),
                     home=str(home))
    assert [(Path(s.path).name, s.games, s.errors) for s in first] == [
        ("quirks.pgn", 5, 0), ("malformed.pgn", 6, 5)]
    second = run_flow(ingest, workers=1, paths=paths, config=IngestConfig.tiny(),
                      home=str(home))
    assert all(s.skipped for s in second)
    con = connect(Lake(home))
    assert con.execute("select count(*) from sources").fetchone() == (2,)
    assert con.execute("select count(*) from games").fetchone() == (11,)
