"""``chesslab engine NAME [--option ...]``: run one of the project's engines as a UCI program
on stdin/stdout, for GUIs, tournament tools and python-chess.

The engines are the programs :mod:`engines.uci` discovers (every ``engines/<name>/program.py``),
so a new engine needs no change here. Tournament tools that start many engine processes can
use the lighter ``python -m engines.uci NAME [--option ...]`` (same engines, same options,
without the ``chesslab`` command line's own start-up).
"""
from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from engines.uci import load_program, program_names
from flows.options import add_config_arguments, config_from_args


def register(subparsers: Any) -> None:
    engine = subparsers.add_parser(
        "engine", help="run an engine as a UCI program (stdin/stdout)",
        description=f"engines: {', '.join(program_names())}")
    names = engine.add_subparsers(dest="engine", metavar="NAME", required=True)
    for name in program_names():
        program = load_program(name)
        command = names.add_parser(name, help=program.summary, description=program.summary)
        add_config_arguments(command, program.options)
        command.set_defaults(run=run_engine)


def run_engine(args: argparse.Namespace) -> int:
    from engines.uci import serve

    program = load_program(args.engine)
    config: Any = config_from_args(program.options, args,
                                   **resolved_models(args, program.options))
    return serve(program.spec(config))


def resolved_models(args: argparse.Namespace, options: type) -> dict[str, str]:
    """The options that deploy the registry models the options name (``--model nnue@latest``,
    ``--lmr lmr@best``, ``--volatility volatility@3``), from the one resolver
    (:func:`pipelines.models.deploy.resolve_settings`: ``--model nnue@3 --nnue FILE``); the
    registry (and the warehouse) is imported only when an option names one (``args.lake``
    is then the command's warehouse)."""
    from engines.identity import MODEL_VERSION  # light: a GUI's engine start stays quick

    fields = [f.name for f in dataclasses.fields(options)]
    settings = {name: value for name in fields
                if isinstance(value := getattr(args, name, None), str)}
    if not any(MODEL_VERSION.match(value) for value in settings.values()):
        return {}
    from pipelines.models.deploy import resolve_settings

    return resolve_settings(args.lake, args.engine, settings, fields)
