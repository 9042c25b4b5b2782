"""Steps and how they run: every step is a plan, units of work and a summary, written once.

A step (ingest, label, tournament, and the steps still to come) implements :class:`Step`:

- ``plan(config, lake)``: what to do, with ``units`` (a list; files, batches of positions, a
  tournament), read from the warehouse ``lake``;
- ``run_unit(unit, context)``: do one unit and return its result; ``context.lake`` is the
  warehouse, ``context.pool`` the worker pool ``open_pool(config)`` opened (processes,
  engines); it reports lines with ``context.progress``; ``context.attempt`` counts retries (a
  retried unit should first drop what a failed attempt already wrote);
- ``progress(plan, results, seconds)``: the line shown after a unit ends, or None;
- ``summarize(plan, results, seconds)``: the step's summary, results in plan order.

``run_step(step, config, lake, runner)`` runs it on a runner: :class:`LocalRunner` (threads in
this process, the default without a Prefect server) or ``flows.prefect_runner.PrefectRunner`` (the same, as Prefect
flows and tasks). Both hand the units to ``step.concurrency(config)`` lanes (a lane takes the
next unit when it is free), retry a failed unit ``step.retries`` times, print the same progress
lines to stderr, and open and close the worker pool once per step, so both behave the same.

The warehouse is a value: the command line resolves ``--home`` once into a
:class:`~warehouse.Lake` and hands it to the runner, which gives it to ``plan`` and to every
unit's context (a unit run on a Dask worker gets it as a task argument). Nothing below
``flows/`` reads the home from the environment.

This module does not import Prefect.
"""
from __future__ import annotations

import contextlib
import errno
import logging
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

if TYPE_CHECKING:
    from warehouse import Lake

CONNECT_TIMEOUT_S = 30        # a --cluster scheduler that does not answer: one line
DISK_FULL = re.compile(r"No space left on device|os error 28\b")
log = logging.getLogger(__name__)

ConfigT = TypeVar("ConfigT", contravariant=True)
PlanT = TypeVar("PlanT")
UnitT = TypeVar("UnitT")
ResultT = TypeVar("ResultT")
SummaryT = TypeVar("SummaryT", covariant=True)
Progress = Callable[[str], None]


@dataclass(frozen=True)
class UnitContext:
    """What a unit gets from its runner besides the unit itself."""

    lake: Lake                 # the warehouse the step reads and writes
    pool: Any                  # what the step's ``open_pool`` yielded (None on a cluster)
    progress: Progress         # prints a progress line (a no-op with progress off)
    attempt: int = 1           # 2 and more: a retry after a failure


class Step(Protocol[ConfigT, PlanT, UnitT, ResultT, SummaryT]):
    """One step of the pipeline; see the module docstring."""

    name: str
    retries: int

    def concurrency(self, config: ConfigT) -> int: ...
    def open_pool(self, config: ConfigT) -> AbstractContextManager[Any]: ...
    def plan(self, config: ConfigT, lake: Lake) -> PlanT: ...
    def units(self, plan: PlanT) -> Sequence[UnitT]: ...
    def describe(self, plan: PlanT) -> str | None: ...
    def run_unit(self, unit: UnitT, context: UnitContext) -> ResultT: ...
    def progress(self, plan: PlanT, results: Sequence[ResultT], seconds: float) -> str | None: ...
    def summarize(self, plan: PlanT, results: Sequence[ResultT], seconds: float) -> SummaryT: ...


class Runner(Protocol):
    """Runs steps, and compositions of steps under one name (``refresh``, ``evaluate``)."""

    def run(self, step: Step[Any, Any, Any, Any, Any], config: Any, lake: Lake) -> Any: ...
    def compose(self, name: str, body: Callable[[], Any]) -> Any: ...


_PRINTING = threading.Lock()


def print_progress(line: str) -> None:
    """A progress line on stderr in one write, whole: ``print`` writes the text and its end
    apart, and lanes printing at once glued two lines together."""
    with _PRINTING:
        sys.stderr.write(line.rstrip("\n") + "\n")
        sys.stderr.flush()


def no_progress(line: str) -> None:
    return None


def run_step(step: Step[Any, Any, Any, Any, SummaryT], config: Any, lake: Lake,
             runner: Runner | None = None) -> SummaryT:
    """Run ``step`` with ``config`` on the warehouse ``lake``, on ``runner`` (default: a local
    runner without progress lines): the one way a step runs, from the command line, a
    composition, a test or a benchmark."""
    return (runner or LocalRunner(show_progress=False)).run(step, config, lake)


