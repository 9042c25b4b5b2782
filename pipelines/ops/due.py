"""What the scheduled jobs have to do, read from the warehouse: whether a kind is due for
retraining, which model versions wait for an evaluation, and whom they play."""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from pipelines.evaluate.config import EvaluateError
from pipelines.evaluate.models import model_engine_spec
from pipelines.models.kinds import load_kind
from pipelines.models.registry import ModelNotFoundError, resolve_model
from warehouse import Lake, connect
from warehouse.catalog import named_query, query

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetrainDecision:
    """Whether ``kind`` is retrained now, from which model's config, and why."""

    kind: str
    due: bool
    model_id: str | None          # the latest finished version (its config is reused)
    config: dict[str, Any] | None
    new_positions: int            # labelled after that model's dataset was taken
    reason: str


def retrain_decision(lake: Lake, kind: str, min_new_labels: int) -> RetrainDecision:
    """Due when the label engine of the latest ``kind`` model has scored at least
    ``min_new_labels`` positions at its depths since that model's dataset was taken."""
    rows = query(connect(lake), named_query("ops_new_labels"), {"kind": kind}).to_pylist()
    if not rows:
        return RetrainDecision(kind, False, None, None, 0,
                               f"no finished {kind} model yet: train one first "
                               f"(chesslab train {kind})")
    row = rows[0]
    model = resolve_model(lake, row["model_id"])
    new = int(row["new_positions"])
    due = new >= min_new_labels
    count = (f"{new:,} new labels, {min_new_labels:,} needed" if due
             else f"{new:,} of {min_new_labels:,} new labels")
    reason = (f"{count} (positions labelled by "
              f"{row['label_engine_id']} at depths {','.join(map(str, row['label_depths']))} "
              f"since {model.model_id}'s dataset)")
    return RetrainDecision(kind, due, model.model_id, model.config, new, reason)


def unevaluated_models(lake: Lake) -> list[str]:
    """Finished model versions with no ``evaluated`` event and an engine that plays them,
    oldest first."""
    rows = query(connect(lake), named_query("ops_unevaluated_models")).to_pylist()
    playable = []
    for row in rows:
        try:
            model_engine_spec(row["kind"], row["model_id"], json.loads(row["config"]))
        except EvaluateError:
            log.debug("%s: no engine plays it, not evaluated", row["model_id"])
            continue
        playable.append(row["model_id"])
    return playable


def baseline_for(lake: Lake, model_id: str, default: str | None) -> str | None:
    """The engine spec of ``KIND@best`` when there is one other than ``model_id``, else
    ``default`` (the first model of a kind plays the configured baseline; None: the kind's
    default). A kind whose default baseline is the version itself unsearched
    (``policy_value``) always gets ``default``: each version's search against its bare net."""
    kind = model_id.split("@", 1)[0]
    if load_kind(kind).plays_itself:
        return default
    try:
        best = resolve_model(lake, f"{kind}@best")
    except ModelNotFoundError:
        return default
    if best.model_id == model_id:
        return default
    return model_engine_spec(best.kind, best.model_id, best.config)
