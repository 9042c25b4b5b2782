"""``chesslab serve`` over time (issue 32 §5): its schedules fire (the SQLAlchemy pin), two
homes served on one machine keep to their own warehouses, a killed ``serve`` takes its runs
along and the next one marks the runs it left Crashed, freeing their concurrency slot.

The slow tests run ``chesslab serve`` as a user does, on its own temporary server; each has a
fast counterpart here that guards the same mechanism.
"""
from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement

from warehouse import Lake, connect

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "label_engines"
EVERY_MINUTE = """
[refresh]
cron = "* * * * *"
folders = ["incoming"]
depths = [2]
workers = 1

[retrain]
enabled = false

[evaluate]
enabled = false
"""


def test_the_installed_sqlalchemy_is_the_pinned_one_that_schedules() -> None:
    """Prefect 3.8.8's scheduler fails on every loop under SQLAlchemy 2.1 ("Can't evaluate
    bulk DML statement"): pyproject.toml pins a 2.0 release and it is the one installed."""
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "dependencies"]
    pins = [Requirement(d) for d in dependencies if Requirement(d).name.lower() == "sqlalchemy"]
    assert len(pins) == 1, "SQLAlchemy is not pinned in pyproject.toml"
    assert not pins[0].specifier.contains("2.1.0"), pins[0]
    assert pins[0].specifier.contains(importlib.metadata.version("sqlalchemy"))


