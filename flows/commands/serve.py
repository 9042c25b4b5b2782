"""``chesslab serve [--config schedules.toml]``: register the scheduled jobs (refresh, retrain
per model kind, evaluate) as Prefect deployments and run them until stopped.

With ``PREFECT_API_URL`` set the deployments go to that server (``prefect server start``);
otherwise chesslab starts a temporary server with its scheduler for as long as ``serve``
runs, and records its address in ``<home>/prefect/serve.json`` for ``chesslab trigger``.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
from collections.abc import Iterator
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
    from warehouse import Lake

    schedules = load_schedules(args.config)   # a bad file fails here, in one line
    home = Lake().home
    from flows.schedules import deployments, retry_environment

    os.environ.update(retry_environment(schedules))   # the flow runs' processes read it

    found = deployments(schedules, home)
    if not found:
        raise ValueError("serve: every job is disabled in the schedules file")
    with served_api(home) as url:
        from prefect import serve

        print(f"chesslab serve: {len(found)} deployments on {url} for {home}", flush=True)
        for deployment in found:
            print(f"  {deployment.flow_name}/{deployment.name}: {describe(deployment)}",
                  flush=True)
        serve(*found, limit=args.limit, print_starting_message=False)
    return 0


def describe(deployment: Any) -> str:
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


def serve_record_url(home: Path) -> str | None:
    """The API URL of a ``chesslab serve`` running on ``home``, if any."""
    from flows.server import alive

    try:
        record = json.loads((home / "prefect" / SERVE_RECORD).read_text())
    except (OSError, ValueError):
        return None
    return str(record["url"]) if alive(int(record["pid"])) else None
