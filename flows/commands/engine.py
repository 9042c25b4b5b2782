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
    resolve_learned_lmr(args)
    resolve_models(args, program.options)
    return serve(program.spec(config_from_args(program.options, args)))


def resolve_models(args: argparse.Namespace, options: type) -> None:
    """Options naming a registry model (``--model nnue@latest``) become the concrete version
    and the kind's artifact option (``--nnue FILE``); the registry (and the warehouse) is
    imported only when an option names one."""
    named = [f.name for f in dataclasses.fields(options)
             if "@" in str(getattr(args, f.name, "") or "")]
    if not named:
        return
    from pipelines.tournament.models import resolve_model_arguments

    for name in named:
        argv = resolve_model_arguments([f"--{name}", getattr(args, name)], args.lake.home)
        for option, value in zip(argv[::2], argv[1::2], strict=True):
            setattr(args, option[2:].replace("-", "_"), value)


def resolve_learned_lmr(args: argparse.Namespace) -> None:
    """``--lmr lmr@N``: the model registry gives the engine its bench-normalised formula."""
    from engines.identity import MODEL_VERSION  # light: a GUI's engine start stays fast

    if MODEL_VERSION.match(str(getattr(args, "lmr", "") or "")) \
            and not getattr(args, "lmr_formula", ""):
        from pipelines.lmr.deploy import learned_formula

        model, formula = learned_formula(args.lake, args.lmr)
        args.lmr, args.lmr_formula = model, str(formula)
