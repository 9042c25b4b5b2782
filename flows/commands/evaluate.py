"""``chesslab evaluate MODEL``: an SPRT match against a baseline and a gauntlet on the Stockfish
ladder; the model gets an ``evaluated`` event, and ``promoted`` when the SPRT accepts H1."""
from __future__ import annotations

import argparse
import logging
from typing import Any

from flows.options import add_config_arguments, config_from_args
from flows.runtime import add_games_arguments, add_runner_arguments, games_options, make_runner
from pipelines.evaluate.config import EvaluateConfig


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "evaluate", help="SPRT a model against a baseline and rate it on the Stockfish ladder",
        description="Both tournaments go to the warehouse (rerun to resume); the verdict, the "
                    "Elo against the baseline and the ladder rating become the model's "
                    "'evaluated' event; a model that passes the SPRT is promoted (KIND@best).")
    parser.add_argument("model", nargs="?", metavar="MODEL",
                        help="registry model: KIND@VERSION or KIND@latest")
    add_config_arguments(parser, EvaluateConfig, skip=("model", "runner"))
    add_games_arguments(parser)
    add_runner_arguments(parser, cluster=False)
    parser.set_defaults(run=run_evaluate_command)


def run_evaluate_command(args: argparse.Namespace) -> int:
    config = config_from_args(EvaluateConfig, args, model=args.model, runner=games_options(args))
    if not args.verbose:   # xboard engines chat a lot; python-chess warns on every line
        logging.getLogger("chess.engine").setLevel(logging.ERROR)
    from flows.evaluate_model import evaluate_model

    with make_runner(args) as runner:
        evaluation = evaluate_model(runner, config, args.lake)
    print(evaluation)
    if evaluation.model_id and evaluation.passed and config.promote:
        print(f"{evaluation.model_id} promoted")
    return 0


__all__ = ["register"]
