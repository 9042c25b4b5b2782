"""``chesslab demo``: the whole pipeline on the bundled sample corpus, then a summary."""
from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from flows.runtime import add_runner_arguments, make_runner

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
DEMO_POSITIONS = 3000
DEMO_DEPTHS = (5, 6, 7)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo", help="ingest the bundled sample corpus and label a few thousand positions",
        description=f"Runs the refresh flow on {SAMPLE}: ingest every sample file, then label "
                    f"{DEMO_POSITIONS} positions with Stockfish at depths 5, 6 and 7.")
    parser.add_argument("--positions", type=int, default=DEMO_POSITIONS,
                        help="positions to label (default: %(default)s)")
    parser.add_argument("--workers", type=int, default=None,
                        help="Stockfish processes (default: one per core)")
    add_runner_arguments(parser, cluster=False)
    parser.set_defaults(run=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    from pipelines.label import LabelConfig
    from warehouse import Lake

    if not SAMPLE.is_dir():
        raise FileNotFoundError(f"sample corpus not found: {SAMPLE}")
    lake = Lake()
    options = {"workers": args.workers} if args.workers else {}
    config = LabelConfig(depths=DEMO_DEPTHS, limit=args.positions, **options)
    print(f"chesslab demo: {SAMPLE} -> {lake.home}")
    started = time.monotonic()
    from flows.refresh import refresh

    with make_runner(args) as runner:
        ingested, labelled = refresh(runner, str(SAMPLE), config)
    from flows.commands.ingest import summary_table

    print(f"{summary_table(ingested)}\n\n{labelled}\n")
    print(summary(lake))
    print(f"\ndemo finished in {time.monotonic() - started:.0f} s. Next: chesslab status, "
          f"chesslab sql \"select * from volatility_examples limit 5\", chesslab dashboard")
    return 0


def summary(lake: Any) -> str:
    """Tables, label coverage and the paper-003 stability share of what the demo made."""
    from warehouse import connect
    from warehouse.catalog import named_query, query
    from warehouse.render import render
    from warehouse.status import label_coverage, table_rows

    con = connect(lake)
    parts = [render(table_rows(con, lake)), "", "labelled positions per engine and depth:",
             render(label_coverage(con)), "",
             "volatility (paper 003: stable when |V7 - V6| < 18 cp; the paper saw ~23%):",
             render(query(con, named_query("dashboard_volatility")))]
    return "\n".join(parts)
