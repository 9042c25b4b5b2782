"""``chesslab label`` (Stockfish labels for pending positions) and ``chesslab refresh FOLDER``
(ingest a folder's new files, then label what is new)."""
from __future__ import annotations

import argparse
import sys
import threading
import time
from typing import Any

from flows.options import add_config_arguments, config_from_args
from pipelines.label.config import LabelConfig


def register(subparsers: Any) -> None:
    label = subparsers.add_parser(
        "label", help="label pending positions with Stockfish at several depths",
        description="One search per position after ucinewgame; every completed iteration is "
                    "the label of its depth. Only positions missing a requested depth are sent.")
    add_config_arguments(label, LabelConfig)
    add_orchestration_arguments(label)
    label.set_defaults(run=run_label)

    refresh = subparsers.add_parser(
        "refresh", help="ingest a folder's new files, then label what is new",
        description="Ingests the PGN/EPD/FEN files of FOLDER not ingested yet (by content hash), "
                    "then labels every position still missing a requested depth.")
    refresh.add_argument("folder", help="folder with chess files (searched recursively)")
    add_config_arguments(refresh, LabelConfig)
    add_orchestration_arguments(refresh)
    refresh.set_defaults(run=run_refresh)


def add_orchestration_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cluster", metavar="ADDRESS",
                        help="run the tasks on this Dask scheduler (e.g. tcp://host:8786)")
    parser.add_argument("--no-prefect", action="store_true",
                        help="run in this process without Prefect (a plain thread pool)")


def run_label(args: argparse.Namespace) -> int:
    config = config_from_args(LabelConfig, args)
    if args.no_prefect:
        if args.cluster:
            raise ValueError("--cluster needs Prefect: drop --no-prefect")
        from pipelines.label import label_positions
        from warehouse import Lake

        summary = label_positions(Lake(), config, on_batch=Progress())
    else:
        from flows.runtime import configure_prefect, run_flow

        configure_prefect()
        from flows.label import label

        summary = run_flow(label, cluster=args.cluster, workers=config.workers, config=config)
    print(summary)
    return 0


class Progress:
    """Prints a progress line to stderr after each batch (batches finish in worker threads)."""

    def __init__(self) -> None:
        self.positions = self.labels = self.errors = 0
        self.started = time.monotonic()
        self.lock = threading.Lock()

    def __call__(self, result: Any) -> None:
        """``result``: a pipelines.label.BatchResult."""
        with self.lock:
            self.positions += result.positions
            self.labels += result.labels
            self.errors += result.errors
            rate = self.labels / max(time.monotonic() - self.started, 1e-9)
            print(f"label: {self.positions} positions, {self.labels} labels, "
                  f"{self.errors} errors, {rate:.0f} labels/s", file=sys.stderr)


def run_refresh(args: argparse.Namespace) -> int:
    config = config_from_args(LabelConfig, args)
    from pipelines.ingest import discover_sources

    discover_sources([args.folder])  # a bad folder fails here, before any work
    if args.no_prefect:
        if args.cluster:
            raise ValueError("--cluster needs Prefect: drop --no-prefect")
        from flows.refresh import refresh_without_prefect

        ingested, labelled = refresh_without_prefect(args.folder, config)
    else:
        from flows.runtime import configure_prefect, run_flow

        configure_prefect()
        from flows.refresh import refresh

        ingested, labelled = run_flow(refresh, cluster=args.cluster, workers=config.workers,
                                      folder=args.folder, config=config, dask_address=args.cluster)
    from flows.commands.ingest import summary_table

    print(summary_table(ingested))
    print(labelled)
    return 0
