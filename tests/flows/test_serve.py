"""``chesslab serve`` and ``chesslab trigger`` against a real temporary Prefect server (issue 11):
the deployments are registered with their schedules; a triggered refresh completes and its
rows are in the warehouse; a failing run is retried the configured number of times, recorded
Failed with its reason (``trigger --watch`` exits 1 with it), and its schedule stays active.

The server is chesslab's own temporary one (``flows.server``); ``chesslab serve`` runs as a
separate process, as a user runs it. Needs Stockfish (the refresh labels at depth 2).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from warehouse import Lake, connect

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "label_engines"
SCHEDULES = """
[runs]
retries = 1
retry_delay_s = 1

[refresh]
cron = "30 3 * * *"
folders = ["incoming"]
depths = [2]
workers = 1

[retrain]
cron = "0 5 * * 1"
kinds = ["nnue", "volatility"]
min_new_labels = 5

[evaluate]
interval_s = 3600
"""
DEPLOYMENTS = {
    "chesslab-refresh/refresh": ("cron", "30 3 * * *"),
    "chesslab-retrain/retrain-nnue": ("cron", "0 5 * * 1"),
    "chesslab-retrain/retrain-volatility": ("cron", "0 5 * * 1"),
    "chesslab-evaluate/evaluate": ("interval", 3600.0),
}


@pytest.fixture
def served(tmp_path: Path, home: Path, stockfish_path: str,
           monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A temporary Prefect server (with its own database) and ``chesslab serve`` on it, with
    the Opera game in the watched folder."""
    from flows.server import temporary_server

    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect_home"))

    (tmp_path / "incoming").mkdir()
    shutil.copy(FIXTURES / "opera.pgn", tmp_path / "incoming" / "opera.pgn")
    config = tmp_path / "schedules.toml"
    config.write_text(SCHEDULES)
    with temporary_server(tmp_path / "server") as url:
        env = {**os.environ, "PREFECT_API_URL": url, "CHESSLAB_HOME": str(home)}
        log = open(tmp_path / "serve.log", "wb")  # noqa: SIM115 (closed below)
        serve = subprocess.Popen([sys.executable, "-m", "flows.cli", "serve", "--config",
                                  str(config)], env=env, stdout=log, stderr=subprocess.STDOUT,
                                 cwd=ROOT, process_group=0)
        try:
            yield {"url": url, "env": env, "log": tmp_path / "serve.log"}
        finally:
            stop(serve)
            log.close()


def stop(serve: subprocess.Popen[bytes]) -> None:
    """End ``chesslab serve`` and whatever flow run it still has going (its process group):
    politely, then by force, so no run outlives the test."""
    serve.terminate()
    try:
        serve.wait(timeout=30)
    except subprocess.TimeoutExpired:
        serve.kill()
        serve.wait()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(serve.pid, signal.SIGKILL)


def read_deployments(url: str, names: list[str], timeout_s: float = 120.0) -> dict[str, Any]:
    """The deployments of ``names`` once ``chesslab serve`` has registered them all."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound
    from prefect.settings import PREFECT_API_URL, temporary_settings

    deadline = time.monotonic() + timeout_s
    with temporary_settings(updates={PREFECT_API_URL: url}), \
            get_client(sync_client=True) as client:
        while True:
            try:
                return {name: client.read_deployment_by_name(name) for name in names}
            except ObjectNotFound:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)


def read_flow_run(url: str, flow_run_id: str) -> Any:
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(updates={PREFECT_API_URL: url}), \
            get_client(sync_client=True) as client:
        return client.read_flow_run(flow_run_id)


def trigger(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "flows.cli", "trigger", *args, "--poll", "1"],
                          env=env, capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_served_deployments_run_and_fail_as_documented(served: dict[str, Any],
                                                       home: Path) -> None:
    deployments = read_deployments(served["url"], list(DEPLOYMENTS))
    for name, (field, value) in DEPLOYMENTS.items():
        deployment = deployments[name]
        schedule = deployment.schedules[0]
        assert schedule.active and not deployment.paused
        got = schedule.schedule.cron if field == "cron" \
            else schedule.schedule.interval.total_seconds()
        assert got == value, name
    assert deployments["chesslab-refresh/refresh"].parameters["label"] == {
        "depths": [2], "workers": 1}

    done = trigger(served["env"], "refresh", "--watch")
    assert done.returncode == 0, done.stderr + served["log"].read_text()
    assert ": Completed" in done.stdout
    con = connect(Lake(home))
    assert con.execute("select count(*) from positions").fetchone() == (34,)
    assert con.execute("select count(*) from labels where depth = 2").fetchone() == (34,)

    failed = trigger(served["env"], "refresh", "--param", 'folders=["/nonexistent/in"]',
                     "--watch")
    assert failed.returncode == 1
    assert "ended Failed" in failed.stderr and "/nonexistent/in" in failed.stderr
    run_id = failed.stdout.split("(")[1].split(")")[0]
    run = read_flow_run(served["url"], run_id)
    assert (run.state.name, run.run_count) == ("Failed", 2)      # one retry, then Failed
    again = read_deployments(served["url"], ["chesslab-refresh/refresh"])
    assert again["chesslab-refresh/refresh"].schedules[0].active

    nothing = trigger(served["env"], "retrain", "nnue", "--watch")   # no model yet
    assert nothing.returncode == 0 and ": Completed" in nothing.stdout


EVALUATE_TINY = """
[retrain]
kinds = ["nnue"]
min_new_labels = 5

