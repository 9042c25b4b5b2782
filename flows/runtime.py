"""How flows run: the runner the options ask for, the task runner (threads, or a Dask
cluster) and Prefect's settings.

Prefect is imported lazily: its settings are read at import, so ``configure_prefect`` must run
first, and commands that need no flow should not pay for the import.
"""
from __future__ import annotations

import argparse
import os
from typing import Any

# Quiet, offline-friendly defaults; a user's own settings win.
PREFECT_DEFAULTS = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
}


def configure_prefect() -> None:
    """Apply chesslab's Prefect defaults unless the environment already sets them.

    Prefect reads its settings once, when first imported: call this before importing any
    flow module (this module imports Prefect only inside its functions for that reason).
    """
    for name, value in PREFECT_DEFAULTS.items():
        os.environ.setdefault(name, value)


def task_runner(cluster: str | None = None, workers: int | None = None) -> Any:
    """A Dask runner on ``cluster`` (an address such as ``tcp://host:8786``), else threads."""
    if cluster:
        from prefect_dask import DaskTaskRunner

        return DaskTaskRunner(address=cluster)
    from prefect.task_runners import ThreadPoolTaskRunner

    return ThreadPoolTaskRunner(max_workers=workers or os.cpu_count() or 1)


def add_runner_arguments(parser: argparse.ArgumentParser, cluster: bool = True) -> None:
    """``--no-prefect`` (and ``--cluster ADDRESS``) for a command that runs steps."""
    if cluster:
        parser.add_argument("--cluster", metavar="ADDRESS",
                            help="run the units on this Dask scheduler (e.g. tcp://host:8786)")
    parser.add_argument("--no-prefect", action="store_true",
                        help="run in this process without Prefect (the same steps and output)")


def make_runner(args: argparse.Namespace, show_progress: bool = True) -> Any:
    """The runner the options ask for, to be used as a context manager."""
    cluster = getattr(args, "cluster", None)
    if args.no_prefect:
        if cluster:
            raise ValueError("--cluster needs Prefect: drop --no-prefect")
        from flows.step import LocalRunner

        return LocalRunner(show_progress)
    from flows.prefect_runner import PrefectRunner
    from warehouse import Lake

    return PrefectRunner(Lake().home, cluster, show_progress)
