"""Choices in typed configs: a field typed with a ``Literal`` (nnue-pytorch's config style)
names the values it takes, once. A config's ``__post_init__`` checks them with
:func:`choice_problem`; the command-line options generated from the config
(``flows/options.py``) show them with :func:`literal_choices`.

It sits at the bottom of ``engines/`` (as ``engines/stamps.py``) so that engines, pipelines
and flows can all use it.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Match:
...     format: Literal["round-robin", "gauntlet"] = "round-robin"
...     book: Literal["epd", "pgn"] | None = None
>>> choice_problem(Match(book=None)) is None
True
>>> choice_problem(Match(format="swiss"))
"format must be one of round-robin, gauntlet, got 'swiss'"
>>> literal_choices(Literal["epd", "pgn"] | None)
('epd', 'pgn')
"""
from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, Literal


def literal_choices(hint: Any) -> tuple[Any, ...] | None:
    """The values a ``Literal`` type (or an optional one) allows; None for any other type."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and len(args) == 1:
        hint = args[0]
    return typing.get_args(hint) if typing.get_origin(hint) is Literal else None


ChoiceField = tuple[str, tuple[Any, ...], bool]     # name, choices, None allowed
_FIELDS: dict[type, tuple[ChoiceField, ...]] = {}


def choice_fields(config_cls: type) -> tuple[ChoiceField, ...]:
    """Each field of a config dataclass typed with a ``Literal``: its name, its choices and
    whether it may be None, in field order (read once per class)."""
    if config_cls not in _FIELDS:
        hints = typing.get_type_hints(config_cls)
        _FIELDS[config_cls] = tuple(
            (f.name, choices, type(None) in typing.get_args(hints[f.name]))
            for f in dataclasses.fields(config_cls)
            if (choices := literal_choices(hints[f.name])) is not None)
    return _FIELDS[config_cls]


def choice_problem(config: Any) -> str | None:
    """``NAME must be one of A, B, got 'X'`` for the first field whose value is not one of its
    ``Literal``'s choices (None where the type allows it), else None."""
    for name, choices, optional in choice_fields(type(config)):
        value = getattr(config, name)
        if value not in choices and not (optional and value is None):
            return f"{name} must be one of {', '.join(map(str, choices))}, got {value!r}"
    return None


__all__ = ["choice_fields", "choice_problem", "literal_choices"]