[evaluate]
interval_s = 3600
against = "alphabeta:eval=hce-simple,hash=1"
sprt = [0, 200]
sprt_alpha = 0.2
sprt_beta = 0.2
max_games = 2
ladder = ""
nodes = 1000
max_plies = 160
concurrency = 2
openings = "{openings}"
"""


@pytest.mark.slow
def test_a_served_retrain_trains_a_new_version_which_gets_evaluated(
        tmp_path: Path, home: Path, stockfish_path: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """nnue@1 trained on selfplay.pgn's depth-4 labels; new labels of the same engine and depth
    arrive (the Capablanca game); a triggered retrain trains nnue@2 from nnue@1's config and
    the new version is evaluated by the evaluate deployment without anyone asking."""
    from flows.server import temporary_server
    from flows.step import LocalRunner
    from flows.train import TRAIN, TrainJob
    from pipelines.ingest import IngestConfig, ingest_paths
    from pipelines.label import LabelConfig, label_positions
    from pipelines.train import NnueConfig, preset, resolve_model

    lake = Lake(home)
    label = LabelConfig.tiny(depths=(4,), limit=None, batch_size=200, workers=2)
    ingest_paths(lake, [FIXTURES / "selfplay.pgn"], IngestConfig.tiny())
    label_positions(lake, label)
    LocalRunner(show_progress=False).run(
        TRAIN, TrainJob("nnue", preset(NnueConfig, "tiny", name="nnue-tiny")), str(home))
    ingest_paths(lake, [ROOT / "tests" / "fixtures" / "pgn" / "capablanca_latin1.pgn"],
                 IngestConfig.tiny())
    label_positions(lake, label)
    config = tmp_path / "schedules.toml"
    config.write_text(EVALUATE_TINY.format(
        openings=ROOT / "tests" / "fixtures" / "openings" / "two_positions.epd"))
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect_home"))
    with temporary_server(tmp_path / "server") as url:
        env = {**os.environ, "PREFECT_API_URL": url, "CHESSLAB_HOME": str(home)}
        with open(tmp_path / "serve.log", "wb") as log:
            serve = subprocess.Popen([sys.executable, "-m", "flows.cli", "serve", "--config",
                                      str(config)], env=env, stdout=log,
                                     stderr=subprocess.STDOUT, cwd=ROOT, process_group=0)
            try:
                read_deployments(url, ["chesslab-retrain/retrain-nnue", "chesslab-evaluate/evaluate"])
                done = trigger(env, "retrain", "nnue", "--watch")
                assert done.returncode == 0, done.stderr + (tmp_path / "serve.log").read_text()
                model = resolve_model(lake, "nnue@latest")
                assert model.model_id == "nnue@2" and model.name == "nnue-tiny"
                deadline = time.monotonic() + 400
                while resolve_model(lake, "nnue@2").status not in ("evaluated", "promoted"):
                    assert time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
                    time.sleep(2)
            finally:
                stop(serve)
