"""The one place a model name becomes what an engine loads.

:func:`engine_options` turns ``KIND@VERSION`` (or ``KIND@latest``, ``KIND@best``) into the
engine options of that version: the registry resolves the name, the artifact's sha256 is
checked against the one recorded at export, and the kind's ``deploy`` gives the options
(``nnue@best`` -> ``{"model": "nnue@3", "nnue": FILE}``; ``lmr@2`` -> ``{"lmr": "lmr@2",
"lmr_formula": "logd*logm=..."}``; ``volatility@latest`` -> ``{"volatility": "volatility@4",
"volatility_file": FILE}``; ``policy_value@1`` -> ``{"model": ..., "net": FILE}``).

:func:`resolve_settings` applies it to an own program's settings (the options of ``chesslab
engine alphabeta --model nnue@latest``, a player's ``alphabeta:lmr=lmr@best``): every value
that names a version of a declared kind (any ``KIND@V`` under ``model``) is replaced by its
engine options, checked against the program's options. :func:`resolve_player` does it for a
tournament or self-play player. ``chesslab engine``, ``bench``, tournaments, ``evaluate``,
``selfplay``, the scheduled jobs of ``serve`` and the dashboard all come here: engines take
files and values only, and never read the warehouse.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pipelines.models.kinds import EngineOptions, is_kind, load_kind
from pipelines.models.names import NAME, ModelError, ModelVersion
from pipelines.models.registry import resolve_verified

if TYPE_CHECKING:
    from engines.registry import EngineSpec
    from warehouse import Lake

#: The program option that always names a registry model (``--model``), whatever its kind.
MODEL_OPTION = "model"


def is_model_name(value: object) -> bool:
    """``nnue@3``, ``lmr@latest``, ``volatility@best``: a version name of a declared kind
    (not ``stockfish@1350``, a ladder rung).

    >>> is_model_name("nnue@latest"), is_model_name("hce"), is_model_name("stockfish@1350")
    (True, False, False)
    """
    match = NAME.match(str(value).strip())
    return match is not None and is_kind(match["kind"])


def names_model(option: str, value: object) -> bool:
    """Whether an option's value is to be resolved: a model name, or anything that reads
    ``KIND@VERSION`` under ``model`` (an unknown kind there is refused, not passed on)."""
    return is_model_name(value) or (option == MODEL_OPTION and NAME.match(str(value)) is not None)


def engine_options(lake: Lake, name: str) -> EngineOptions:
    """The engine options that deploy the version ``name`` names (see the module).

    ModelNotFoundError (a LookupError) naming the model when the registry has none,
    ModelArtifactError when its file is not the one recorded, ModelError when no engine
    loads the kind."""
    return deployment(lake, name)[1]


def deployment(lake: Lake, name: str) -> tuple[ModelVersion, EngineOptions]:
    """The version ``name`` names (its artifact checked) and its engine options."""
    model = resolve_verified(lake, name)
    kind = load_kind(model.kind)
    if kind.deploy is None:
        raise ModelError(f"model {model.model_id}: no engine loads {model.kind} models")
    return model, kind.deploy(model)


def resolve_settings(lake: Lake, program: str, settings: Mapping[str, str],
                     known: Sequence[str] | None = None) -> dict[str, str]:
    """``settings`` (option field -> value) of the own program ``program`` with every model
    name replaced by its engine options. ``known``: the program's option fields (default:
    its options dataclass's). A name under another option than the one its kind deploys by
    (``model=volatility@3``), or a deployment that needs an option the program lacks, is a
    ModelError naming both."""
    fields = list(known) if known is not None else program_fields(program)
    resolved = dict(settings)
    for option, value in settings.items():
        if not names_model(option, value):
            continue
        model, options = deployment(lake, str(value))
        named_by = [o for o, v in options.items() if v == model.model_id]
        if option not in named_by:
            raise ModelError(f"model {value!r} is a {model.kind} model: {program} takes it as "
                             f"{' or '.join(f'{o}={value}' for o in named_by)}")
        missing = [o for o in options if o not in fields]
        if missing:
            raise ModelError(f"model {value!r}: {program} has no option {missing[0]!r} to "
                             f"load it (its options: {', '.join(fields)})")
        resolved.update(options)
    return resolved


def program_fields(program: str) -> list[str]:
    """The option fields of an own program (``engines/<program>/program.py``)."""
    from engines import uci

    return [f.name for f in dataclasses.fields(uci.load_program(program).options)]


def settings_of(argv: Sequence[str]) -> dict[str, str]:
    """``--flag value`` pairs of an own program's command line as option fields.

    >>> settings_of(["--eval", "nnue", "--model", "nnue@3"])
    {'eval': 'nnue', 'model': 'nnue@3'}
    """
    if len(argv) % 2:
        raise ModelError(f"own engine arguments must be --option value pairs, got {list(argv)}")
    return {flag.removeprefix("--").replace("-", "_"): value
            for flag, value in zip(argv[::2], argv[1::2], strict=True)}


def argv_of(settings: Mapping[str, str]) -> list[str]:
    """The command line of option fields (:func:`settings_of`'s inverse)."""
    return [item for option, value in settings.items()
            for item in (f"--{option.replace('_', '-')}", str(value))]


def resolve_player(lake: Lake, spec: EngineSpec) -> EngineSpec:
    """An own-engine player (``alphabeta:eval=nnue,model=nnue@latest``) with its models
    resolved (:func:`resolve_settings`) in its command line; other players unchanged. Errors
    name the player."""
    if spec.kind != "own" or ":" in spec.command[3] or not any(
            names_model(option, value) for option, value in settings_of(
                spec.command[4:]).items()):
        return spec
    try:
        settings = resolve_settings(lake, spec.command[3], settings_of(spec.command[4:]))
    except ModelError as exc:
        raise type(exc)(f"engine {spec.name!r}: {exc}") from None
    return dataclasses.replace(spec, command=(*spec.command[:4], *argv_of(settings)))
