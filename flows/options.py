"""Command-line options generated from a step's config dataclass, so the two never drift.

A field's ``metadata`` may hold ``help`` and ``flag`` (the option name, default ``--field-name``);
tuples of ints/strings are given comma-separated (``--depths 5,6,7``). A field typed with a
``Literal`` shows its choices (``--format {round-robin,gauntlet}``); the config's own check
(:func:`engines.config_choices.choice_problem`) refuses any other value, so a bad one is the
same one-line error from the command line, a schedules file or Python.
"""
from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from typing import Any, TypeVar

from engines.config_choices import literal_choices

C = TypeVar("C")


def add_config_arguments(parser: argparse._ActionsContainer, config_cls: type,
                         skip: tuple[str, ...] = (),
                         groups: dict[str, tuple[str, ...]] | None = None) -> None:
    """One option per field of ``config_cls`` (defaults shown in --help); ``groups`` (title:
    field names) shows them in argument groups, the fields it does not name at the end."""
    hints = typing.get_type_hints(config_cls)
    group_of = {name: title for title, names in (groups or {}).items() for name in names}
    containers: dict[str, Any] = {title: parser.add_argument_group(title)
                                  for title in (groups or {})}
    if groups:
        containers[""] = parser.add_argument_group("other options")
    for f in dataclasses.fields(config_cls):
        if f.name in skip or not f.init:
            continue
        target = containers[group_of.get(f.name, "")] if groups else parser
        flag = f.metadata.get("flag", "--" + f.name.replace("_", "-"))
        kind = _base_type(hints[f.name])
        default = _default(f)
        help_text = f.metadata.get("help", "").replace("%", "%%")  # argparse formats help
        if kind is bool:   # Python 3.11's BooleanOptionalAction shows no default itself
            target.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction,
                                default=default,
                                help=f"{help_text} (default: {bool_default(flag, default)})")
        else:
            shown = f" (default: {default})" if default != "" else ""   # "": help says
            target.add_argument(flag, dest=f.name, type=_parser_for(hints[f.name], kind),
                                default=default, help=f"{help_text}{shown}",
                                metavar=choices_metavar(hints[f.name]))


#: What ``--format`` of a command's output offers: a table for people, one JSON document for
#: programs (``jsonl``, one object per line, where the output is rows: ``sql``).
OUTPUT_FORMATS = ("table", "json")


def add_output_format(parser: argparse._ActionsContainer, formats: tuple[str, ...] = OUTPUT_FORMATS,
                      hints: dict[str, str] | None = None) -> None:
    """``--format`` of a command's printed result (``args.output``); ``hints`` answer a value
    that means something else (``tournament --format gauntlet``: the type is ``--type``)."""
    def output_format(text: str) -> str:
        if text in formats:
            return text
        if hints and text in hints:
            raise argparse.ArgumentTypeError(hints[text])
        raise argparse.ArgumentTypeError(f"unknown choice {text!r}: choose from "
                                         f"{', '.join(formats)}")

    parser.add_argument("--format", dest="output", type=output_format, default=formats[0],
                        metavar="{" + ",".join(formats) + "}",
                        help=f"output: {', '.join(formats)} (default: {formats[0]})")


def config_from_args(config_cls: type[C], args: argparse.Namespace, **overrides: Any) -> C:
    """Build ``config_cls`` from parsed options (validation runs in its ``__post_init__``)."""
    values = {f.name: getattr(args, f.name) for f in dataclasses.fields(config_cls)  # type: ignore[arg-type]
              if f.init and hasattr(args, f.name)}
    values.update(overrides)
    return config_cls(**values)


def bool_default(flag: str, default: object) -> str:
    """The spelling of a boolean option that is on by default.

    >>> bool_default("--paper-range", True), bool_default("--paper-range", False)
    ('--paper-range', '--no-paper-range')
    """
    return flag if default else "--no-" + flag.removeprefix("--")


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None


def _base_type(hint: Any) -> Any:
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and len(args) == 1:
        return _base_type(args[0])
    return typing.get_origin(hint) or hint


#: What a value of each type looks like, for the message about a bad one.
TYPE_NAMES = {int: ("an integer", "5"), float: ("a number", "0.5"), str: ("a text", "x")}
LIST_EXAMPLES = {int: "5,6,7", float: "0,2.5"}


def choices_metavar(hint: Any) -> str | None:
    """``{a,b}`` for a ``Literal`` type, as argparse shows choices; None for any other type.

    >>> choices_metavar(typing.Literal["sequential", "random"] | None), choices_metavar(str)
    ('{sequential,random}', None)
    """
    choices = literal_choices(hint)
    return "{" + ",".join(map(str, choices)) + "}" if choices else None


def _parser_for(hint: Any, kind: Any) -> Any:
    if kind is typing.Literal:       # the choices' type: the config checks the value
        kind = type(literal_choices(hint)[0])  # type: ignore[index]
    if kind is tuple:
        inner = [a for a in typing.get_args(_strip_optional(hint)) if a is not Ellipsis][0]
        return list_parser(inner)
    if kind in (int, float):
        return value_parser(kind)
    return kind


def value_parser(kind: type) -> Any:
    """``int``/``float`` for argparse, with a message that says what was wanted.

    >>> value_parser(int)("x")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: want an integer (such as 5), got 'x'
    """
    name, example = TYPE_NAMES[kind]

    def parse(text: str) -> Any:
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"want {name} (such as {example}), got {text!r}") from None

    parse.__name__ = name
    return parse


def list_parser(inner: type) -> Any:
    """A comma-separated list of ``inner`` values, for argparse.

    >>> list_parser(int)("5,6,7")
    (5, 6, 7)
    >>> list_parser(int)("5,x")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: 'x' is not an integer: want comma-separated integers (such as 5,6,7), got '5,x'
    """
    name = TYPE_NAMES.get(inner, (inner.__name__, ""))[0]
    plural = name.removeprefix("an ").removeprefix("a ") + "s"

    def parse(text: str) -> tuple[Any, ...]:
        values = []
        for part in (p.strip() for p in text.split(",")):
            if not part:
                continue
            try:
                values.append(inner(part))
            except ValueError:
                raise argparse.ArgumentTypeError(
                    f"{part!r} is not {name}: want comma-separated {plural} (such as "
                    f"{LIST_EXAMPLES.get(inner, 'a,b')}), got {text!r}"
                ) from None
        return tuple(values)

    parse.__name__ = f"list of {plural}"
    return parse


def _strip_optional(hint: Any) -> Any:
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and len(args) == 1:
        return args[0]
    return hint
