"""The evaluate step's side of the model registry: which engine plays a model, and the events
an evaluation leaves (``evaluated``, then ``promoted`` when the SPRT accepts H1, which moves
``KIND@best``)."""
from __future__ import annotations

from typing import Any

from pipelines.evaluate.config import EvaluateError
from warehouse import Lake

# The engine that deploys each model kind; ``model=`` goes last (a ``,`` after ``@N`` would
# read as a ladder of rungs).
DEPLOY_SPECS = {"nnue": "alphabeta:eval=nnue,model={model_id}",
                "volatility": "alphabeta:volatility={model_id}",
                "policy_value": "puct:model={model_id}"}
#: The baseline when none is given: the alpha-beta engine's HCE, except for kinds whose
#: question is the search itself: a ``policy_value`` checkpoint searching (PUCT, the limit's
#: simulations) against the same checkpoint's bare network (its policy's top move).
DEFAULT_BASELINE = "alphabeta:eval=hce"
SELF_BASELINES = {"policy_value": "puct:simulations=0,model={model_id}"}


def model_engine_spec(kind: str, model_id: str, config: dict[str, Any]) -> str:
    """The engine spec that plays a model: its config's ``engine_spec`` when it names one,
    else the deploy spec of its kind.

    >>> model_engine_spec("nnue", "nnue@3", {})
    'alphabeta:eval=nnue,model=nnue@3'
    >>> model_engine_spec("nnue", "nnue@4", {"engine_spec": "alphabeta:eval=hce-simple"})
    'alphabeta:eval=hce-simple'
    """
    if config.get("engine_spec"):
        return str(config["engine_spec"])
    if kind not in DEPLOY_SPECS:
        raise EvaluateError(f"model {model_id!r}: no engine plays models of kind {kind!r} "
                            f"(known: {', '.join(DEPLOY_SPECS)})")
    return DEPLOY_SPECS[kind].format(model_id=model_id)


def default_baseline(kind: str | None, model_id: str | None) -> str:
    """The baseline of an evaluation that names none.

    >>> default_baseline("policy_value", "policy_value@3")
    'puct:simulations=0,model=policy_value@3'
    >>> default_baseline("nnue", "nnue@3"), default_baseline(None, None)
    ('alphabeta:eval=hce', 'alphabeta:eval=hce')
    """
    if kind in SELF_BASELINES and model_id:
        return SELF_BASELINES[kind].format(model_id=model_id)
    return DEFAULT_BASELINE


def is_self_baseline(model_id: str | None, against: str) -> bool:
    """Whether ``against`` is the model's own bare form (an evaluation of its search, which
    says nothing about it against other versions: no promotion follows it)."""
    if not model_id:
        return False
    kind = model_id.split("@", 1)[0]
    return kind in SELF_BASELINES and against == SELF_BASELINES[kind].format(model_id=model_id)


def resolve_candidate(lake: Lake, name: str) -> tuple[str, str]:
    """(model id, engine spec) of a registry name (``nnue@3``, ``nnue@latest``)."""
    from pipelines.train.registry import resolve_model

    model = resolve_model(lake, name)
    return model.model_id, model_engine_spec(model.kind, model.model_id, model.config)


def record_model_event(lake: Lake, model_id: str, event: str, payload: dict[str, Any]) -> None:
    from pipelines.train.registry import record_event

    record_event(lake, model_id, event, payload)
