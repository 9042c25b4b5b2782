"""The ``export`` step: one unit, the data set written to its file (``pipelines.export``)."""
from __future__ import annotations

import contextlib
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from flows.step import UnitContext
from pipelines.export import ExportConfig, ExportSummary, export_dataset
from warehouse import Lake


@dataclass(frozen=True)
class ExportPlan:
    units: list[ExportConfig]


class ExportStep:
    name = "export"
    retries = 0      # a failed export leaves no file; running it again is the user's call

    def concurrency(self, config: ExportConfig) -> int:
        return 1

    def open_pool(self, config: ExportConfig) -> AbstractContextManager[Any]:
        return contextlib.nullcontext()

    def plan(self, config: ExportConfig, lake: Lake) -> ExportPlan:
        return ExportPlan([config])

    def units(self, plan: ExportPlan) -> list[ExportConfig]:
        return plan.units

    def describe(self, plan: ExportPlan) -> str:
        config = plan.units[0]
        return f"export: {config.dataset} as {config.format} to {config.out}"

    def run_unit(self, unit: ExportConfig, context: UnitContext) -> ExportSummary:
        return export_dataset(context.lake, unit, context.progress)

    def progress(self, plan: ExportPlan, results: Sequence[ExportSummary],
                 seconds: float) -> str | None:
        return None

    def summarize(self, plan: ExportPlan, results: Sequence[ExportSummary],
                  seconds: float) -> ExportSummary:
        return results[0]


EXPORT = ExportStep()
