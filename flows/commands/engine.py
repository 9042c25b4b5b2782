"""``chesslab engine NAME [--option ...]``: run one of the project's engines as a UCI program
on stdin/stdout, for GUIs, tournament tools and python-chess.

Tournament tools that start many engine processes can use the lighter
``python -m engines.uci NAME [--option ...]`` (same engines, same options, without the
``chesslab`` command line's own start-up).
"""
from __future__ import annotations

import argparse
from typing import Any

from engines.uci import PROGRAMS
from flows.options import add_config_arguments, config_from_args


def register(subparsers: Any) -> None:
    engine = subparsers.add_parser("engine", help="run an engine as a UCI program (stdin/stdout)")
    names = engine.add_subparsers(dest="engine", metavar="NAME", required=True)
    for name, (options_cls, _) in PROGRAMS.items():
        program = names.add_parser(name, help=(options_cls.__doc__ or "").splitlines()[0])
        add_config_arguments(program, options_cls)
        program.set_defaults(run=run_engine)


def run_engine(args: argparse.Namespace) -> int:
    from engines.uci import serve

    options_cls, make_spec = PROGRAMS[args.engine]
    return serve(make_spec(config_from_args(options_cls, args)))
