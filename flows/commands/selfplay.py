"""``chesslab selfplay``: one engine plays both sides from varied starts; the games go through
the ingest path into ``games``, ``moves`` and ``positions``."""
from __future__ import annotations

import argparse
from typing import Any

from flows.options import add_config_arguments, config_from_args
from flows.runtime import (
    ONE_GAME_WORKERS,
    add_games_arguments,
    add_runner_arguments,
    games_options,
    make_runner,
)
from pipelines.selfplay.config import SelfplayConfig


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "selfplay", help="make training games: an engine playing itself from varied starts",
        description="Game g starts with --random-plies random legal plies (after opening "
                    "g mod n of --openings), seeded by (--seed, g); the engine then plays both "
                    "sides to the end by the rules or --max-plies. Batches of games are "
                    "written as PGN under <home>/selfplay/<run-id>/ and ingested; running the "
                    "same command again plays only the missing games.")
    add_config_arguments(parser, SelfplayConfig, skip=("runner",))
    add_games_arguments(parser, skip=ONE_GAME_WORKERS)   # --workers: the config's
    add_runner_arguments(parser, cluster=False)
    parser.set_defaults(run=run_selfplay_command)


def run_selfplay_command(args: argparse.Namespace) -> int:
    config = config_from_args(SelfplayConfig, args,
                              runner=games_options(args, skip=ONE_GAME_WORKERS))
    from flows.selfplay import SELFPLAY

    with make_runner(args) as runner:
        summary = runner.run(SELFPLAY, config, args.lake)
    print(summary)
    return 0


__all__ = ["register"]
