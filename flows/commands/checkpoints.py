"""``chesslab checkpoints RUN_ID``: a self-play run's policy_value versions in a round robin
(searching, and bare with --search-too), rated by BayesElo, with each version's value-head
decisive share."""
from __future__ import annotations

import argparse
import logging
from typing import Any

from flows.options import add_config_arguments, config_from_args
from flows.runtime import add_games_arguments, add_runner_arguments, games_options, make_runner
from pipelines.puct.checkpoints import CheckpointsConfig


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "checkpoints", help="rate a self-play run's checkpoints against each other",
        description="A round robin of the run's policy_value versions (paper 004): each "
                    "searching with PUCT (--nodes simulations a move) and, with --search-too, "
                    "also bare (its policy's top move), from random endgame starts, won "
                    "3-piece endings adjudicated by the Gaviota tables. Every game and the "
                    "BayesElo table land in the warehouse (rerun to resume); the table "
                    "printed adds each version's value-head decisive share.")
    parser.add_argument("run_id", metavar="RUN_ID", help="selfplay-train run (pv-...)")
    add_config_arguments(parser, CheckpointsConfig, skip=("run_id", "runner"))
    add_games_arguments(parser)
    add_runner_arguments(parser, cluster=False)
    parser.set_defaults(run=run_checkpoints_command)


def run_checkpoints_command(args: argparse.Namespace) -> int:
    config = config_from_args(CheckpointsConfig, args, run_id=args.run_id,
                               runner=games_options(args))
    if not args.verbose:
        logging.getLogger("chess.engine").setLevel(logging.ERROR)
    from flows.checkpoints import checkpoints

    with make_runner(args) as runner:
        report = checkpoints(runner, config, args.lake)
    print(report)
    return 0


__all__ = ["register"]
