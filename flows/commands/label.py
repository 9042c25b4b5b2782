"""``chesslab label``: Stockfish labels for pending positions."""
from __future__ import annotations

import argparse
from typing import Any

from flows.options import add_config_arguments, config_from_args
from flows.runtime import add_runner_arguments, make_runner
from pipelines.label.config import LabelConfig


def register(subparsers: Any) -> None:
    label = subparsers.add_parser(
        "label", help="label pending positions with Stockfish at several depths",
        description="One search per position after ucinewgame; every completed iteration is "
                    "the label of its depth. Only positions missing a requested depth are sent.")
    add_config_arguments(label, LabelConfig)
    add_runner_arguments(label)
    label.set_defaults(run=run_label)


def run_label(args: argparse.Namespace) -> int:
    config = config_from_args(LabelConfig, args)
    from flows.label import LABEL

    with make_runner(args) as runner:
        summary = runner.run(LABEL, config, args.lake)
    print(summary)
    return 0
