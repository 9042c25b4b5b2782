"""Prefect runs carry chesslab's lines in their logs and leave their summary as a markdown
artifact (issue 32 §2, issue 37 §3), on the session's Prefect test server."""
from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import chess.pgn

ROOT = Path(__file__).resolve().parents[2]
OPERA = ROOT / "tests" / "fixtures" / "label_engines" / "opera.pgn"


def logs_with(text: str, timeout_s: float = 60.0) -> list[Any]:
    """The API's log records whose message holds ``text`` (they are sent in batches)."""
    from prefect.client.orchestration import get_client

    deadline = time.monotonic() + timeout_s
    with get_client(sync_client=True) as client:
        while True:   # (Prefect's text search needs SQL concat, which SQLite lacks)
            found, offset = [], 0
            while page := client.read_logs(limit=200, offset=offset):
                found += [log for log in page if text in log.message]
                offset += len(page)
            if found or time.monotonic() > deadline:
                return found
            time.sleep(0.5)


def artifacts_of(flow_run_id: Any) -> list[Any]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    with get_client(sync_client=True) as client:
        return client.read_artifacts(artifact_filter=ArtifactFilter(
            flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id])))


def test_a_step_run_logs_its_progress_and_leaves_its_summary_table(
        home: Path, prefect_harness: None) -> None:
    from flows.ingest import INGEST, IngestJob
    from flows.prefect_runner import PrefectRunner
    from pipelines.ingest import IngestConfig
    from warehouse import Lake

    with PrefectRunner(home, show_progress=False) as runner:
        (summary,) = runner.run(INGEST, IngestJob((str(OPERA),), IngestConfig.tiny()),
                                Lake(home))
    game = chess.pgn.read_game(OPERA.open(encoding="utf-8"))
    assert game is not None
    plies = len(list(game.mainline_moves()))
    assert (summary.games, summary.new_positions) == (1, plies + 1)   # no repetition

    (planned,) = logs_with(f"ingest: 1 files into {home}")     # the plan's line
    (done,) = logs_with(f"{OPERA}: 1 games, 0 records, {plies + 1} new positions, 0 errors")
    assert planned.flow_run_id == done.flow_run_id and planned.level == logging.INFO
    (artifact,) = artifacts_of(planned.flow_run_id)
    assert artifact.type == "markdown" and artifact.key == "chesslab-ingest"
    table = str(artifact.data).splitlines()
    header = [c.strip() for c in table[2].strip("|").split("|")]
    row = dict(zip(header, [c.strip() for c in table[4].strip("|").split("|")], strict=True))
    assert (row["path"], row["games"], row["new_positions"], row["errors"]) == (
        str(OPERA), "1", str(plies + 1), "0")


def test_chesslab_log_records_inside_a_run_reach_its_logs(prefect_harness: None,
                                                         tmp_path: Path) -> None:
    """``pipelines`` logs through ``logging`` (no Prefect): a record made in a run, on its
    thread or a task's, is in that run's logs; one made outside any run goes nowhere
    (and raises nothing)."""
    from prefect import flow, task

    from flows import run_logs

    run_logs.install()
    marker = f"bridge-{tmp_path.name}"
    logging.getLogger("pipelines.ops.due").warning("%s outside a run", marker)

    @task
    def in_task() -> None:
        logging.getLogger("engines.uci").info("%s in a task", marker)

    @flow
    def in_flow() -> None:
        logging.getLogger("pipelines.ingest").info("%s in the flow", marker)
        in_task.submit().result()

    state = in_flow(return_state=True)
    flow_run_id = state.state_details.flow_run_id
    in_flow_log = logs_with(f"{marker} in the flow")
    in_task_log = logs_with(f"{marker} in a task")
    assert [r.flow_run_id for r in in_flow_log + in_task_log] == [flow_run_id] * 2
    assert in_task_log[0].task_run_id is not None
    assert in_flow_log[0].name == "pipelines.ingest"
    assert logs_with(f"{marker} outside a run", timeout_s=2) == []
