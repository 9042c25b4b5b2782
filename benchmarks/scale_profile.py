"""Profile the scale benchmark's queries over a home: DuckDB's JSON profile, one line per operator.

The connection has the warehouse's views as ``connect`` makes them (tables, derived tables,
named views), without the lock, so profiling can be switched on. Each query prints its rows,
wall and CPU seconds and the load, then its operator tree: rows out and seconds (summed over
threads, wall clock: inflated by the machine's load), with the scans' files and filters.

    python benchmarks/scale_profile.py --home /tmp/s-query/home10m nnue_examples_depth
    python benchmarks/scale_profile.py --home /tmp/s-query/home10m --old label_scores_by_side
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import BASELINE, QUERIES  # noqa: E402

from warehouse import Lake  # noqa: E402
from warehouse.catalog import (  # noqa: E402
    create_table_view,
    kept_view_sql,
    named_query,
    named_views,
    sql_strings,
)
from warehouse.connection import duckdb_connection  # noqa: E402
from warehouse.derived import current_file, derived_tables  # noqa: E402
from warehouse.tables import REGISTRY  # noqa: E402

SHOWN = ("Conditions", "Join Type", "Projections", "Filters", "Total Files Read",
         "Aggregates", "Groups")


def open_home(lake: Lake) -> Any:
    con = duckdb_connection()
    tables = {spec.name: create_table_view(con, lake, spec) for spec in REGISTRY.values()}
    for spec in derived_tables():
        kept = current_file(lake.root, spec, tables)
        source = spec.view_sql if kept is None else \
            kept_view_sql(spec, kept, lake.table_dir(spec.kept_in)) if spec.kept_in else \
            f"select * from read_parquet({sql_strings([kept])})"
        con.execute(f"create or replace view {spec.name} as {source}")
    for name, sql in named_views():
        con.execute(f"create or replace view {name} as {sql}")
    return con


def walk(node: dict[str, Any], depth: int = 0) -> None:
    extra = node.get("extra_info") or {}
    info = "".join(f" {k}={str(v)[:100]}" for k, v in extra.items() if k in SHOWN)
    if node.get("intermediate_rows") or node.get("timing", 0) > 0.001:
        print(f"{'  ' * depth}{node.get('type')} rows={node.get('intermediate_rows')} "
              f"t={node.get('timing', 0):.3f}{info}")
    for child in node.get("children", []):
        walk(child, depth + 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", required=True)
    parser.add_argument("--old", action="store_true",
                        help="profile the baseline SQL (benchmarks/scale_baseline) instead")
    parser.add_argument("names", nargs="+", help="named queries of the benchmark")
    args = parser.parse_args()
    params = {name: dict(values) for _, name, values in QUERIES}
    lake = Lake(args.home)
    for name in args.names:
        sql = (BASELINE / f"{name}.sql").read_text() if args.old else named_query(name)
        con = open_home(lake)
        out = Path(tempfile.mkdtemp()) / "profile.json"
        con.execute("pragma enable_profiling='json'")
        con.execute(f"pragma profiling_output='{out}'")
        began, cpu = time.perf_counter(), time.process_time()
        rows = con.execute(sql, params.get(name, {})).fetchall()
        print(f"== {name}{' (baseline)' if args.old else ''}: {rows[:3]}: "
              f"{time.perf_counter() - began:.2f} s, {time.process_time() - cpu:.2f} s CPU, "
              f"load {os.getloadavg()[0]:.1f}")
        con.execute("pragma disable_profiling")
        for operator in json.loads(out.read_text())["operator"]:
            walk(operator)
        con.close()


if __name__ == "__main__":
    main()
