"""A learned reduction formula in play: ``lmr@N`` (or ``lmr@latest``, ``lmr@best``) resolved
through the model registry to the bench-normalised coefficients the engine takes as
``--lmr-formula`` (the engine itself never reads the warehouse).

>>> with_learned_lmr("alphabeta:eval=hce,lmr=lmr@2", "lmr@2", "logd=0.5")
'alphabeta:eval=hce,lmr_formula=logd=0.5,lmr=lmr@2'
"""
from __future__ import annotations

import json

from engines.alphabeta.formula import LmrFormula
from engines.identity import MODEL_VERSION
from pipelines.lmr.config import LmrDataError
from pipelines.train.registry import resolve_verified
from warehouse import Lake

KIND = "lmr"
ARTIFACT_FORMULA = "formula"     # the key of the normalised formula in the exported lmr.json


def learned_formula(lake: Lake, name: str) -> tuple[str, LmrFormula]:
    """(model id, bench-normalised formula) of ``lmr@N`` / ``lmr@latest`` / ``lmr@best``."""
    model = resolve_verified(lake, name)
    if model.kind != KIND:
        raise LmrDataError(f"model {name!r} is a {model.kind} model, not an lmr formula")
    try:
        text = json.loads(model.artifact_path.read_text())[ARTIFACT_FORMULA]
    except (OSError, ValueError, KeyError) as exc:
        raise LmrDataError(f"model {model.model_id}: no deployed formula in "
                           f"{str(model.artifact_path)!r} ({type(exc).__name__})") from None
    return model.model_id, LmrFormula.parse(text)


def is_learned(lmr: str | None) -> bool:
    return bool(lmr) and MODEL_VERSION.match(str(lmr)) is not None


def learned_setting(spec: str) -> str | None:
    """The ``lmr=KIND@V`` value of an alphabeta spec without ``lmr_formula``; else None."""
    head, _, rest = spec.partition("#")[0].partition("?")[0].partition(":")
    if head != "alphabeta":
        return None
    settings = dict(item.partition("=")[::2] for item in rest.split(",") if item)
    lmr = settings.get("lmr")
    return lmr if is_learned(lmr) and "lmr_formula" not in settings else None


def with_learned_lmr(spec: str, model: str, formula: str) -> str:
    """``spec`` with ``lmr=NAME`` replaced by ``lmr_formula=...,lmr=MODEL`` at the end of the
    settings (after ``@N`` a ``,`` would read as a ladder of rungs)."""
    body, hash_mark, label = spec.partition("#")
    body, question, options = body.partition("?")
    head, _, rest = body.partition(":")
    settings = [item for item in rest.split(",") if item and not item.startswith("lmr=")]
    settings += [f"lmr_formula={formula}", f"lmr={model}"]
    return f"{head}:{','.join(settings)}{question}{options}{hash_mark}{label}"


def resolve_learned_specs(lake: Lake, specs: tuple[str, ...]) -> tuple[str, ...]:
    """Engine specs with every ``alphabeta:...,lmr=lmr@N`` given its formula."""
    resolved = []
    for spec in specs:
        name = learned_setting(spec)
        if name is None:
            resolved.append(spec)
            continue
        model, formula = learned_formula(lake, name)
        resolved.append(with_learned_lmr(spec, model, str(formula)))
    return tuple(resolved)
