#!/usr/bin/env python3
"""A catalog connection and a typical query on it, with the Parquet footers kept per
connection (``warehouse/connection.py``: ``parquet_metadata_cache``) against without (the
baseline, the setting turned off on each new connection), in one run on one home.

Every round times, in each arm (the arms' order alternating round by round): opening a
connection with every view (``warehouse.catalog.connect_with_files``, as ``compact`` opens one
per derived table and ``chesslab sql`` one per command), and each of ``benchmarks/scale.py``'s
typical queries on a fresh connection, connection included (what a user waits for). The
answers must agree. Prints the median of each figure per arm and the ratio baseline / now.

    .venv/bin/python benchmarks/connect.py HOME [--rounds 5]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.scale import QUERIES  # noqa: E402
from warehouse import Lake, catalog  # noqa: E402
from warehouse.catalog import connect_with_files, named_query, query  # noqa: E402
from warehouse.connection import duckdb_connection  # noqa: E402

if TYPE_CHECKING:
    import duckdb


def without_footers() -> duckdb.DuckDBPyConnection:
    """The baseline: a connection as before, each bind reading every footer again."""
    con = duckdb_connection()
    con.execute("set parquet_metadata_cache = false")
    return con


ARMS: Mapping[str, Callable[[], Any]] = {"baseline": without_footers, "now": duckdb_connection}


def timed(lake: Lake, sql: str | None, params: Mapping[str, Any]) -> tuple[float, Any]:
    """Seconds to connect (and run ``sql``), and its rows."""
    began = time.perf_counter()
    con, _ = connect_with_files(lake)
    rows = query(con, sql, dict(params)).to_pylist() if sql is not None else None
    seconds = time.perf_counter() - began
    con.close()
    return seconds, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    lake = Lake(args.home)
    figures: list[tuple[str, str | None, Mapping[str, Any]]] = [("connect", None, {})]
    figures += [(name, named_query(name), params) for _, name, params in QUERIES]
    times: dict[tuple[str, str], list[float]] = {}
    answers: dict[str, Any] = {}
    for round_ in range(args.rounds):
        arms = list(ARMS) if round_ % 2 == 0 else list(ARMS)[::-1]
        for arm in arms:
            catalog.duckdb_connection = ARMS[arm]
            try:
                for name, sql, params in figures:
                    seconds, rows = timed(lake, sql, params)
                    if answers.setdefault(name, rows) != rows:
                        raise SystemExit(f"{name}: {arm} gives {rows}, the other {answers[name]}")
                    times.setdefault((name, arm), []).append(seconds)
            finally:
                catalog.duckdb_connection = duckdb_connection
    print(f"{args.home}: median of {args.rounds} rounds, seconds (connection included)")
    print(f"{'figure':<28}{'baseline':>10}{'now':>10}{'ratio':>8}")
    for name, _, _ in figures:
        base, now = (statistics.median(times[name, arm]) for arm in ARMS)
        print(f"{name:<28}{base:>10.3f}{now:>10.3f}{base / now:>7.2f}x")


if __name__ == "__main__":
    main()
