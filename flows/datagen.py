"""The ``datagen`` composition: the ``datagen`` step (annotated engine games in batches on the
games runner, each batch a PGN file) then the ``ingest`` step on the run's files, so data
generation is a step like the others. The work is ``pipelines.datagen``."""
from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flows.ingest import INGEST, IngestJob
from flows.step import Runner, UnitContext
from pipelines.datagen.run import DatagenConfig, DatagenSummary, generate
from pipelines.ingest import IngestConfig, IngestSummary
from warehouse import Lake


@dataclass(frozen=True)
class DatagenPlan:
    units: list[tuple[DatagenConfig, str]]      # the config and the output folder


class DatagenStep:
    """One unit, the run, whose batches the games runner hands to its workers."""

    name = "datagen"
    retries = 0      # a rerun resumes anyway: finished batches are files

    def concurrency(self, config: DatagenConfig) -> int:
        return 1

    def open_pool(self, config: DatagenConfig) -> AbstractContextManager[Any]:
        return contextlib.nullcontext()

    def plan(self, config: DatagenConfig, lake: Lake) -> DatagenPlan:
        return DatagenPlan([(config, config.out or str(lake.home / "datagen"))])

    def units(self, plan: DatagenPlan) -> list[tuple[DatagenConfig, str]]:
        return plan.units

    def describe(self, plan: DatagenPlan) -> None:
        return None

    def run_unit(self, unit: tuple[DatagenConfig, str], context: UnitContext) -> DatagenSummary:
        config, out = unit
        return generate(config, Path(out), context.progress, context.lake)

    def progress(self, plan: DatagenPlan, results: Sequence[DatagenSummary],
                 seconds: float) -> None:
        return None

    def summarize(self, plan: DatagenPlan, results: Sequence[DatagenSummary],
                  seconds: float) -> DatagenSummary:
        return results[0]


DATAGEN = DatagenStep()


@dataclass(frozen=True)
class Datagen:
    games: DatagenSummary
    ingested: list[IngestSummary] | None      # None with --no-ingest


def datagen(runner: Runner, config: DatagenConfig, lake: Lake,
            ingest: IngestConfig | None = None) -> Datagen:
    """Play (or resume) the run's batches, then ingest its files."""
    def body() -> Datagen:
        summary = runner.run(DATAGEN, config, lake)
        ingested = None
        if config.ingest and summary.files:
            labels = {} if config.format == "pgn" else {"engine_id": summary.engine_id,
                                                        "depth": summary.label_depth}
            reading = dataclasses.replace(ingest or IngestConfig(workers=1), **labels)
            ingested = runner.run(INGEST, IngestJob(tuple(summary.files), reading), lake)
        return Datagen(summary, ingested)

    return runner.compose("datagen", body)
