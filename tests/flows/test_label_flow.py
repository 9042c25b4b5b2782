"""The ``label`` step and ``chesslab label`` on both runners: lanes capped at --workers, a
Dask cluster, unit retries, progress lines, and a run killed with SIGKILL that the next run
completes with no gaps and no duplicates."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import duckdb
import pytest

import flows.label
from flows.cli import main
from flows.label import LABEL
from flows.prefect_runner import PrefectRunner
from flows.step import LocalRunner, run_step
from pipelines.label import LabelConfig
from tests.flows.conftest import progress_lines
from warehouse import Lake, connect

ROOT = Path(__file__).resolve().parents[2]
GAMES = ROOT / "tests" / "fixtures" / "label_engines" / "selfplay.pgn"




def raw_counts(lake: Lake) -> dict[tuple[int, int], int]:
    """Rows per (position, depth) in the table's files, duplicates included."""
    labels = lake.read("labels", columns=["position_key", "depth"])  # noqa: F841 (read by SQL)
    rows = duckdb.sql("select position_key, depth, count(*) from labels group by all").fetchall()
    return {(key, depth): count for key, depth, count in rows}


@pytest.fixture
def lake(home: Path, stockfish_path: str) -> Lake:
    return Lake(home)


def test_step_labels_once_on_lanes(runner: object, lake: Lake,
                                   monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str],
        selfplay_positions: list[dict[str, object]]) -> None:
    """Both runners: at most `workers` batches (engines) at once, each batch writing its own
    parts, the same progress lines; a second run finds nothing pending."""
    lake.write("positions", selfplay_positions[:40])
    real = flows.label.label_batch
    running, most = [0], [0]
    lock = threading.Lock()

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            return real(*args, **kwargs)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(flows.label, "label_batch", counted)
    config = LabelConfig.tiny(depths=(2, 3), workers=2, limit=None, batch_size=5)
    first = run_step(LABEL, config, lake, runner)  # type: ignore[arg-type]
    lines = progress_lines(capsys.readouterr().err, "label: ")
    second = run_step(LABEL, config, lake, runner)  # type: ignore[arg-type]
    assert (first.pending, first.positions, first.labels, first.errors) == (40, 40, 80, 0)
    assert lines[0] == f"label: 40 positions to label in 8 batches with {first.engine_id}"
    assert len(lines) == 1 + 8, lines
    assert re.fullmatch(r"label: 40/40 positions \(100%\), [^;]*; 80 labels, 0 errors", lines[-1])
    assert (second.pending, second.labels) == (0, 0)
    assert most[0] == 2, "the thread runner must cap concurrent engines at --workers"
    assert set(raw_counts(lake).values()) == {1} and len(raw_counts(lake)) == 80
    assert len({p.parent for p in lake.parts("labels")}) == 2   # depth=2 and depth=3 folders


