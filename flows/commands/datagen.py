"""``chesslab datagen``: annotated engine-vs-itself games (training data) on the games runner,
written as PGN batches and ingested."""
from __future__ import annotations

import argparse
import logging
from typing import Any

from flows.options import add_config_arguments, config_from_args
from flows.runtime import (
    PAIRS_ONLY,
    add_games_arguments,
    add_runner_arguments,
    games_options,
    make_runner,
)
from pipelines.datagen.run import DatagenConfig


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "datagen", help="annotated engine games for training data, on a cluster or here",
        description="A UCI engine (Stockfish) plays itself at a fixed depth from random "
                    "starts; every searched position gets a Lichess [%%eval] comment. Batches "
                    "of games go to the games runner's workers (--cluster, --workers); each "
                    "comes back as a gzip PGN file (rerun to resume), then the files are "
                    "ingested. scripts/engine_games.py plays the same games without chesslab.")
    add_config_arguments(parser, DatagenConfig, skip=("runner",))
    add_games_arguments(parser, skip=PAIRS_ONLY)
    add_runner_arguments(parser, cluster=False)
    parser.set_defaults(run=run_datagen_command)


def run_datagen_command(args: argparse.Namespace) -> int:
    config = config_from_args(DatagenConfig, args, runner=games_options(args, skip=PAIRS_ONLY))
    if not args.verbose:
        logging.getLogger("chess.engine").setLevel(logging.ERROR)
    from flows.datagen import datagen

    with make_runner(args) as runner:
        result = datagen(runner, config, args.lake)
    print(result.games)
    if result.ingested is not None:
        from flows.commands.ingest import summary_table

        print(summary_table(result.ingested))
    return 0


__all__ = ["register"]
