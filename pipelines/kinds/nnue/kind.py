"""``nnue``: the HalfKP network the alpha-beta engine's ``eval=nnue`` plays with, trained by
the Lightning trainer on Stockfish scores (``pipelines.kinds.nnue.module``), exported as a chesslab
NNUE v1 ``.npz``; retrained on schedule when enough new labels exist."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pipelines.models.kinds import EngineOptions, ModelKind
from pipelines.models.names import ModelVersion
from pipelines.train.config import preset

from .config import NnueConfig


def make_config(name: str, given: Mapping[str, Any]) -> NnueConfig:
    """The preset's values, then the options given; the run is named nnue-PRESET."""
    return preset(NnueConfig, name, **{"name": f"nnue-{name}", **given})


def lightning() -> Any:
    from .module import NnueKind

    return NnueKind()


def deploy(model: ModelVersion) -> EngineOptions:
    """The version names the net (``--model``, the identity), its file is ``--nnue``."""
    return {"model": model.model_id, "nnue": str(model.artifact_path)}


KIND = ModelKind(name="nnue", config=NnueConfig, make_config=make_config,
                 lightning=lightning, deploy=deploy,
                 engine="alphabeta:eval=nnue,model={model}", retrain=True)
