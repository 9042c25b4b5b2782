"""``chesslab sql``, ``status`` and ``compact``: reading and tidying the warehouse."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from flows.options import add_output_format

FORMATS = ("table", "csv", "json", "jsonl")    # warehouse.render's, without importing it


def register(subparsers: Any) -> None:
    sql = subparsers.add_parser(
        "sql", help="run read-only SQL over the warehouse views, or describe a table or view")
    sql.add_argument("query", nargs="?",
                     help="SQL text, or @FILE to read it from a file, or - for stdin")
    sql.add_argument("--describe", metavar="NAME",
                     help="print table or view NAME's columns with their types and meanings "
                          "(no query; needs no warehouse)")
    add_output_format(sql, FORMATS)
    sql.add_argument("--timeout", type=positive_seconds, default=60.0, metavar="SECONDS",
                     help="stop the query after this many seconds (default: 60)")
    sql.set_defaults(run=run_sql)

    status = subparsers.add_parser("status", help="rows per table and label coverage")
    add_output_format(status)
    status.set_defaults(run=run_status)

    compact = subparsers.add_parser(
        "compact", help="Delta optimize (merge small files) and vacuum unreferenced files")
    compact.add_argument("tables", nargs="*", help="tables to compact (default: all)")
    compact.add_argument("--retain-hours", type=float, default=168.0, metavar="HOURS",
                         help="keep the files of versions newer than this, so they can still be "
                              "read (default: 168, Delta's default)")
    compact.set_defaults(run=run_compact)


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


def read_query_text(text: str) -> str:
    if text == "-":
        return sys.stdin.read()
    if text.startswith("@"):
        with open(text[1:], encoding="utf-8") as handle:
            return handle.read()
    return text


def run_sql(args: argparse.Namespace) -> int:
    if (args.query is None) == (args.describe is None):
        raise ValueError("give a query or --describe NAME (one of them)")
    if args.describe is not None:
        from warehouse.describe import describe

        print(describe(args.describe))
        return 0
    from warehouse import connect
    from warehouse.catalog import query
    from warehouse.render import render

    result = query(connect(args.lake), read_query_text(args.query), timeout_s=args.timeout)
    print(render(result, args.output))
    return 0


def run_status(args: argparse.Namespace) -> int:
    from warehouse import connect
    from warehouse.render import render
    from warehouse.status import label_coverage, table_rows

    lake = args.lake
    con = connect(lake)
    tables, coverage = table_rows(con, lake), label_coverage(con)
    if args.output == "json":
        print(json.dumps({"home": str(lake.home), "tables": tables.to_pylist(),
                          "labels": coverage.to_pylist()}, indent=2, default=str))
        return 0
    print(f"home: {lake.home}\n")
    print(render(tables))
    print("\nlabelled positions per engine and depth:")
    print(render(coverage) if coverage.num_rows else "(none yet)")
    return 0


def run_compact(args: argparse.Namespace) -> int:
    from warehouse.refresh import compact_lake
    from warehouse.tables import table

    names = [table(name).name for name in args.tables] or None
    files, derived = compact_lake(args.lake, names, retain_hours=args.retain_hours)
    for name, (before, after) in files.items():
        if before != after:
            print(f"{name}: {before} files -> {after}")
    for name, rows in derived.items():
        if rows:
            print(f"{name}: {rows} rows kept (derived)")
    return 0
