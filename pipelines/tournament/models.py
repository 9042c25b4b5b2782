"""Model names in engine options: ``alphabeta:eval=nnue,model=nnue@latest`` becomes
``... --model nnue@3 --nnue <artifact>``, so the program loads the exported file and its
identity (the ``engines`` row, the tournament player) records the concrete version.

One function, :func:`resolve_model_arguments`, serves every model kind and every place that
starts an own engine (``chesslab engine``, tournaments, evaluations): an option whose value
reads ``KIND@VERSION``, ``KIND@latest`` or ``KIND@best`` is resolved through the registry to
the concrete ``KIND@N``, and the kind's artifact option (``ARTIFACT_OPTIONS``) is added with
the exported file. A new model kind adds its entry there.

Every artifact handed to an engine is first checked against the sha256 the registry recorded
(:func:`pipelines.train.registry.verified_artifact`): a replaced or damaged file is refused
before any game, naming the model and both hashes. ``--model`` always names a registry model,
so an unknown kind there (``model=foo@1``) is refused too instead of reaching the engine.
"""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

from engines.registry import EngineSpec
from warehouse import Lake

#: Per model kind, the program option that takes the exported artifact's path.
ARTIFACT_OPTIONS = {"nnue": "--nnue", "policy_value": "--net"}
#: Options whose value is always a registry model when it reads ``KIND@VERSION``.
MODEL_OPTIONS = ("--model",)
#: Options that name a model the program finds by name under the home (``volatility@N``):
#: checked against the registry's hash when registered, passed on unchanged.
NAMED_MODEL_OPTIONS = {"--volatility": "volatility"}


def is_model_name(value: str) -> bool:
    """``nnue@3``, ``nnue@latest``, ``nnue@best`` (not ``stockfish@1350``: not a model kind).

    >>> is_model_name("nnue@latest"), is_model_name("hce"), is_model_name("stockfish@1350")
    (True, False, False)
    """
    kind, at, version = value.partition("@")
    return bool(at) and kind in ARTIFACT_OPTIONS and bool(version)


def resolve_model_arguments(argv: Sequence[str], home: str | os.PathLike[str],
                            program: str | None = None) -> list[str]:
    """``--OPTION MODEL`` pairs of an own program's arguments with the model resolved (the
    concrete ``KIND@N``, then the kind's artifact option and its verified file); other
    arguments unchanged. ``program`` (``alphabeta``): the kinds it can load are checked.

    ModelNotFoundError (a LookupError naming the model) when the registry has no such model,
    ModelArtifactError (a ValueError) when its file is not the one recorded.
    """
    from pipelines.train.registry import NAME

    out: list[str] = []
    for index, argument in enumerate(argv):
        previous = argv[index - 1] if index else ""
        if previous.startswith("--") and (is_model_name(argument) or (
                previous in MODEL_OPTIONS and NAME.match(argument))):
            out += model_arguments(Lake(home), argument, program)
        elif previous in NAMED_MODEL_OPTIONS and NAME.match(argument):
            out.append(named_model(Lake(home), argument, NAMED_MODEL_OPTIONS[previous]))
        else:
            out.append(argument)
    return out


def model_arguments(lake: Lake, name: str, program: str | None) -> list[str]:
    """The concrete ``KIND@N``, the kind's artifact option and the verified file."""
    from pipelines.train.registry import ModelNotFoundError, resolve_verified

    model = resolve_verified(lake, name)
    option = ARTIFACT_OPTIONS.get(model.kind)
    if option is None or (program is not None and not takes_option(program, option)):
        loads = [k for k, o in ARTIFACT_OPTIONS.items()
                 if program is None or takes_option(program, o)]
        raise ModelNotFoundError(
            f"model {name!r} is a {model.kind} model; {program or 'an own engine'} loads "
            f"{' or '.join(loads) or 'no'} models by --model")
    return [model.model_id, option, str(model.artifact_path)]


def named_model(lake: Lake, name: str, kind: str) -> str:
    """A model the program loads by its name: the concrete ``KIND@N`` once the registry's row
    (when it has one) and the file's hash agree; unregistered names are left to the program."""
    from pipelines.train.registry import ModelNotFoundError, resolve_verified

    if not name.startswith(f"{kind}@"):
        raise ModelNotFoundError(f"model {name!r}: this option takes a {kind} model "
                                 f"({kind}@N)")
    try:
        return resolve_verified(lake, name).model_id
    except ModelNotFoundError:
        if name.split("@", 1)[1].isdigit():
            return name          # found by the program under the home, as before the registry
        raise


def takes_option(program: str, option: str) -> bool:
    """Whether an own program has the command-line option (``--nnue``)."""
    from engines import uci

    fields = dataclasses.fields(uci.load_program(program).options)
    return option[2:].replace("-", "_") in {f.name for f in fields}


def names_model(argv: Sequence[str]) -> bool:
    """Whether an own program's arguments name a registry model."""
    from pipelines.train.registry import NAME

    return any(is_model_name(argument) or (
        previous in (*MODEL_OPTIONS, *NAMED_MODEL_OPTIONS) and NAME.match(argument))
        for previous, argument in zip(["", *argv], argv, strict=False))


def resolve_spec_models(spec: EngineSpec, home: str | os.PathLike[str]) -> EngineSpec:
    """An own-engine player with the models of its options resolved and their files checked
    against the registry (others unchanged)."""
    from pipelines.train.registry import ModelArtifactError, ModelNotFoundError

    if spec.kind != "own" or not names_model(spec.command[4:]):
        return spec
    try:
        argv = resolve_model_arguments(spec.command[4:], home, program=spec.command[3])
    except ModelNotFoundError as exc:
        raise ModelNotFoundError(f"engine {spec.name!r}: {exc}") from None
    except ModelArtifactError as exc:
        raise ModelArtifactError(f"engine {spec.name!r}: {exc}") from None
    return dataclasses.replace(spec, command=(*spec.command[:4], *argv))
