"""The ``ingest`` step: one unit per file, PGN chunks parsed by one process pool per step.

On a cluster each file is ingested in-process on its worker (no pool to share).
"""
from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from pipelines.ingest import IngestConfig, IngestSummary, SourceFile, discover_sources, ingest_file
from pipelines.ingest.run import worker_pool
from warehouse import Lake


@dataclass(frozen=True)
class IngestJob:
    """The files to ingest (files, folders, globs) and how."""

    paths: tuple[str, ...]
    config: IngestConfig


@dataclass(frozen=True)
class IngestUnit:
    home: str
    source: SourceFile
    config: IngestConfig


@dataclass(frozen=True)
class IngestPlan:
    home: str
    units: list[IngestUnit]


class IngestStep:
    name = "ingest"
    retries = 2      # a file is committed only by its sources row: a retry re-reads it

    def concurrency(self, job: IngestJob) -> int:
        return 1     # files one at a time, each spread over the pool

    def open_pool(self, job: IngestJob) -> AbstractContextManager[Any]:
        return worker_pool(job.config.workers)

    def plan(self, job: IngestJob, home: str | None) -> IngestPlan:
        root = str(Lake(home).home)
        return IngestPlan(root, [IngestUnit(root, source, job.config)
                                 for source in discover_sources(job.paths, job.config.format)])

    def units(self, plan: IngestPlan) -> list[IngestUnit]:
        return plan.units

    def describe(self, plan: IngestPlan) -> str:
        return f"ingest: {len(plan.units)} files into {plan.home}"

    def run_unit(self, unit: IngestUnit, context: Any) -> IngestSummary:
        pool = context.pool if unit.source.format == "pgn" else None
        return ingest_file(Lake(unit.home), unit.source, unit.config, pool)

    def progress(self, plan: IngestPlan, results: Sequence[IngestSummary],
                 seconds: float) -> str:
        s = results[-1]
        state = "already ingested" if s.skipped else \
            f"{s.games} games, {s.records} records, {s.new_positions} new positions, " \
            + (f"{s.labels} labels, " if s.labels else "") + f"{s.errors} errors"
        return f"ingest: [{len(results)}/{len(plan.units)}] {s.path}: {state}"

    def summarize(self, plan: IngestPlan, results: Sequence[IngestSummary],
                  seconds: float) -> list[IngestSummary]:
        return list(results)


INGEST = IngestStep()
