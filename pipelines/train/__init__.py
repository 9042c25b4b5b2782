"""Model training: a generic Lightning trainer, a model registry in the warehouse and the
model kinds that plug into them (NNUE first; the volatility classifier, LMR regression and
policy-value net follow the same :class:`~pipelines.train.trainer.ModelKind` interface).

Nothing here imports Prefect; ``flows/train.py`` orchestrates.
"""
from __future__ import annotations

from typing import Any

from pipelines.train.config import PRESETS, NnueConfig, TrainConfig, TrainConfigError, preset
from pipelines.train.policy_value_config import PolicyValueConfig
from pipelines.train.registry import ModelNotFoundError, ModelVersion, resolve_model
from pipelines.train.volatility_config import VolatilityConfig


def model_kinds() -> dict[str, Any]:
    """Every trainable kind by name (imported on demand: torch is slow to import)."""
    from pipelines.train.nnue import NnueKind
    from pipelines.train.policy_value import PolicyValueKind
    from pipelines.train.volatility import VolatilityKind

    return {"nnue": NnueKind(), "volatility": VolatilityKind(),
            "policy_value": PolicyValueKind()}


def train(lake: Any, kind: str, config: TrainConfig, callbacks: Any = ()) -> ModelVersion:
    """Train (or resume) a model of ``kind``; see :func:`pipelines.train.trainer.train_model`."""
    from pipelines.train.trainer import train_model

    kinds = model_kinds()
    if kind not in kinds:
        raise ValueError(f"unknown model kind {kind!r} (one of {', '.join(kinds)})")
    return train_model(lake, kinds[kind], config, callbacks)


CONFIGS: dict[str, type[TrainConfig]] = {"nnue": NnueConfig, "volatility": VolatilityConfig,
                                         "policy_value": PolicyValueConfig}

__all__ = ["CONFIGS", "PRESETS", "ModelNotFoundError", "ModelVersion", "NnueConfig", "PolicyValueConfig",
           "TrainConfig", "TrainConfigError", "VolatilityConfig", "model_kinds", "preset", "resolve_model", "train"]
