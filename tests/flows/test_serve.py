"""``chesslab serve`` and ``chesslab trigger`` against real Prefect servers (issues 11 and 32):
the deployments are registered with their schedules, one set per home; a triggered refresh
completes, prints its result and leaves its rows in its own home only; a run that did nothing
says why; bad parameters are refused before a run starts; a failing run is retried the
configured number of times, recorded Failed with its reason (``trigger --watch`` exits 1 with
it), and its schedule stays active; a crashed run's reason is in its logs and the serve log.

The servers are chesslab's own temporary ones (``flows.server``); ``chesslab serve`` runs as a
separate process, as a user runs it. Needs Stockfish (the refresh labels at depth 2).
"""
from __future__ import annotations

import contextlib
import os
import re
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


def named(job: str, home: Path) -> str:
    """A deployment's full name for ``home`` (``chesslab-refresh/refresh`` + the home)."""
    from flows.schedules import home_tag

    return f"{job}-{home_tag(home)}"


def a_home(root: Path, game: Path, schedules: str = SCHEDULES) -> Path:
    """A folder with a schedules file and ``game`` in its watched ``incoming``; the home."""
    (root / "incoming").mkdir(parents=True)
    shutil.copy(game, root / "incoming" / game.name)
    (root / "schedules.toml").write_text(schedules)
    return root / "home"


def start_serve(root: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``chesslab serve`` of the home under ``root``, logging to ``root/serve.log``."""
    with open(root / "serve.log", "ab") as log:
        return subprocess.Popen([sys.executable, "-m", "flows.cli", "serve", "--config",
                                 str(root / "schedules.toml")],
                                env={**env, "CHESSLAB_HOME": str(root / "home")}, stdout=log,
                                stderr=subprocess.STDOUT, cwd=ROOT, process_group=0)


@pytest.fixture
def served(tmp_path: Path, stockfish_path: str,
           monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A temporary Prefect server (with its own database) and ``chesslab serve`` on it for
    two homes: A watches the Opera game, B four EPD positions."""
    from flows.server import temporary_server

    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect_home"))
    homes = {"a": a_home(tmp_path / "a", FIXTURES / "opera.pgn"),
             "b": a_home(tmp_path / "b", FIXTURES / "terminal.epd")}
    with temporary_server(tmp_path / "server") as url:
        env = {**os.environ, "PREFECT_API_URL": url}
        serves = [start_serve(tmp_path / name, env) for name in homes]
        try:
            yield {"url": url, "env": env, "homes": homes,
                   "logs": {name: tmp_path / name / "serve.log" for name in homes}}
        finally:
            for serve in serves:
                stop(serve)


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


@contextlib.contextmanager
def client_of(url: str) -> Iterator[Any]:
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(updates={PREFECT_API_URL: url}), \
            get_client(sync_client=True) as client:
        yield client


def read_deployments(url: str, names: list[str], timeout_s: float = 180.0) -> dict[str, Any]:
    """The deployments of ``names`` once ``chesslab serve`` has registered them all."""
    from prefect.exceptions import ObjectNotFound

    deadline = time.monotonic() + timeout_s
    with client_of(url) as client:
        while True:
            try:
                return {name: client.read_deployment_by_name(name) for name in names}
            except ObjectNotFound:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)


def read_flow_run(url: str, flow_run_id: Any) -> Any:
    with client_of(url) as client:
        return client.read_flow_run(flow_run_id)


def final_flow_run(url: str, flow_run_id: Any, timeout_s: float = 180.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while not (run := read_flow_run(url, flow_run_id)).state.is_final():
        assert time.monotonic() < deadline, run.state
        time.sleep(1)
    return run


def runs_of(url: str, deployment_id: Any) -> int:
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId

    with client_of(url) as client:
        return len(client.read_flow_runs(deployment_filter=DeploymentFilter(
            id=DeploymentFilterId(any_=[deployment_id]))))


def logs_of(url: str, flow_run_ids: list[Any]) -> list[str]:
    """The messages of the API's log records of these runs."""
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId

    with client_of(url) as client:
        return [log.message for log in client.read_logs(log_filter=LogFilter(
            flow_run_id=LogFilterFlowRunId(any_=flow_run_ids)), limit=200)]


def trigger(env: dict[str, str], home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "flows.cli", "trigger", *args, "--poll", "1"],
                          env={**env, "CHESSLAB_HOME": str(home)}, capture_output=True,
                          text=True, cwd=ROOT, timeout=300)