class Work(Generic[PlanT, UnitT, ResultT]):
    """The units of one plan, handed out one at a time to the lanes that call :meth:`lane`.

    A unit that still fails after ``step.retries`` retries stops every lane (no new unit is
    started) and is raised by the lane that ran it.
    """

    def __init__(self, step: Step[Any, PlanT, UnitT, ResultT, Any], plan: PlanT, lake: Lake,
                 pool: Any, progress: Progress) -> None:
        self.step, self.plan, self.lake, self.pool = step, plan, lake, pool
        self.progress = progress
        self.todo = list(enumerate(step.units(plan)))
        self.done: dict[int, ResultT] = {}
        self.lock = threading.Lock()
        self.failed = False
        self.started = time.monotonic()

    def lanes(self, concurrency: int) -> int:
        return max(1, min(concurrency, len(self.todo)))

    def lane(self) -> None:
        """Run units until none is left (or another lane failed)."""
        while (item := self._next()) is not None:
            index, unit = item
            try:
                result = run_with_retries(self.step, unit, self.lake, self.pool,
                                          self.progress)
            except BaseException:
                self.failed = True
                raise
            self.finish(index, result)

    def _next(self) -> tuple[int, UnitT] | None:
        with self.lock:
            if self.failed or not self.todo:
                return None
            return self.todo.pop(0)

    def finish(self, index: int, result: ResultT) -> None:
        """Record a unit's result and show the step's progress line."""
        with self.lock:
            self.done[index] = result
            line = self.step.progress(self.plan, self.results(),
                                      time.monotonic() - self.started)
        if line:
            self.progress(line)

    def results(self) -> list[ResultT]:
        return [self.done[index] for index in sorted(self.done)]


def run_with_retries(step: Step[Any, Any, UnitT, ResultT, Any], unit: UnitT, lake: Lake,
                     pool: Any, progress: Progress) -> ResultT:
    """``step.run_unit`` with up to ``step.retries`` retries after an ``Exception`` (not after
    a full disk: a retry a second later finds it as full)."""
    for attempt in range(1, step.retries + 2):
        try:
            return step.run_unit(unit, UnitContext(lake, pool, progress, attempt))
        except Exception as exc:
            if attempt > step.retries or is_disk_full(exc):
                raise
            log.warning("%s: unit failed (attempt %d of %d), retrying: %s", step.name,
                        attempt, step.retries + 1, exc)
    raise AssertionError("unreachable")


def is_disk_full(exc: BaseException) -> bool:
    """An ENOSPC, as Python's OSError or in the text of a wrapped error (deltalake's Rust
    writer reports ``No space left on device (os error 28)`` in its message).

    >>> is_disk_full(OSError(errno.ENOSPC, "No space left on device"))
    True
    >>> is_disk_full(ValueError("table 'positions': commit failed: ... (os error 28)"))
    True
    """
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno == errno.ENOSPC:
            return True
        if DISK_FULL.search(str(seen)):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def run_lanes(work: Work[Any, Any, Any], lanes: int) -> None:
    """Run ``lanes`` lanes on threads (one lane runs in this thread)."""
    if lanes == 1:
        work.lane()
        return
    with ThreadPoolExecutor(max_workers=lanes, thread_name_prefix=work.step.name) as threads:
        for future in [threads.submit(work.lane) for _ in range(lanes)]:
            future.result()


def run_on_cluster(work: Work[Any, Any, Any], address: str) -> None:
    """Each unit of ``work`` as a task on the Dask scheduler at ``address`` (retried on its
    worker; the warehouse goes as a value, no shared pool, no progress callback), its result
    recorded as it comes back."""
    from distributed import Client, as_completed

    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise RuntimeError(f"no Dask scheduler at {address}: {type(exc).__name__}: {exc}"
                           ) from None
    with client:
        futures = {client.submit(run_with_retries, work.step, unit, work.lake, None,
                                 no_progress, pure=False): index for index, unit in work.todo}
        work.todo = []
        for future in as_completed(list(futures), loop=client.loop):
            work.finish(futures[future], future.result())


@contextlib.contextmanager
def planned(step: Step[Any, PlanT, Any, Any, Any], config: Any, lake: Lake,
            progress: Progress, pool: bool = True) -> Iterator[tuple[PlanT, Any]]:
    """Open the step's pool (unless ``pool`` is False), plan, and show the plan's line."""
    with step.open_pool(config) if pool else contextlib.nullcontext() as opened:
        plan = step.plan(config, lake)
        line = step.describe(plan)
        if line:
            progress(line)
        yield plan, opened


@dataclass
class LocalRunner:
    """Runs steps in this process: lanes are threads (the default without a Prefect server,
    and ``--no-prefect``); with ``cluster`` (a Dask scheduler's address) each unit is a Dask
    task there instead, as the Prefect runner sends it."""

    show_progress: bool = True
    cluster: str | None = None

    @property
    def progress(self) -> Progress:
        return print_progress if self.show_progress else no_progress

    def run(self, step: Step[Any, Any, Any, Any, SummaryT], config: Any,
            lake: Lake) -> SummaryT:
        started = time.monotonic()
        with planned(step, config, lake, self.progress, pool=self.cluster is None
                     ) as (plan, pool):
            work = Work(step, plan, lake, pool, self.progress)
            if self.cluster is None:
                run_lanes(work, work.lanes(step.concurrency(config)))
            else:
                run_on_cluster(work, self.cluster)
        return step.summarize(plan, work.results(), time.monotonic() - started)

    def compose(self, name: str, body: Callable[[], Any]) -> Any:
        return body()

    def __enter__(self) -> LocalRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        return None
