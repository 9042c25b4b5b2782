"""``chesslab sprt``: fishtest's GSPRT on game-pair counts or a two-player tournament, or its
forecast: how many games the test needs at a true Elo difference."""
from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

from flows.options import add_config_arguments, add_output_format, config_from_args
from pipelines.sprt import SprtConfig


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "sprt", help="fishtest's GSPRT on game-pair counts or a two-player tournament")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--counts", metavar="LL,LD,DD+WL,WD,WW",
                        help="5 pentanomial (or 3 trinomial L,D,W) counts")
    source.add_argument("--tournament", metavar="ID")
    source.add_argument("--forecast", metavar="ELO", type=float,
                        help="no games: the expected course of the test when the true "
                             "difference is ELO (logistic), with --draws")
    parser.add_argument("--draws", type=float, default=0.4,
                        help="draw ratio of the forecast, in [0, 1) (default: 0.4)")
    add_config_arguments(parser, SprtConfig)
    add_output_format(parser)
    parser.set_defaults(run=run_sprt)


def run_sprt(args: argparse.Namespace) -> int:
    from pipelines.sprt.report import sprt_report

    config = config_from_args(SprtConfig, args)
    if args.forecast is not None:
        from pipelines.sprt import forecast

        expected = forecast(config, args.forecast, args.draws)
        print(json.dumps(dataclasses.asdict(expected), indent=2) if args.output == "json"
              else expected.describe())
        return 0
    lake = args.lake
    print(sprt_report(lake, config, counts=args.counts, tournament=args.tournament,
                      output=args.output))
    return 0
