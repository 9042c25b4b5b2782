"""``chesslab endgames --count N --pieces 3-7``: paper 004's random endgame starts as EPD."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "endgames", help="random legal endgame starts (paper 004) as an EPD file",
        description="Legal random positions, an equal share of each piece count (kings "
                    "included) and White and Black to move half each; positions already over "
                    "or trivially decided (mate in one, a queen or rook en prise) are drawn "
                    "again. The same --seed gives the same positions.")
    parser.add_argument("--count", type=int, default=100, help="positions (default: 100)")
    parser.add_argument("--pieces", default="3-7", help="piece counts, LOW-HIGH or a list")
    parser.add_argument("--seed", type=int, default=0, help="seed (default: 0)")
    parser.add_argument("--out", type=Path, default=None,
                        help="EPD file (default: <home>/endgames/endgames-SEED-COUNT.epd)")
    parser.set_defaults(run=run_endgames)


def run_endgames(args: argparse.Namespace) -> int:
    from pipelines.puct.endgames import parse_pieces, write_endgames

    out = args.out or Path(args.home).expanduser().absolute() / "endgames" / f"endgames-{args.seed}-{args.count}.epd"
    print(write_endgames(out, args.count, args.seed, parse_pieces(args.pieces)))
    return 0


__all__ = ["register"]
