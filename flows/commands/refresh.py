"""``chesslab refresh FOLDER``: ingest a folder's new files, then label what is new."""
from __future__ import annotations

import argparse
from typing import Any

from flows.options import add_config_arguments, config_from_args
from flows.runtime import add_runner_arguments, make_runner
from pipelines.label.config import LabelConfig


def register(subparsers: Any) -> None:
    refresh = subparsers.add_parser(
        "refresh", help="ingest a folder's new files, then label what is new",
        description="Ingests the PGN/EPD/FEN files of FOLDER not ingested yet (by content hash), "
                    "then labels every position still missing a requested depth.")
    refresh.add_argument("folder", help="folder with chess files (searched recursively)")
    add_config_arguments(refresh, LabelConfig)
    add_runner_arguments(refresh)
    refresh.set_defaults(run=run_refresh)


def run_refresh(args: argparse.Namespace) -> int:
    config = config_from_args(LabelConfig, args)
    from flows.commands.ingest import summary_table
    from flows.refresh import refresh
    from pipelines.ingest import discover_sources

    discover_sources([args.folder])  # a bad folder fails here, before any work
    with make_runner(args) as runner:
        ingested, labelled = refresh(runner, args.folder, config, args.lake)
    print(summary_table(ingested))
    print(labelled)
    return 0
