"""How flows run: the task runner (threads here, or a Dask cluster) and Prefect's settings.

Prefect is imported lazily: its settings are read at import, so ``configure_prefect`` must run
first, and commands that need no flow should not pay for the import.
"""
from __future__ import annotations

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


def run_flow(flow: Any, *, cluster: str | None = None, workers: int | None = None,
             **parameters: Any) -> Any:
    """Run ``flow`` with the chosen task runner and return its result."""
    configure_prefect()
    return flow.with_options(task_runner=task_runner(cluster, workers))(**parameters)
