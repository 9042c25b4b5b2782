"""The Prefect runner: a step as a Prefect flow, its lanes as Prefect tasks.

The same lanes as the local runner (``flows.step.Work``) run as one task each on Prefect's
thread runner, so the server records a handful of task runs per step instead of one per
batch (a task run costs the server ~50 ms of CPU, taken from the engines on a small machine).
On a Dask cluster (``--cluster``) lanes cannot share a queue, so each unit is a task there
(retried on its worker as on a lane), and progress lines are shown as the tasks finish.

Every run carries chesslab's lines in its Prefect logs (progress lines and ``logging``
records, ``flows.run_logs``) and leaves its summary as a markdown artifact.

The API is the user's ``PREFECT_API_URL`` when set, else chesslab's temporary server
(``flows.server``), one for all the steps of a command.
"""
from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flows.prefect_settings import configure_prefect

configure_prefect()  # before Prefect's first import: it reads its settings once

from prefect import flow, task  # noqa: E402
from prefect.cache_policies import NO_CACHE  # noqa: E402
from prefect.futures import as_completed  # noqa: E402
from prefect.settings import (  # noqa: E402
    PREFECT_API_URL,
    PREFECT_FLOWS_HEARTBEAT_FREQUENCY,
    temporary_settings,
)

from flows import run_logs  # noqa: E402
from flows.step import (  # noqa: E402
    Progress,
    Step,
    Work,
    no_progress,
    planned,
    print_progress,
    run_with_retries,
)
from warehouse import Lake  # noqa: E402


def logged_progress(line: str) -> None:
    """A progress line into the run's logs only (progress not shown)."""
    run_logs.log_line(line)


def shown_and_logged_progress(line: str) -> None:
    """A progress line on stderr and into the run's logs."""
    print_progress(line)
    run_logs.log_line(line)


@dataclass
class PrefectRunner:
    """Runs steps as Prefect flows; use it as a context manager (it holds the server)."""

    home: Path
    cluster: str | None = None
    show_progress: bool = True
    _stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    @property
    def progress(self) -> Progress:
        return shown_and_logged_progress if self.show_progress else logged_progress

    def __enter__(self) -> PrefectRunner:
        run_logs.install()
        self._stack.enter_context(api(self.home))
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            run_logs.flush()
        finally:
            self._stack.close()

    def run(self, step: Step[Any, Any, Any, Any, Any], config: Any, lake: Lake) -> Any:
        lanes = step.concurrency(config)
        body = flow(name=step.name, task_runner=task_runner(self.cluster, lanes),
                    validate_parameters=False)(
            step_flow(step, self.cluster, self.progress))
        return body(config=config, home=str(lake.home))

    def compose(self, name: str, body: Callable[[], Any]) -> Any:
        def composed() -> Any:
            summary = body()
            run_logs.publish_summary(name, summary)
            return summary

        return flow(name=name)(composed)()


def task_runner(cluster: str | None = None, workers: int | None = None) -> Any:
    """A Dask runner on ``cluster`` (an address such as ``tcp://host:8786``), else threads."""
    if cluster:
        from prefect_dask import DaskTaskRunner

        return DaskTaskRunner(address=cluster)
    from prefect.task_runners import ThreadPoolTaskRunner

    return ThreadPoolTaskRunner(max_workers=workers or os.cpu_count() or 1)


def step_flow(step: Step[Any, Any, Any, Any, Any], cluster: str | None,
              progress: Progress) -> Callable[..., Any]:
    """The flow function of ``step`` (a closure over picklable values only: on a cluster
    Prefect ships the flow with every task). Its parameters are the config and the home, a
    path (the run's parameters as the server records them)."""
    def run_step_flow(config: Any, home: str) -> Any:
        started = time.monotonic()
        lake = Lake(home)
        with planned(step, config, lake, progress, pool=cluster is None) as (plan, pool):
            work = Work(step, plan, lake, pool, progress)
            if cluster is None:
                run_lane_tasks(work, work.lanes(step.concurrency(config)))
            else:
                run_unit_tasks(work)
        summary = step.summarize(plan, work.results(), time.monotonic() - started)
        run_logs.publish_summary(step.name, summary)
        return summary

    run_step_flow.__name__ = step.name
    return run_step_flow


@task(name="lane", cache_policy=NO_CACHE)
def run_lane(work: Work[Any, Any, Any]) -> None:
    """Units of the step until none is left, on a thread of this process."""
    work.lane()


@task(name="unit", cache_policy=NO_CACHE)
def run_remote_unit(step: Step[Any, Any, Any, Any, Any], unit: Any, lake: Lake) -> Any:
    """One unit on a cluster worker (retried there): the warehouse comes as a value, no
    shared pool, no progress callback."""
    return run_with_retries(step, unit, lake, None, no_progress)


def run_lane_tasks(work: Work[Any, Any, Any], lanes: int) -> None:
    futures = [run_lane.with_options(name=f"{work.step.name}-lane").submit(work)
               for _ in range(lanes)]
    for future in futures:
        future.result()


def run_unit_tasks(work: Work[Any, Any, Any]) -> None:
    futures = {run_remote_unit.submit(work.step, unit, work.lake): index
               for index, unit in work.todo}
    work.todo = []
    for future in as_completed(list(futures)):
        work.finish(futures[future], future.result())


@contextlib.contextmanager
def api(home: Path, services: bool = False) -> Iterator[str]:
    """The user's Prefect API when one is configured, else a temporary server's (running
    its services, the scheduler among them, when ``services``)."""
    configured = PREFECT_API_URL.value()
    if configured:
        yield configured
        return
    from flows.server import RUN_ADVICE, SERVE_ADVICE, temporary_server

    # Heartbeats let a server's services mark crashed runs; the temporary server runs none,
    # and stopping the heartbeat thread costs every flow up to a second at its end.
    advice = SERVE_ADVICE if services else RUN_ADVICE
    with temporary_server(home, services, advice) as url, temporary_settings(
            updates={PREFECT_API_URL: url, PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
        yield url
