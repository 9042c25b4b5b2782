"""``policy_value``: the policy-value ResNet of the PUCT engine (papers 002 and 004), one
version per round of a ``chesslab selfplay-train`` run (``pipelines.kinds.policy_value.module``,
trained by the Lightning trainer on the run's replay window). An evaluation plays a version's
search against its own bare network, at 128 simulations a move unless told otherwise."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pipelines.models.kinds import EngineOptions, ModelKind
from pipelines.models.names import ModelVersion
from pipelines.train.config import preset

from .config import PolicyValueConfig


def make_config(name: str, given: Mapping[str, Any]) -> PolicyValueConfig:
    """The preset's values, then the options given; the run is named policy_value-PRESET."""
    return preset(PolicyValueConfig, name, **{"name": f"policy_value-{name}", **given})


def lightning() -> Any:
    from .module import PolicyValueKind

    return PolicyValueKind()


def deploy(model: ModelVersion) -> EngineOptions:
    """The version names the net (``--model``), its file is ``--net``."""
    return {"model": model.model_id, "net": str(model.artifact_path)}


KIND = ModelKind(name="policy_value", config=PolicyValueConfig, make_config=make_config,
                 lightning=lightning, deploy=deploy, command=False,
                 engine="puct:model={model}",
                 # a PUCT simulation costs a network call, a thousand times an alpha-beta node
                 baseline="puct:simulations=0,model={model}", limits={"nodes": 128},
                 panels=("decisive-share",))
