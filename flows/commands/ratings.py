"""``chesslab ratings``: BayesElo ratings of a tournament or a PGN file."""
from __future__ import annotations

import argparse
from typing import Any

from flows.options import add_config_arguments, add_output_format, config_from_args
from pipelines.ratings.bayeselo import RatingsConfig


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "ratings", help="BayesElo ratings of a tournament or a PGN file",
        description="Bradley-Terry with draw Elo and white advantage, fitted by "
                    "minorisation-maximisation as bayeselo's mm; the intervals are bayeselo's "
                    "default after mm, each rating's variance with the others fixed "
                    "(--intervals covariance: from the covariance matrix; a ladder of several "
                    "anchors always has those), and the line under the table names them.")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--tournament", metavar="ID")
    source.add_argument("--pgn", metavar="FILE")
    parser.add_argument("--anchor", action="append", default=[], metavar="NAME=ELO",
                        help="fix a player's rating (repeat for a ladder)")
    parser.add_argument("--ladder", action="store_true",
                        help="anchor every Stockfish ladder rung of the tournament at its UCI_Elo")
    parser.add_argument("--los", action="store_true", help="print the LOS matrix")
    parser.add_argument("--pair", metavar="A,B",
                        help="also print the trinomial Elo and LOS of A against B")
    add_config_arguments(parser, RatingsConfig, skip=("anchors",))
    add_output_format(parser)
    parser.set_defaults(run=run_ratings)


def run_ratings(args: argparse.Namespace) -> int:
    from pipelines.ratings.report import parse_anchors, ratings_report

    config = config_from_args(RatingsConfig, args, anchors=parse_anchors(args.anchor))
    print(ratings_report(args.lake, config, tournament=args.tournament, pgn=args.pgn,
                         ladder=args.ladder, los=args.los, pair=args.pair,
                         output=args.output))
    return 0