def test_each_home_has_its_own_prefect_database(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A temporary server keeps its deployments and runs in its home, whatever database a
    shared Prefect setting names."""
    from flows.server import server_environment

    monkeypatch.setenv("PREFECT_API_DATABASE_CONNECTION_URL", "sqlite+aiosqlite:////shared.db")
    a, b = (server_environment(tmp_path / h / "prefect") for h in ("a", "b"))
    assert a["PREFECT_SERVER_DATABASE_CONNECTION_URL"] == \
        f"sqlite+aiosqlite:///{tmp_path / 'a' / 'prefect' / 'prefect.db'}"
    assert b["PREFECT_SERVER_DATABASE_CONNECTION_URL"].endswith("/b/prefect/prefect.db")
    assert "PREFECT_API_DATABASE_CONNECTION_URL" not in a


def test_a_served_run_refuses_another_home(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from flows.schedules import SERVE_HOME_ENV, SERVE_PID_ENV, served_run

    monkeypatch.setenv(SERVE_PID_ENV, str(os.getpid()))
    monkeypatch.setenv(SERVE_HOME_ENV, str(tmp_path / "a"))
    served_run(str(tmp_path / "a"))
    with pytest.raises(ValueError, match=f"this run is for home {tmp_path / 'b'}, but its "
                                         f"chesslab serve serves {tmp_path / 'a'}: refused"):
        served_run(str(tmp_path / "b"))


SERVE_LIKE = """
import os, subprocess, sys, time
env = {**os.environ, "CHESSLAB_SERVE_PID": str(os.getpid()), "CHESSLAB_SERVE_HOME": sys.argv[1]}
run = subprocess.Popen([sys.executable, "-c", sys.argv[2], sys.argv[1], sys.argv[3]], env=env)
print(run.pid, flush=True)
time.sleep(600)
"""
RUN_LIKE = """
import sys, time
from pathlib import Path
from flows.schedules import served_run
served_run(sys.argv[1])
Path(sys.argv[2]).write_text("started")
time.sleep(600)
"""
# A run's process between loading its flow and the flow's start (Prefect's engine setting the
# run up, retrying a server that died with its serve).
LOADED_LIKE = """
import sys, time
from pathlib import Path
import flows.schedules
Path(sys.argv[2]).write_text("started")
time.sleep(600)
"""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def wait_until(condition: Any, timeout_s: float, what: str | Callable[[], str]) -> None:
    """Wait for ``condition``; past the timeout fail with ``what`` (called then, if a
    function: a log read at the end)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, what() if callable(what) else what
        time.sleep(0.2)


@pytest.mark.parametrize("run_like", [RUN_LIKE, LOADED_LIKE], ids=["started", "loaded"])
def test_a_served_run_dies_with_its_serve(tmp_path: Path, run_like: str) -> None:
    """A process started as ``serve`` starts a flow run's process; ``kill -9`` of the former
    ends the latter (it is not left running, orphaned), once the run's flow has started or
    as soon as it is loaded."""
    started = tmp_path / "started"
    serve = subprocess.Popen([sys.executable, "-c", SERVE_LIKE, str(tmp_path), run_like,
                              str(started)], stdout=subprocess.PIPE, text=True, cwd=ROOT,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    run = 0
    try:
        assert serve.stdout is not None
        run = int(serve.stdout.readline())
        wait_until(lambda: started.exists() or not alive(run), 120, "the run never started")
        assert started.exists(), "the run's process exited before its flow started"
        serve.kill()
        serve.wait()
        wait_until(lambda: not alive(run), 30, f"the run's process {run} outlived its serve")
    finally:
        serve.kill()
        serve.wait()
        if run:
            with contextlib.suppress(ProcessLookupError):
                os.kill(run, signal.SIGKILL)


def test_serve_marks_the_runs_its_predecessor_left_crashed_and_frees_their_slot(
        tmp_path: Path, prefect_harness: None) -> None:
    """A run left Running holds its deployment's only concurrency slot, so the next run
    waits; :func:`crash_stale_runs` marks it Crashed with the reason, and the next run
    starts. Runs of another home's deployments are left alone."""
    from prefect.client.orchestration import get_client
    from prefect.states import Pending, Running

    from flows.schedules import crash_stale_runs, deployments
    from pipelines.ops import load_schedules

    schedules = load_schedules(None)
    ours, theirs = (deployments(schedules, tmp_path / h)[0] for h in ("a", "b"))
    with get_client(sync_client=True) as client:
        runs = {}
        for deployment in (ours, theirs):
            deployment_id = deployment.apply()
            left = client.create_flow_run_from_deployment(deployment_id)
            for state in (Pending(), Running()):
                assert client.set_flow_run_state(left.id, state).state.name == state.name
            runs[deployment.name] = (deployment_id, left)
        deployment_id, left = runs[ours.name]
        waiting = client.create_flow_run_from_deployment(deployment_id)
        assert client.set_flow_run_state(waiting.id, Pending()).state.name == \
            "AwaitingConcurrencySlot"

        marked = crash_stale_runs([f"{ours.flow_name}/{ours.name}"], "its serve is gone")
        assert [r.id for r in marked] == [left.id]
        crashed = client.read_flow_run(left.id).state
        assert (crashed.name, crashed.message) == ("Crashed", "its serve is gone")
        assert client.read_flow_run(runs[theirs.name][1].id).state.name == "Running"
        assert client.set_flow_run_state(waiting.id, Pending()).state.name == "Pending"


def positions(home: Path) -> int:
    if not (home / "lake" / "positions").exists():
        return 0
    row = connect(Lake(home)).execute("select count(*) from positions").fetchone()
    return int(row[0]) if row else 0


def serve_home(root: Path, game: Path, schedules: str, env: dict[str, str]
               ) -> subprocess.Popen[bytes]:
    (root / "incoming").mkdir(parents=True, exist_ok=True)
    if not (root / "incoming" / game.name).exists():
        (root / "incoming" / game.name).write_bytes(game.read_bytes())
    (root / "schedules.toml").write_text(schedules)
    with open(root / "serve.log", "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "flows.cli", "--home", str(root / "home"), "serve",
             "--config", str(root / "schedules.toml")],
            env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, process_group=0)


def serve_env(tmp_path: Path) -> dict[str, str]:
    """No PREFECT_API_URL (each serve starts its own server), one PREFECT_HOME for all."""
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    path = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return {**env, "PREFECT_HOME": str(tmp_path / "prefect_home"), "PYTHONPATH": path}


def end(serve: subprocess.Popen[bytes]) -> None:
    """End ``serve`` and its process group (what a test started must not outlive it)."""
    serve.terminate()
    try:
        serve.wait(timeout=30)
    except subprocess.TimeoutExpired:
        serve.kill()
        serve.wait()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(serve.pid, signal.SIGKILL)


def flow_run(url: str, flow_run_id: str) -> Any:
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(updates={PREFECT_API_URL: url}), \
            get_client(sync_client=True) as client:
        return client.read_flow_run(flow_run_id)


@pytest.mark.slow
def test_two_homes_served_at_once_run_their_one_minute_schedules_on_their_own_homes(
        tmp_path: Path, stockfish_path: str) -> None:
    """Two ``serve``s on one machine, one Prefect home, no server of the user's: each
    home's every-minute refresh fires on its own and ingests its own folder into its own
    warehouse (A: the Opera game, 34 positions; B: four EPD positions)."""
    env = serve_env(tmp_path)
    serves = [serve_home(tmp_path / "a", FIXTURES / "opera.pgn", EVERY_MINUTE, env),
              serve_home(tmp_path / "b", FIXTURES / "terminal.epd", EVERY_MINUTE, env)]
    try:
        homes = [tmp_path / "a" / "home", tmp_path / "b" / "home"]
        wait_until(lambda: all(positions(h) for h in homes), 400,
                   lambda: "no scheduled run within 400 s: " + "\n".join(
                       (tmp_path / h / "serve.log").read_text() for h in ("a", "b")))
        time.sleep(5)   # a wrong run would have written by now as well
        assert [positions(h) for h in homes] == [34, 4]
    finally:
        for serve in serves:
            end(serve)


def children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(") ", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:300]
    except OSError:
        return "(gone)"


def survivors(pids: list[int]) -> str:
    """What a failed wait for ``pids`` to end prints: each one alive, with its command."""
    return "the run outlived its serve: " + "; ".join(
        f"{p}: {command(p)}" for p in pids if alive(p))


def is_flow_run_process(pid: int) -> bool:
    try:
        return b"prefect server" not in Path(f"/proc/{pid}/cmdline").read_bytes().replace(
            b"\0", b" ")
    except OSError:
        return False


@pytest.mark.slow
def test_a_killed_serve_takes_its_run_along_and_the_next_serve_frees_its_slot(
        tmp_path: Path, stockfish_path: str) -> None:
    env = serve_env(tmp_path)
    root = tmp_path / "a"
    home = root / "home"
    schedules = EVERY_MINUTE.replace('"* * * * *"', '"0 3 1 1 *"')
    serve = serve_home(root, FIXTURES / "selfplay.pgn", schedules, env)
    trigger = [sys.executable, "-m", "flows.cli", "--home", str(home), "trigger", "refresh",
               "--poll", "1"]
    try:
        wait_until(lambda: (home / "prefect" / "serve.json").exists(), 180, "no serve")
        url = json.loads((home / "prefect" / "serve.json").read_text())["url"]
        started = ""
        deadline = time.monotonic() + 180
        while ": Scheduled" not in started:   # until serve has registered its deployments
            assert time.monotonic() < deadline, (root / "serve.log").read_text()
            started = subprocess.run([*trigger, "--param", 'label={"depths": [40]}'],
                                     env=env, capture_output=True, text=True, cwd=ROOT,
                                     timeout=300).stdout
        run_id = started.split("(")[1].split(")")[0]
        wait_until(lambda: flow_run(url, run_id).state.name == "Running", 120,
                   "the run never started")
        wait_until(lambda: any(is_flow_run_process(p) for p in children(serve.pid)), 60,
                   "no flow run process")
        runs = [p for p in children(serve.pid) if is_flow_run_process(p)]
        serve.kill()
        serve.wait()
        wait_until(lambda: not any(alive(p) for p in runs), 30, lambda: survivors(runs))
    finally:
        end(serve)

    serve = serve_home(root, FIXTURES / "selfplay.pgn", schedules, env)
    try:
        wait_until(lambda: "marked Crashed" in (root / "serve.log").read_text(), 180,
                   lambda: (root / "serve.log").read_text())
        url = json.loads((home / "prefect" / "serve.json").read_text())["url"]
        left = flow_run(url, run_id)
        assert left.state.name == "Crashed"
        assert "stopped while it ran" in left.state.message
        done = subprocess.run([*trigger, "--param", 'label={"depths": [2]}', "--watch"],
                              env=env, capture_output=True, text=True, cwd=ROOT, timeout=300)
        assert done.returncode == 0, done.stderr
        assert ": Completed" in done.stdout
    finally:
        end(serve)


def registered_deployments(url: str) -> int:
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    try:
        with temporary_settings(updates={PREFECT_API_URL: url}), \
                get_client(sync_client=True) as client:
            return len(client.read_deployments())
    except Exception:   # the server is still starting: none yet
        return 0


@pytest.mark.parametrize("when", ["starting", "serving"])
def test_sigterm_stops_serve_with_its_children_and_records_in_one_line(
        tmp_path: Path, when: str) -> None:
    """Issue 49 §4: SIGTERM (systemd's and docker's stop) ends ``chesslab serve`` whether
    its temporary server is still starting (it used to die of the signal, status -15) or
    its deployments are served (Prefect's runner logged four lines and a RuntimeWarning): exit
    status 0, one line, its server and other children gone, its records removed."""
    env = serve_env(tmp_path)
    root = tmp_path / "a"
    home = root / "home"
    schedules = EVERY_MINUTE.replace('"* * * * *"', '"0 3 1 1 *"')
    serve = serve_home(root, FIXTURES / "opera.pgn", schedules, env)
    log = root / "serve.log"
    try:
        if when == "starting":
            wait_until(lambda: children(serve.pid) or serve.poll() is not None, 120,
                       "no server started")
        else:
            wait_until(lambda: (home / "prefect" / "serve.json").exists()
                       or serve.poll() is not None, 300, lambda: log.read_text())
            url = json.loads((home / "prefect" / "serve.json").read_text())["url"]
            wait_until(lambda: registered_deployments(url) == 2 or serve.poll() is not None,
                       120, lambda: log.read_text())
            time.sleep(2)     # the runner starts right after registering them
        assert serve.poll() is None, log.read_text()
        started = children(serve.pid)
        assert started, "serve runs no child process"
        before = log.read_text()
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(timeout=60) == 0, log.read_text()
        wait_until(lambda: not any(alive(p) for p in started), 30, lambda: survivors(started))
    finally:
        end(serve)
    written = log.read_text()[len(before):].splitlines()
    assert len(written) == 1 and written[0].startswith("chesslab serve: stopped (SIGTERM); "), \
        log.read_text()
    assert sorted(p.name for p in (home / "prefect").iterdir()
                  if p.name.startswith(("serve", "server"))) == []
