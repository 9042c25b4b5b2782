"""Model names in engine options: ``alphabeta:eval=nnue,model=nnue@latest`` becomes
``... --model nnue@3 --nnue <artifact>``, so the program loads the exported file and its
identity (the ``engines`` row, the tournament player) records the concrete version.

One function, :func:`resolve_model_arguments`, serves every model kind and every place that
starts an own engine (``chesslab engine``, tournaments, evaluations): an option whose value
reads ``KIND@VERSION``, ``KIND@latest`` or ``KIND@best`` is resolved through the registry to
the concrete ``KIND@N``, and the kind's artifact option (``ARTIFACT_OPTIONS``) is added with
the exported file. A new model kind adds its entry there.
"""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

from engines.registry import EngineSpec
from warehouse import Lake

#: Per model kind, the program option that takes the exported artifact's path.
ARTIFACT_OPTIONS = {"nnue": "--nnue", "policy_value": "--net"}


def is_model_name(value: str) -> bool:
    """``nnue@3``, ``nnue@latest``, ``nnue@best`` (not ``stockfish@1350``: not a model kind).

    >>> is_model_name("nnue@latest"), is_model_name("hce"), is_model_name("stockfish@1350")
    (True, False, False)
    """
    kind, at, version = value.partition("@")
    return bool(at) and kind in ARTIFACT_OPTIONS and bool(version)


def resolve_model_arguments(argv: Sequence[str],
                            home: str | os.PathLike[str] | None = None) -> list[str]:
    """``--OPTION MODEL`` pairs of an own program's arguments with the model resolved (the
    concrete ``KIND@N``, then the kind's artifact option and file); other arguments unchanged.

    ModelNotFoundError (a LookupError naming the model) when the registry has no such model.
    """
    from pipelines.train.registry import resolve_model

    out: list[str] = []
    for index, argument in enumerate(argv):
        previous = argv[index - 1] if index else ""
        if previous.startswith("--") and is_model_name(argument):
            model = resolve_model(Lake(home), argument)
            out += [model.model_id, ARTIFACT_OPTIONS[model.kind], str(model.artifact_path)]
        else:
            out.append(argument)
    return out


def names_model(argv: Sequence[str]) -> bool:
    """Whether an own program's arguments name a registry model."""
    return any(is_model_name(argument) for argument in argv)


def resolve_spec_models(spec: EngineSpec, home: str | os.PathLike[str] | None) -> EngineSpec:
    """An own-engine player with the models of its options resolved (others unchanged)."""
    if spec.kind != "own" or not names_model(spec.command[4:]):
        return spec
    argv = resolve_model_arguments(spec.command[4:], home)
    return dataclasses.replace(spec, command=(*spec.command[:4], *argv))
