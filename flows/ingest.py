"""The ``ingest`` step: one unit per file, PGN chunks parsed by one process pool per step,
started for the first PGN file big enough to pay for it (smaller ones are parsed in-process).

On a cluster each file is ingested in-process on its worker (no pool to share).
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from flows.step import UnitContext
from pipelines.ingest import IngestConfig, IngestSummary, SourceFile, discover_sources, ingest_file
from pipelines.ingest.run import PoolOnDemand
from pipelines.ingest.training_data import check_training_options
from warehouse import Lake


@dataclass(frozen=True)
class IngestJob:
    """The files to ingest (files, folders, globs) and how."""

    paths: tuple[str | os.PathLike[str], ...]
    config: IngestConfig


@dataclass(frozen=True)
class IngestUnit:
    source: SourceFile
    config: IngestConfig


@dataclass(frozen=True)
class IngestPlan:
    home: str                  # shown in the plan's line
    units: list[IngestUnit]


class IngestStep:
    name = "ingest"
    retries = 2      # a file is committed only by its sources row: a retry re-reads it

    def concurrency(self, job: IngestJob) -> int:
        return 1     # files one at a time, each spread over the pool

    def open_pool(self, job: IngestJob) -> AbstractContextManager[Any]:
        return PoolOnDemand(job.config.workers, job.config.pool_from_mb * 1_000_000)

    def plan(self, job: IngestJob, lake: Lake) -> IngestPlan:
        """The files, each checked before any work (a missing path or option is an
        IngestError naming it)."""
        sources = discover_sources(job.paths, job.config.format)
        check_training_options(sources, job.config)
        return IngestPlan(str(lake.home), [IngestUnit(source, job.config) for source in sources])

    def units(self, plan: IngestPlan) -> list[IngestUnit]:
        return plan.units

    def describe(self, plan: IngestPlan) -> str:
        return f"ingest: {len(plan.units)} files into {plan.home}"

    def run_unit(self, unit: IngestUnit, context: UnitContext) -> IngestSummary:
        pool = context.pool.for_file(unit.source, context.progress) \
            if context.pool is not None and unit.source.format == "pgn" else None
        return ingest_file(context.lake, unit.source, unit.config, pool, context.progress)

    def progress(self, plan: IngestPlan, results: Sequence[IngestSummary],
                 seconds: float) -> str:
        s = results[-1]
        state = "already ingested" if s.skipped else "empty file" if s.empty else \
            f"{s.games} games, {s.records} records, {s.new_positions} new positions, " \
            + (f"{s.labels} labels, " if s.labels else "") + f"{s.errors} errors"
        return f"ingest: [{len(results)}/{len(plan.units)}] {s.path}: {state}"

    def summarize(self, plan: IngestPlan, results: Sequence[IngestSummary],
                  seconds: float) -> list[IngestSummary]:
        return list(results)


INGEST = IngestStep()
