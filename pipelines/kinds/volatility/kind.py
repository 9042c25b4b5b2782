"""``volatility``: paper 003's classifier of stable positions (will one more ply change the
evaluation?), trained by the Lightning trainer (``pipelines.kinds.volatility.module``), exported as
``volatility.npz``; the alpha-beta and stockfish-volatility engines stop their deepening
early with it. Retrained on schedule when enough new labels exist."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pipelines.models.kinds import EngineOptions, ModelKind
from pipelines.models.names import ModelVersion
from pipelines.train.config import preset

from .config import VolatilityConfig


def make_config(name: str, given: Mapping[str, Any]) -> VolatilityConfig:
    """The preset's values, then the options given; the run is named volatility-PRESET."""
    return preset(VolatilityConfig, name, **{"name": f"volatility-{name}", **given})


def lightning() -> Any:
    from .module import VolatilityKind

    return VolatilityKind()


def deploy(model: ModelVersion) -> EngineOptions:
    """The version is the stop rule (``--volatility``, the identity), its file is
    ``--volatility-file``."""
    return {"volatility": model.model_id, "volatility_file": str(model.artifact_path)}


KIND = ModelKind(name="volatility", config=VolatilityConfig, make_config=make_config,
                 lightning=lightning, deploy=deploy,
                 engine="alphabeta:volatility={model}", retrain=True,
                 panels=("volatility-roc", "volatility-gains", "volatility-table"))
