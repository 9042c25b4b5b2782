"""What is in the warehouse: rows and parts per table, labels per engine and depth."""
from __future__ import annotations

import duckdb
import pyarrow as pa

from warehouse.catalog import named_query
from warehouse.lake import Lake
from warehouse.tables import REGISTRY


def table_rows(con: duckdb.DuckDBPyConnection, lake: Lake) -> pa.Table:
    """One row per table: its name, distinct rows (per key) and part files on disk."""
    names = sorted(REGISTRY)
    rows = [con.execute(f"select count(*) from {name}").fetchall()[0][0] for name in names]
    parts = [len(lake.parts(name)) for name in names]
    return pa.table({"table": names, "rows": rows, "parts": parts})


def label_coverage(con: duckdb.DuckDBPyConnection) -> pa.Table:
    return con.sql(named_query("label_coverage")).to_arrow_table()
