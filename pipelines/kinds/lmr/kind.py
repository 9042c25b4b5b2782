"""``lmr``: paper 003's learned late-move-reduction formula, fitted to the ``lmr_examples``
labels with scikit-learn (``pipelines.kinds.lmr.fit``, in the command's own process: seconds)
and scaled to the default formula's bench node count; the alpha-beta engine plays it as
``--lmr lmr@N`` with the formula's coefficients (``--lmr-formula``). A version plays as its
config's ``engine_spec`` says (the evaluation of the search it was fitted for)."""
from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pipelines.lmr.config import LmrConfig
from pipelines.models.kinds import EngineOptions, ModelKind, Progress
from pipelines.models.names import ModelError, ModelVersion

#: The key of the normalised formula in the exported ``lmr.json``.
ARTIFACT_FORMULA = "formula"


def make_config(name: str, given: Mapping[str, Any]) -> LmrConfig:
    return LmrConfig.tiny(**given) if name == "tiny" else LmrConfig(**given)


def fit(lake: Any, config: LmrConfig, progress: Progress) -> ModelVersion:
    from .fit import train_lmr

    return train_lmr(lake, config, progress)[0]


def deploy(model: ModelVersion) -> EngineOptions:
    """The version is the reduction (``--lmr``, the identity), the bench-normalised formula
    of its artifact is ``--lmr-formula``."""
    from engines.alphabeta.formula import LmrFormula

    try:
        text = json.loads(model.artifact_path.read_text())[ARTIFACT_FORMULA]
        formula = LmrFormula.parse(text)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelError(f"model {model.model_id}: no deployed formula in "
                         f"{str(model.artifact_path)!r} ({type(exc).__name__})") from None
    return {"lmr": model.model_id, "lmr_formula": str(formula)}


def describe(lake: Any, model: ModelVersion) -> str:
    from .fit import describe_fit

    return describe_fit(lake, model)


KIND = ModelKind(name="lmr", config=LmrConfig, make_config=make_config, presets=("tiny", "full"),
                 fit=fit, in_process=True, deploy=deploy, describe=describe,
                 panels=("lmr-heatmap", "lmr-fits"))
