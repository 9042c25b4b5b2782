"""Model training, what every kind shares: the generic Lightning trainer
(:mod:`pipelines.train.trainer`), the data set snapshot and its streaming
(:mod:`pipelines.train.dataset`), the shared config and presets (:mod:`pipelines.train.config`)
and artifact files (:mod:`pipelines.train.artifacts`). Each kind's own code (config, model,
data, export) is in its folder, ``pipelines/kinds/<kind>/``. The registry the trained versions
go to is :mod:`pipelines.models.registry`.

Nothing here imports Prefect; ``flows/train.py`` orchestrates.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from pipelines.models.kinds import load_kind
from pipelines.models.names import ModelNotFoundError, ModelVersion
from pipelines.train.config import PRESETS, TrainConfig, TrainConfigError, preset

log = logging.getLogger(__name__)


def train(lake: Any, kind: str, config: Any, callbacks: Sequence[Any] = (),
          progress: Callable[[str], None] | None = None) -> ModelVersion:
    """Train (or resume) a model of the declared ``kind``, export and register it: with the
    Lightning trainer (:func:`pipelines.train.trainer.train_model`, ``callbacks`` added to
    its own) or the kind's own fit; ``progress`` gets the report lines of either."""
    declared = load_kind(kind)
    if declared.lightning is not None:
        from pipelines.train.trainer import train_model

        return train_model(lake, declared.name, declared.lightning(), config, callbacks,
                           progress or log.info)
    assert declared.fit is not None
    return declared.fit(lake, config, progress or log.info)


__all__ = ["PRESETS", "ModelNotFoundError", "ModelVersion", "TrainConfig", "TrainConfigError",
           "preset", "train"]
