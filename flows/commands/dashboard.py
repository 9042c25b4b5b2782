"""``chesslab dashboard``: write the static HTML dashboard of the warehouse."""
from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("dashboard", help="write an HTML dashboard of the warehouse")
    parser.add_argument("-o", "--output", default="dashboard.html", help="HTML file to write")
    parser.set_defaults(run=run_dashboard)


def run_dashboard(args: argparse.Namespace) -> int:
    from dashboards.report import write

    print(f"wrote {write(args.output)}")
    return 0
