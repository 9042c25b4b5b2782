"""``chesslab serve [--config schedules.toml]``: register the scheduled jobs (refresh, retrain
per model kind, evaluate) as Prefect deployments of this home and run them until stopped.

With ``PREFECT_API_URL`` set the deployments go to that server (``prefect server start``);
otherwise chesslab starts a temporary server with its scheduler, on the home's own Prefect
database, for as long as ``serve`` runs, and records its address in
``<home>/prefect/serve.json`` for ``chesslab trigger``. The deployments' names end with the
home's tag (``refresh-HOME``), so two homes never run each other's jobs; one ``serve`` per
home. Runs log at INFO (their failures and chesslab's lines show here and in the Prefect UI)
and die with ``serve``; runs a killed ``serve`` left Running are marked Crashed at start.

SIGTERM (``systemctl stop``, ``docker stop``) stops ``serve`` at any point, its temporary
server still starting included: its flow runs and its temporary server are ended, its records
removed, one line ``chesslab serve: stopped (SIGTERM) ...`` is written to stderr and it exits
with status 0 (a stop that was asked for, not a failure: systemd and docker count 0 as a clean
stop, while status 143 would read as failed under systemd's default ``SuccessExitStatus``).
Ctrl-C stays an interruption: status 130.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

SERVE_RECORD = "serve.json"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve", help="run refresh, retraining and evaluation on their schedules (Prefect)",
        description=__doc__)
    parser.add_argument("--config", metavar="FILE",
                        help="schedules file (TOML; default: the documented defaults, "
                             "watching ./incoming)")
    parser.add_argument("--limit", type=int, metavar="N",
                        help="flow runs executed at once (default: no limit)")
    parser.set_defaults(run=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    from pipelines.ops import load_schedules

    schedules = load_schedules(args.config)   # a bad file fails here, in one line
    home = args.lake.home
    previous = serve_record(home)
    if previous and previous["alive"]:
        raise RuntimeError(f"chesslab serve already runs on {home} (pid {previous['pid']}): "
                           f"one serve per home")
    on_sigterm = stop_on_sigterm(home)
    log_runs_at_info()
    from flows.schedules import crash_stale_runs, deployments, serve_environment

    os.environ.update(serve_environment(schedules, home))   # the flow runs' processes read it

    found = deployments(schedules, home)
    if not found:
        raise ValueError("serve: every job is disabled in the schedules file")
    with served_api(home) as url:
        print(f"chesslab serve: {len(found)} deployments on {url} for {home}", flush=True)
        for deployment in found:
            print(f"  {deployment.flow_name}/{deployment.name}: {describe(deployment)}",
                  flush=True)
        gone = f"pid {previous['pid']}" if previous else "a serve no longer running"
        for run in crash_stale_runs([f"{d.flow_name}/{d.name}" for d in found],
                                    f"its chesslab serve ({gone}) stopped while it ran; "
                                    f"marked crashed by the serve of pid {os.getpid()}"):
            print(f"chesslab serve: flow run {run.name} ({run.id}) was left "
                  f"{run.state_name} by a stopped serve: marked Crashed", flush=True)
        serve_deployments(found, args.limit, on_sigterm)
    return 0


SigtermHandler = Callable[[int, object], None]


def stop_on_sigterm(home: Path) -> SigtermHandler:
    """Make SIGTERM end this ``serve`` (see the module's docstring); the handler, which the
    Prefect runner must keep (it installs its own when it starts)."""
    from flows.console import exit_now
    from flows.server import records_folder
    from pipelines.processes import end_children

    def stopped(signum: int, frame: object) -> None:
        ended = end_children()
        own = serve_record(home)
        records = list(records_folder(home).glob(f"server-{os.getpid()}[.-]*"))
        if own is not None and own["pid"] == os.getpid():
            records.append(records_folder(home) / SERVE_RECORD)
        for path in records:
            path.unlink(missing_ok=True)
        exit_now(f"chesslab serve: stopped (SIGTERM); {len(ended)} child "
                 f"process{'' if len(ended) == 1 else 'es'} ended", 0)

    signal.signal(signal.SIGTERM, stopped)
    return stopped


def serve_deployments(found: list[Any], limit: int | None, on_sigterm: SigtermHandler) -> None:
    """``prefect.serve(*found, limit=limit)`` with ``serve``'s own SIGTERM handling: Prefect's
    runner replaces the handler when it starts with one that logs four lines and a
    RuntimeWarning and exits while its shutdown coroutine was never run."""
    import asyncio

    from prefect.runner import Runner

    class ServeRunner(Runner):
        def handle_sigterm(self, *args: Any, **kwargs: Any) -> None:
            on_sigterm(signal.SIGTERM, None)

    runner = ServeRunner(limit=limit)
    for deployment in found:
        runner.add_deployment(deployment)
    asyncio.run(runner.start())


def log_runs_at_info() -> None:
    """Served runs log at INFO (before Prefect's import, which reads it): their failures
    and chesslab's lines reach this serve's output and the runs' logs in the Prefect UI."""
    level = os.environ.get("PREFECT_LOGGING_LEVEL", "INFO").upper()
    if level in ("WARNING", "ERROR", "CRITICAL"):
        os.environ["PREFECT_LOGGING_LEVEL"] = "INFO"


def describe(deployment: Any) -> str:
    if not deployment.schedules:
        return "on demand (chesslab trigger)"
    schedule = deployment.schedules[0].schedule
    if getattr(schedule, "cron", None):
        return f"cron {schedule.cron!r} ({schedule.timezone})"
    return f"every {schedule.interval.total_seconds():g} s"


@contextlib.contextmanager
def served_api(home: Path) -> Iterator[str]:
    """The user's server, or a temporary one with its scheduler, exported to the flow run
    processes and recorded for ``chesslab trigger``."""
    from flows.prefect_runner import api

    record = home / "prefect" / SERVE_RECORD
    with api(home, services=True) as url:
        os.environ["PREFECT_API_URL"] = url          # the flow runs' processes inherit it
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps({"url": url, "pid": os.getpid()}))
        try:
            yield url
        finally:
            record.unlink(missing_ok=True)


def serve_record(home: Path) -> dict[str, Any] | None:
    """The record of the last ``chesslab serve`` on ``home`` (url, pid, and whether that
    process still runs), if any."""
    from flows.server import alive

    try:
        record = json.loads((home / "prefect" / SERVE_RECORD).read_text())
        pid = int(record["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return {"url": str(record.get("url")), "pid": pid, "alive": alive(pid) and is_serve(pid)}


def is_serve(pid: int) -> bool:
    """The process ``pid`` runs ``chesslab serve`` (not a pid reused since)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"serve" in argv


def serve_record_url(home: Path) -> str | None:
    """The API URL of a ``chesslab serve`` running on ``home``, if any."""
    record = serve_record(home)
    return record["url"] if record and record["alive"] else None
