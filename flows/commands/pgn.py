"""``chesslab pgn --tournament ID``: export a tournament's games."""
from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("pgn", help="export a tournament's games as PGN")
    parser.add_argument("--tournament", required=True, metavar="ID")
    parser.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    parser.set_defaults(run=run_pgn)


def run_pgn(args: argparse.Namespace) -> int:
    from pipelines.tournament.store import finished_games

    rows = finished_games(args.lake, args.tournament)
    if not rows:
        raise LookupError(f"no games of tournament {args.tournament!r} in this home")
    text = "\n\n".join(row["pgn"].strip() for row in rows) + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text)
    return 0
