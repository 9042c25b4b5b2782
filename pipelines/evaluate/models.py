"""The evaluate step's side of the models: which engine plays a version and whom it plays by
default (both declared by its kind, ``pipelines/kinds/<kind>/kind.py``), and the events an
evaluation leaves (``evaluated``, then ``promoted`` when the SPRT accepts H1, which moves
``KIND@best``)."""
from __future__ import annotations

from typing import Any

from pipelines.evaluate.config import EvaluateError
from pipelines.models.kinds import DEFAULT_BASELINE, load_kind, playing_spec
from pipelines.models.names import ModelError
from warehouse import Lake


def model_engine_spec(kind: str, model_id: str, config: dict[str, Any]) -> str:
    """The engine spec that plays a model (:func:`pipelines.models.kinds.playing_spec`: its
    config's ``engine_spec``, else its kind's engine, ``model=`` last: a ``,`` after ``@N``
    would read as a ladder of rungs); EvaluateError when none plays it.

    >>> model_engine_spec("nnue", "nnue@3", {})
    'alphabeta:eval=nnue,model=nnue@3'
    """
    try:
        return playing_spec(kind, model_id, config)
    except ModelError as exc:
        raise EvaluateError(str(exc)) from None


def default_baseline(kind: str | None, model_id: str | None) -> str:
    """The baseline of an evaluation that names none: its kind's.

    >>> default_baseline("policy_value", "policy_value@3")
    'puct:simulations=0,model=policy_value@3'
    >>> default_baseline("nnue", "nnue@3"), default_baseline(None, None)
    ('alphabeta:eval=hce', 'alphabeta:eval=hce')
    """
    if kind is None or model_id is None:
        return DEFAULT_BASELINE
    return load_kind(kind).baseline_for(model_id)


def is_self_baseline(model_id: str | None, against: str) -> bool:
    """Whether ``against`` is the model's own bare form (an evaluation of its search, which
    says nothing about it against other versions: no promotion follows it)."""
    if not model_id:
        return False
    kind = load_kind(model_id.split("@", 1)[0])
    return kind.plays_itself and against == kind.baseline_for(model_id)


def resolve_candidate(lake: Lake, name: str) -> tuple[str, str]:
    """(model id, engine spec) of a registry name (``nnue@3``, ``nnue@latest``)."""
    from pipelines.models.registry import resolve_model

    model = resolve_model(lake, name)
    return model.model_id, model_engine_spec(model.kind, model.model_id, model.config)


def record_model_event(lake: Lake, model_id: str, event: str, payload: dict[str, Any]) -> None:
    from pipelines.models.registry import record_event

    record_event(lake, model_id, event, payload)
