"""The ``train`` step: one unit that trains (or resumes) a model of a declared kind, exports
and registers it. The work is ``pipelines.train``; a retry resumes from the last checkpoint."""
from __future__ import annotations

import contextlib
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from flows.step import UnitContext
from pipelines.train import ModelVersion, train
from warehouse import Lake


@dataclass(frozen=True)
class TrainJob:
    """What to train: the model kind (``nnue``) and its typed config (the kind's)."""

    kind: str
    config: Any


class TrainStep:
    name = "train"
    retries = 1

    def concurrency(self, config: TrainJob) -> int:
        return 1

    def open_pool(self, config: TrainJob) -> AbstractContextManager[Any]:
        return contextlib.nullcontext()

    def plan(self, config: TrainJob, lake: Lake) -> list[TrainJob]:
        return [config]

    def units(self, plan: list[TrainJob]) -> list[TrainJob]:
        return plan

    def describe(self, plan: list[TrainJob]) -> str:
        job = plan[0]
        return f"train: {job.kind} {job.config.name}"

    def run_unit(self, unit: TrainJob, context: UnitContext) -> ModelVersion:
        return train(context.lake, unit.kind, unit.config, progress=context.progress)

    def progress(self, plan: list[TrainJob], results: Sequence[ModelVersion],
                 seconds: float) -> str:
        model = results[-1]
        return f"train: {model.model_id} exported to {model.artifact_path} in {seconds:.0f} s"

    def summarize(self, plan: list[TrainJob], results: Sequence[ModelVersion],
                  seconds: float) -> ModelVersion:
        return results[0]


TRAIN = TrainStep()
