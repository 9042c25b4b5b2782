"""The ``selfplay`` step: one unit per batch file left to ingest by a killed run, then one
unit per missing batch, played on the games runner (``pipelines.games``: ``workers`` local
Dask worker processes, one in this process for 1, or the ``--cluster``'s workers, which send the
batch's text back) and written and ingested here.
Batches are ingested one at a time in this process, so positions are deduped against the
warehouse without a race; one run per run id and home at a time (a file lock taken by the
plan, released when the step ends). The work is ``pipelines.selfplay``."""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flows.step import UnitContext
from pipelines.games.cluster import open_cluster
from pipelines.ingest import IngestSummary
from pipelines.progress import progress_line
from pipelines.selfplay import (
    Batch,
    BatchResult,
    SelfplayConfig,
    SelfplayPlan,
    SelfplaySummary,
    ingest_batch,
    plan_selfplay,
    summarize,
)
from pipelines.selfplay.run import play_work, run_lock, selfplay_work, write_atomically
from warehouse import Lake

#: Run locks taken by plans, released when the step's pool closes.
_HELD = contextlib.ExitStack()
_INGEST = threading.Lock()


@dataclass(frozen=True)
class SelfplayUnit:
    plan: SelfplayPlan
    batch: Batch | None = None     # None: only ingest ``path``, a batch file already played
    path: str = ""


@dataclass(frozen=True)
class SelfplayResult:
    played: BatchResult | None
    ingested: IngestSummary


@dataclass(frozen=True)
class SelfplayStepPlan:
    plan: SelfplayPlan


@contextlib.contextmanager
def selfplay_pool(config: SelfplayConfig) -> Iterator[Any]:
    """The games runner (a Dask client: ``workers`` local processes, or the ``--cluster``)
    and the run lock live as long as the step."""
    try:
        with open_cluster(config.games_options(), 1) as client:
            yield client
    finally:
        _HELD.close()


class SelfplayStep:
    name = "selfplay"
    retries = 1      # a retry plays the batch again: its file is written whole

    def concurrency(self, config: SelfplayConfig) -> int:
        return config.workers

    def open_pool(self, config: SelfplayConfig) -> AbstractContextManager[Any]:
        return selfplay_pool(config)

    def plan(self, config: SelfplayConfig, lake: Lake) -> SelfplayStepPlan:
        plan = plan_selfplay(lake, config)
        _HELD.enter_context(run_lock(lake, plan))
        return SelfplayStepPlan(plan)

    def units(self, plan: SelfplayStepPlan) -> list[SelfplayUnit]:
        p = plan.plan
        return ([SelfplayUnit(p, path=path) for path in p.to_ingest]
                + [SelfplayUnit(p, batch) for batch in p.batches])

    def describe(self, plan: SelfplayStepPlan) -> str:
        p = plan.plan
        return (f"selfplay run {p.run_id}: {p.games_done} games done, "
                f"{sum(len(b.games) for b in p.batches)} to play in {len(p.batches)} batches")

    def run_unit(self, unit: SelfplayUnit, context: UnitContext) -> SelfplayResult:
        played = None
        if unit.batch is not None:
            text, played = context.pool.submit(play_work, selfplay_work(unit.plan, unit.batch),
                                               pure=False).result()
            write_atomically(Path(played.path), text)
        with _INGEST:
            ingested = ingest_batch(context.lake, played.path if played else unit.path)
        return SelfplayResult(played, ingested)

    def progress(self, plan: SelfplayStepPlan, results: Sequence[SelfplayResult],
                 seconds: float) -> str | None:
        played = [r.played for r in results if r.played is not None]
        if not played:
            return None
        planned = sum(len(b.games) for b in plan.plan.batches)
        return progress_line("selfplay", sum(r.games for r in played), planned, "games",
                             seconds, f"{sum(r.plies for r in played):,} plies, "
                                      f"{len(played)}/{len(plan.plan.batches)} batches ingested")

    def summarize(self, plan: SelfplayStepPlan, results: Sequence[SelfplayResult],
                  seconds: float) -> SelfplaySummary:
        return summarize(plan.plan, [r.played for r in results if r.played is not None],
                         [r.ingested for r in results], seconds)


SELFPLAY = SelfplayStep()

__all__ = ["SELFPLAY", "SelfplayStep"]