def trigger_here(url: str, home: Path, capsys: pytest.CaptureFixture[str],
                 monkeypatch: pytest.MonkeyPatch, *args: str
                 ) -> subprocess.CompletedProcess[str]:
    """``chesslab trigger`` in this process (a second Python start costs seconds)."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from flows.cli import main

    monkeypatch.setenv("CHESSLAB_HOME", str(home))
    monkeypatch.setenv("PREFECT_LOGGING_LEVEL",   # main() sets it: undone after the test
                       os.environ.get("PREFECT_LOGGING_LEVEL", "CRITICAL"))
    capsys.readouterr()
    with temporary_settings(updates={PREFECT_API_URL: url}):
        code = main(["trigger", *args, "--poll", "1"])
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, out, err)


def run_id_of(done: subprocess.CompletedProcess[str]) -> str:
    return done.stdout.split("(")[1].split(")")[0]


def counts(home: Path) -> tuple[int, int]:
    """(positions, depth-2 labels) of ``home``'s warehouse."""
    con = connect(Lake(home))
    row = con.execute("select (select count(*) from positions), "
                      "(select count(*) from labels where depth = 2)").fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def test_served_deployments_run_and_fail_as_documented(
        served: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    url, env = served["url"], served["env"]

    def here(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return trigger_here(url, home, capsys, monkeypatch, *args)

    home, other = served["homes"]["a"], served["homes"]["b"]
    names = {named(job, h): (job, value) for h in (home, other)
             for job, value in DEPLOYMENTS.items()}
    deployments = read_deployments(url, list(names))
    for name, (_, (field, value)) in names.items():
        deployment = deployments[name]
        schedule = deployment.schedules[0]
        assert schedule.active and not deployment.paused
        got = schedule.schedule.cron if field == "cron" \
            else schedule.schedule.interval.total_seconds()
        assert got == value, name
    refresh_a = deployments[named("chesslab-refresh/refresh", home)]
    assert refresh_a.parameters["label"] == {"depths": [2], "workers": 1}
    assert refresh_a.parameters["home"] == str(home)

    # a refresh from home A runs on A only, and prints what it did
    done = trigger(env, home, "refresh", "--watch")
    assert done.returncode == 0, done.stderr + served["logs"]["a"].read_text()
    assert ": Completed" in done.stdout
    incoming = tmp_path / "a" / "incoming"
    assert f"{incoming}: 1 games, 34 new positions; engine stockfish" in done.stdout
    assert counts(home) == (34, 34)
    assert not (other / "lake" / "positions").exists()          # B untouched
    refreshed = run_id_of(done)
    artifacts = artifacts_of(url, refreshed)
    assert any(f"| {incoming} | 1 | 1 | 34 | 0 | 34 | 34 | 0 |" in a for a in artifacts)
    with client_of(url) as client:   # the refresh's step runs hold chesslab's lines
        messages = logs_of(url, [r.id for r in client.read_flow_runs()])
    assert f"ingest: [1/1] {incoming / 'opera.pgn'}: 1 games, 0 records, 34 new positions, " \
           f"0 errors" in messages
    done_line = re.compile(r"label: 34/34 positions \(100%\), [^;]*; 34 labels, 0 errors")
    assert done_line.search(" ".join(messages)), messages
    assert done_line.search(served["logs"]["a"].read_text())

    done = here(other, "refresh", "--watch")              # B's own, from B
    assert done.returncode == 0, done.stderr + served["logs"]["b"].read_text()
    assert (counts(home), counts(other)) == ((34, 34), (4, 4))

    # a trigger from a home nobody serves, or for another home's warehouse, is refused
    from warehouse.catalog import create_warehouse

    create_warehouse(tmp_path / "c" / "home")                     # a warehouse, not served
    elsewhere = here(tmp_path / "c" / "home", "refresh", "--watch")
    assert elsewhere.returncode == 2
    assert "no deployment 'chesslab-refresh/refresh-home-" in elsewhere.stderr
    assert str(home) in elsewhere.stderr and str(other) in elsewhere.stderr
    hijack = here(home, "refresh", "--param", f'home="{other}"', "--watch")
    assert hijack.returncode == 2 and "--param home: a run works on the home" in hijack.stderr

    # bad parameters are refused before any run starts, naming the mistake
    retrain = deployments[named("chesslab-retrain/retrain-nnue", home)]
    before = runs_of(url, retrain.id)
    typo = here(home, "retrain", "nnue", "--param", "min_new_label=5", "--watch")
    assert typo.returncode == 2, typo.stdout
    assert "--param min_new_label: chesslab-retrain/retrain-nnue-home-" in typo.stderr
    assert "(it takes kind, min_new_labels)" in typo.stderr
    wrong = here(home, "retrain", "nnue", "--param", "min_new_labels=many", "--watch")
    assert wrong.returncode == 2
    assert "--param min_new_labels='many': want an integer" in wrong.stderr
    assert runs_of(url, retrain.id) == before

    # a run that did nothing says why
    nothing = here(home, "retrain", "nnue", "--watch")     # no model yet
    assert nothing.returncode == 0 and ": Completed" in nothing.stdout
    assert "retrain nnue: not due: no finished nnue model yet" in nothing.stdout

    # a run that fails on its input: Failed at once with its reason (issue 49 §4: it was
    # tried again, a minute apart); the schedule stays active
    failed = trigger(env, home, "refresh", "--param", 'folders=["/nonexistent/in"]', "--watch")
    assert failed.returncode == 1
    assert "ended Failed" in failed.stderr and "/nonexistent/in" in failed.stderr
    run = read_flow_run(url, run_id_of(failed))
    assert (run.state.name, run.run_count) == ("Failed", 1)
    assert "trying again" not in served["logs"]["a"].read_text()
    again = read_deployments(url, [named("chesslab-refresh/refresh", home)])
    assert list(again.values())[0].schedules[0].active

    # a run started from the UI or the API with a parameter its flow does not take crashes
    # before the flow starts: the reason is in its logs, the serve log and trigger's report
    from flows.schedules import failure_reason

    with client_of(url) as client:
        crashed = client.create_flow_run_from_deployment(
            retrain.id, parameters={"min_new_label": 5})
    run = final_flow_run(url, crashed.id)
    assert run.state.name == "Crashed"
    reason = "but was provided with parameters ['home', 'kind', 'min_new_labels', " \
             "'min_new_label']"
    with client_of(url):
        assert reason in failure_reason(run)
    assert any(reason in m for m in logs_of(url, [crashed.id]))
    assert reason in served["logs"]["a"].read_text()


def artifacts_of(url: str, flow_run_id: Any) -> list[str]:
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    with client_of(url) as client:
        return [str(a.data) for a in client.read_artifacts(artifact_filter=ArtifactFilter(
            flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id])))]


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
    from flows.ingest import INGEST, IngestJob
    from flows.label import LABEL
    from flows.server import temporary_server
    from flows.step import LocalRunner, run_step
    from flows.train import TRAIN, TrainJob
    from pipelines.ingest import IngestConfig
    from pipelines.kinds.nnue.config import NnueConfig
    from pipelines.label import LabelConfig
    from pipelines.models.registry import resolve_model
    from pipelines.train.config import preset

    lake = Lake(home)
    label = LabelConfig.tiny(depths=(4,), limit=None, batch_size=200, workers=2)
    run_step(INGEST, IngestJob((FIXTURES / "selfplay.pgn",), IngestConfig.tiny()), lake)
    run_step(LABEL, label, lake)
    LocalRunner(show_progress=False).run(
        TRAIN, TrainJob("nnue", preset(NnueConfig, "tiny", name="nnue-tiny")), Lake(home))
    run_step(INGEST, IngestJob((ROOT / "tests" / "fixtures" / "pgn" / "capablanca_latin1.pgn",), IngestConfig.tiny()), lake)
    run_step(LABEL, label, lake)
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
                read_deployments(url, [named("chesslab-retrain/retrain-nnue", home),
                                       named("chesslab-evaluate/evaluate", home)])
                done = trigger(env, home, "retrain", "nnue", "--watch")
                assert done.returncode == 0, done.stderr + (tmp_path / "serve.log").read_text()
                model = resolve_model(lake, "nnue@latest")
                assert model.model_id == "nnue@2" and model.name == "nnue-tiny"
                deadline = time.monotonic() + 400
                while resolve_model(lake, "nnue@2").status not in ("evaluated", "promoted"):
                    assert time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
                    time.sleep(2)
            finally:
                stop(serve)