def test_retried_unit_does_not_label_twice(runner: object, lake: Lake,
                                           monkeypatch: pytest.MonkeyPatch,
        selfplay_positions: list[dict[str, object]]) -> None:
    """A unit that fails after writing part of its batch is retried by the runner; the retry
    labels only what is still missing (no duplicate rows even in the raw parts)."""
    lake.write("positions", selfplay_positions[:24])
    real = flows.label.label_batch
    failures: list[int] = []

    def fail_halfway(lake_: Lake, config: LabelConfig, engine_id: str, batch: list,
                     run_id: str, pool: object = None):  # type: ignore[no-untyped-def]
        if not failures:
            failures.append(len(batch))
            real(lake_, config, engine_id, batch[:len(batch) // 2], run_id, pool)
            raise RuntimeError("simulated worker failure after a flush")
        return real(lake_, config, engine_id, batch, run_id, pool)

    monkeypatch.setattr(flows.label, "label_batch", fail_halfway)
    config = LabelConfig.tiny(depths=(2, 3), workers=1, batch_size=12, limit=None)
    summary = run_step(LABEL, config, lake, runner)  # type: ignore[arg-type]
    counts = raw_counts(lake)
    assert failures == [12]
    assert len(counts) == 48 and set(counts.values()) == {1}
    assert summary.positions == 24 - 6     # the retry only had the other half left


def live_children() -> set[int]:
    """The pids of this process's children that are still running (zombies left out)."""
    found = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines()
                          if ":\t" in line)
        except OSError:
            continue
        if int(fields.get("PPid", "0")) == os.getpid() and not fields["State"].startswith("Z"):
            found.add(int(status.parent.name))
    return found


def test_the_step_owns_its_engine_pool(lake: Lake, monkeypatch: pytest.MonkeyPatch,
        selfplay_positions: list[dict[str, object]]) -> None:
    """Issue 34: the engines kept warm between batches belong to the step's pool (the one
    ``open_pool`` gives every unit), which quits them when the step ends; a batch run
    without a pool (a unit on a Dask worker) quits the engine it started."""
    from pipelines.label.run import EnginePool, label_batch, plan_labels

    lake.write("positions", selfplay_positions[:24])
    before = live_children()
    real = flows.label.label_batch
    pools: list[object] = []

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        pools.append(args[5])
        return real(*args, **kwargs)

    monkeypatch.setattr(flows.label, "label_batch", spy)
    config = LabelConfig.tiny(depths=(2,), workers=1, limit=12, batch_size=4)  # lanes: this thread
    assert run_step(LABEL, config, lake).labels == 12
    assert len(pools) == 3 and all(isinstance(p, EnginePool) for p in pools)
    assert len({id(p) for p in pools}) == 1
    assert live_children() - before == set()
    plan = plan_labels(lake, LabelConfig.tiny(depths=(2,), batch_size=4))
    result = label_batch(lake, config, plan.identity.engine_id, plan.batches[0], plan.run_id)
    assert result.labels == 4 and live_children() - before == set()


@pytest.mark.parametrize("kind", ["prefect", "local"])
def test_flow_on_a_dask_local_cluster(kind: str, lake: Lake, request: pytest.FixtureRequest,
        selfplay_positions: list[dict[str, object]]) -> None:
    """--cluster: one task per batch on a distributed.LocalCluster with two worker processes,
    each running its own Stockfish and writing its own parts; as Prefect tasks, or (issue 49
    §2: without a Prefect server, where ``--cluster`` needed one) as Dask tasks of the local
    runner."""
    from distributed import LocalCluster

    lake.write("positions", selfplay_positions[:30])
    config = LabelConfig.tiny(depths=(2, 4), workers=2, limit=None, batch_size=8)
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                      dashboard_address=None) as cluster:
        if kind == "prefect":
            request.getfixturevalue("prefect_harness")
            runner: Any = PrefectRunner(lake.home, cluster.scheduler_address)
        else:
            runner = LocalRunner(False, cluster.scheduler_address)
        with runner:
            summary = run_step(LABEL, config, lake, runner)
    counts = raw_counts(lake)
    assert (summary.positions, summary.labels, summary.errors) == (30, 60, 0)
    assert len(counts) == 60 and set(counts.values()) == {1}
    assert len(lake.parts("labels")) >= 4 * 2   # one part per depth per batch


def test_cli_label_no_prefect_and_bad_input(lake: Lake, capsys: pytest.CaptureFixture[str],
        selfplay_positions: list[dict[str, object]]) -> None:
    """`chesslab label --no-prefect` prints a summary; a bad --where exits 2 in one line."""
    lake.write("positions", selfplay_positions[:10])
    home = str(lake.home)
    assert main(["--home", home, "label", "--no-prefect", "--depths", "2,3", "--workers", "1",
                 "--limit", "6"]) == 0
    out = capsys.readouterr().out
    assert "6/6 positions labelled, 12 labels written, 0 errors" in out
    assert main(["--home", home, "label", "--no-prefect", "--where", "nope = 1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("chesslab label: error: bad --where predicate 'nope = 1'")
    assert len(err.splitlines()) == 1
    assert main(["--home", home, "label", "--no-prefect", "--depths", "0"]) == 2


def test_kill_9_halfway_then_rerun_completes_without_gaps_or_duplicates(lake: Lake,
        selfplay_positions: list[dict[str, object]]) -> None:
    """Issue 2: `chesslab label` killed with SIGKILL halfway (its whole process group, engines
    included); the next run labels exactly what is missing: one row per position and depth
    in the raw parts, and no partial part file is visible."""
    rows = selfplay_positions[:300]
    lake.write("positions", rows)
    command = [sys.executable, "-m", "flows.cli", "--home", str(lake.home), "label",
               "--no-prefect", "--depths", "8,9,10", "--workers", "2", "--limit", "300",
               "--batch-size", "40", "--flush-seconds", "0.3"]
    run = subprocess.Popen(command, cwd=ROOT, start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while len(lake.parts("labels")) < 6 and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(run.pid, signal.SIGKILL)
    assert run.wait() == -signal.SIGKILL
    done_before = len(raw_counts(lake))
    assert 0 < done_before < 900, "the run was not killed halfway"

    rerun = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert f"{900 - done_before} labels written, 0 errors" in rerun.stdout
    counts = raw_counts(lake)
    expected = {(int(r["position_key"]), d) for r in rows for d in (8, 9, 10)}
    assert set(counts) == expected and set(counts.values()) == {1}
    # A kill landing inside a write can leave files no Delta commit references; readers of
    # the table never see them (the counts above are over the current version's files).
    con = connect(lake)
    assert con.execute("select count(*) from labels").fetchone() == (900,)
