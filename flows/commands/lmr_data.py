"""``chesslab lmr-data``: self-play games that log late-move-reduction decisions, each decision
then labelled with the largest safe reduction by re-searching it (paper 003 part II data)."""
from __future__ import annotations

import argparse
from typing import Any

from flows.options import add_config_arguments, config_from_args
from flows.runtime import (
    PAIRS_ONLY,
    add_games_arguments,
    add_runner_arguments,
    games_options,
    make_runner,
)
from pipelines.lmr.config import LmrDataConfig


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "lmr-data", help="log LMR decisions in self-play and label them by re-search",
        description="The alpha-beta engine plays --games games against itself with about "
                    "--log-rate of its LMR decisions written to search_log; every decision is "
                    "then re-searched at depths 1..full and its largest safe reduction (both "
                    "of paper 003's rules) written to lmr_examples. Running the same command "
                    "again plays only the missing games and labels only what is unlabelled.")
    add_config_arguments(parser, LmrDataConfig)
    add_games_arguments(parser, skip=PAIRS_ONLY)
    add_runner_arguments(parser, cluster=False)
    parser.set_defaults(run=run_lmr_data_command)


def run_lmr_data_command(args: argparse.Namespace) -> int:
    config = config_from_args(LmrDataConfig, args)
    from flows.lmr_data import lmr_data

    with make_runner(args) as runner:
        summary = lmr_data(runner, config, args.lake, games_options(args, skip=PAIRS_ONLY))
    print(summary)
    return 0


__all__ = ["register"]
