"""``chesslab ingest PATH...``: PGN (.pgn, .pgn.zst/.gz/.bz2), EPD suites and FEN lists, and
training data: Lichess evaluations (.jsonl), text (FEN | score | result), Stockfish .binpack,
Parquet."""
from __future__ import annotations

import argparse
from typing import Any

from flows.options import add_config_arguments, config_from_args
from flows.runtime import add_runner_arguments, make_runner
from pipelines.ingest import IngestConfig, IngestSummary, discover_sources
from pipelines.ingest.training_data import check_training_options

COLUMNS = ("file", "games", "records", "plies", "new positions", "errors", "duplicates",
           "labels", "seconds")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "ingest", help="ingest PGN / EPD / FEN files and training data (Lichess evaluation "
                       "JSONL, text, binpack, Parquet): files, folders or globs",
        description="Streams each file once; a file already ingested (same SHA-256) adds "
                    "nothing, and a killed import of training data resumes where it stopped. "
                    "Bad games, lines and records are recorded in ingest_errors. The format "
                    "comes from the suffix (.pgn .epd .fen .txt .jsonl .binpack .parquet, "
                    "optionally .zst/.gz/.bz2) or --format.")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="file, folder or glob")
    add_config_arguments(parser, IngestConfig)
    add_runner_arguments(parser)
    parser.set_defaults(run=run_ingest)


def run_ingest(args: argparse.Namespace) -> int:
    config = config_from_args(IngestConfig, args)
    # a bad path or a missing option fails here, before any work
    check_training_options(discover_sources(args.paths, config.format), config)
    from flows.ingest import INGEST, IngestJob

    with make_runner(args) as runner:
        summaries = runner.run(INGEST, IngestJob(tuple(args.paths), config), args.lake)
    print(summary_table(summaries))
    for note in (merge_note(summaries), label_note(summaries)):
        if note:
            print(note)
    return 0


def label_note(summaries: list[IngestSummary]) -> str | None:
    """What the duplicates column means for training data, when a file had any.

    >>> from pipelines.ingest import IngestSummary
    >>> print(label_note([IngestSummary("a.txt", "x", "text", records=5, labels=3,
    ...                                 duplicates=1)]))
    1 of the 4 labels read from training data were already stored (same position, engine and depth: the first is kept)
    """
    data = [s for s in summaries if s.format != "pgn"]
    duplicates = sum(s.duplicates for s in data)
    if not duplicates:
        return None
    read = sum(s.labels + s.duplicates for s in data)
    return (f"{duplicates} of the {read} labels read from training data were already stored "
            f"(same position, engine and depth: the first is kept)")


def merge_note(summaries: list[IngestSummary]) -> str | None:
    """What the duplicates column means, when a file had any, and repeats within a file.

    >>> from pipelines.ingest import IngestSummary
    >>> print(merge_note([IngestSummary("a.pgn", "x", "pgn", games=5, duplicates=2, repeats=1)]))
    2 of the 5 games were already stored from another file (counted as duplicates, stored once); 1 record repeats an earlier record of its own file (a game of its own); the games table holds 3 new games
    """
    summaries = [s for s in summaries if s.format == "pgn"]
    games = sum(s.games for s in summaries)
    duplicates = sum(s.duplicates for s in summaries)
    repeats = sum(s.repeats for s in summaries)
    if not duplicates and not repeats:
        return None
    parts = []
    if duplicates:
        parts.append(f"{duplicates} of the {games} games were already stored from another file "
                     f"(counted as duplicates, stored once)")
    if repeats:
        parts.append("1 record repeats an earlier record of its own file (a game of its own)"
                     if repeats == 1 else f"{repeats} records repeat an earlier record of their "
                                          f"own file (each a game of its own)")
    parts.append(f"the games table holds {games - duplicates} new games")
    return "; ".join(parts)


def summary_table(summaries: list[IngestSummary]) -> str:
    """One line per file plus a total line."""
    rows = [(s.path + (" (already ingested)" if s.skipped else "")
             + (" (empty file)" if s.empty else "")
             + (" (truncated)" if s.truncated else "")
             + (f" ({s.encoding})" if s.encoding not in ("", "utf-8", "utf-8-sig") else ""),
             s.games, s.records, s.plies, s.new_positions, s.errors, s.duplicates, s.labels,
             f"{s.seconds:.1f}") for s in summaries]
    total = ("total", *(sum(s[i] for s in rows) for i in range(1, 8)),  # type: ignore[misc]
             f"{sum(s.seconds for s in summaries):.1f}")
    table = [COLUMNS, *rows, total]
    widths = [max(len(str(row[i])) for row in table) for i in range(len(COLUMNS))]
    return "\n".join(
        "  ".join(str(v).ljust(w) if i == 0 else str(v).rjust(w)
                  for i, (v, w) in enumerate(zip(row, widths, strict=False))) for row in table)
