"""The ``label`` step: one unit per batch of pending positions, each worked by one engine of
the step's engine pool (opened and closed with the step; a unit on a Dask worker starts its
own engine) and written as its own Parquet parts (no single writer, so the same units run on
threads or on a Dask cluster's workers). A retried batch first drops what the failed attempt
already wrote."""
from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from flows.step import UnitContext
from pipelines.label import LabelConfig
from pipelines.label.pending import PendingPosition, still_pending
from pipelines.label.run import (
    BatchResult,
    EnginePool,
    LabelPlan,
    LabelSummary,
    label_batch,
    plan_labels,
    summarize,
)
from pipelines.progress import progress_line
from warehouse import Lake


@dataclass(frozen=True)
class LabelUnit:
    config: LabelConfig
    engine_id: str
    run_id: str
    batch: list[PendingPosition]


@dataclass(frozen=True)
class LabelStepPlan:
    plan: LabelPlan
    config: LabelConfig


class LabelStep:
    name = "label"
    retries = 2

    def concurrency(self, config: LabelConfig) -> int:
        return config.workers

    def open_pool(self, config: LabelConfig) -> AbstractContextManager[Any]:
        return EnginePool()     # the engines kept warm between batches live as long as the step

    def plan(self, config: LabelConfig, lake: Lake) -> LabelStepPlan:
        return LabelStepPlan(plan_labels(lake, config), config)

    def units(self, plan: LabelStepPlan) -> list[LabelUnit]:
        p = plan.plan
        return [LabelUnit(plan.config, p.identity.engine_id, p.run_id, batch)
                for batch in p.batches]

    def describe(self, plan: LabelStepPlan) -> str:
        return (f"label: {plan.plan.positions} positions to label in "
                f"{len(plan.plan.batches)} batches with {plan.plan.identity.engine_id}")

    def run_unit(self, unit: LabelUnit, context: UnitContext) -> BatchResult:
        lake = context.lake
        batch = unit.batch
        if context.attempt > 1:
            batch = still_pending(lake, unit.config, unit.engine_id, batch)
        return label_batch(lake, unit.config, unit.engine_id, batch, unit.run_id, context.pool)

    def progress(self, plan: LabelStepPlan, results: Sequence[BatchResult],
                 seconds: float) -> str:
        total = sum(results, BatchResult())
        bounds = f", {total.bounds:,} from a bound line" if total.bounds else ""
        return progress_line("label", total.positions, plan.plan.positions, "positions",
                             seconds, f"{total.labels:,} labels, {total.errors:,} errors{bounds}")

    def summarize(self, plan: LabelStepPlan, results: Sequence[BatchResult],
                  seconds: float) -> LabelSummary:
        return summarize(plan.plan, results, seconds)


LABEL = LabelStep()
