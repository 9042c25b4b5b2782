"""``chesslab selfplay``: one engine plays both sides from varied starts; the games go through
the ingest path into ``games``, ``moves`` and ``positions``."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from flows.options import add_config_arguments, config_from_args
from pipelines.selfplay.config import SelfplayConfig


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "selfplay", help="make training games: an engine playing itself from varied starts",
        description="Game g starts with --random-plies random legal plies (after opening "
                    "g mod n of --openings), seeded by (--seed, g); the engine then plays both "
                    "sides to the end by the rules or --max-plies. Batches of games are "
                    "written as PGN under <home>/selfplay/<run-id>/ and ingested; running the "
                    "same command again plays only the missing games.")
    add_config_arguments(parser, SelfplayConfig)
    parser.add_argument("--no-prefect", action="store_true",
                        help="run in this process without Prefect")
    parser.set_defaults(run=run_selfplay_command)


def run_selfplay_command(args: argparse.Namespace) -> int:
    config = config_from_args(SelfplayConfig, args)
    if args.no_prefect:
        from pipelines.selfplay import run_selfplay

        summary = run_selfplay(config, progress=lambda line: print(line, file=sys.stderr))
    else:
        from flows.runtime import configure_prefect, run_flow

        configure_prefect()
        from flows.selfplay import selfplay

        summary = run_flow(selfplay, workers=config.workers, config=config)
    print(summary)
    return 0


__all__ = ["register"]
