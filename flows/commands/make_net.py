"""``chesslab make-net``: from an empty or existing home and a time budget to a promoted NNUE
(data generation, ingest, training, evaluation, promotion), resumable after a kill."""
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
from pipelines.makenet import MakeNetConfig


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "make-net", help="data, training, evaluation and promotion of an NNUE in one command",
        description="Makes an NNUE within --hours: an engine plays itself in rounds (every "
                    "searched position a label, binpack shards ingested as they come), the "
                    "rounds stop when the time left trains what they made, the net trains, "
                    "then an SPRT match against the hand-crafted evaluation promotes it if "
                    "it passes. Every stage is recorded in net_run_events; run the same "
                    "command again to resume after a kill. --workers N or --cluster URL "
                    "play the games on more cores.")
    add_config_arguments(parser, MakeNetConfig, skip=("runner",))
    add_games_arguments(parser, skip=PAIRS_ONLY)
    add_runner_arguments(parser, cluster=False)
    parser.set_defaults(run=run_make_net_command)


def run_make_net_command(args: argparse.Namespace) -> int:
    config = config_from_args(MakeNetConfig, args, runner=games_options(args, skip=PAIRS_ONLY))
    if not args.verbose:
        logging.getLogger("chess.engine").setLevel(logging.ERROR)
    from flows.makenet import make_net

    with make_runner(args) as runner:
        result = make_net(runner, config, args.lake)
    print(f"make-net {result.run}: {result.positions:,} positions, model {result.model}, made "
          f"in {result.spent_s / 3600:.2f} h")
    if result.evaluation is not None:
        print(result.evaluation)
    return 0


__all__ = ["register"]
