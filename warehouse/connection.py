"""A bare DuckDB database with chesslab's bounds: what the catalog and the key scans open.

A connection is in memory, and a query that needs more than its memory (a join, sort or
aggregate over a big warehouse) spills to a temporary folder instead of growing with the
warehouse. No views and no locks here: :func:`warehouse.catalog.connect` adds the
warehouse's views and locks the connection down. DuckDB (0.1 s to import) is imported when
the first connection is made: ingest workers seldom need it.

A connection keeps the Parquet footers it read (``parquet_metadata_cache``): the catalog binds
a view per table and per derived and named view, several over the same files (position_facts,
its kept rows and its overlay all read positions' files), and without it each bind reads every
footer again (connecting at 100M positions: 0.31 s, 0.17 s with it). A file rewritten since
is read again (DuckDB compares its modification time); the lake's data files never are.
"""
from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where it is used (0.1 s): ingest workers seldom need it
    import duckdb

# DuckDB's memory per connection: a query that needs more (a join, sort or aggregate over a
# big warehouse) spills to the temporary folder instead of growing with the warehouse.
MEMORY_ENV, DEFAULT_MEMORY = "CHESSLAB_DUCKDB_MEMORY", "2GB"
SPILL_ENV = "CHESSLAB_DUCKDB_TEMP"


def duckdb_connection() -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB database with chesslab's bounds: at most ``$CHESSLAB_DUCKDB_MEMORY``
    (default 2GB) of memory, spilling beyond it into ``$CHESSLAB_DUCKDB_TEMP`` (default
    ``<tmp>/chesslab-duckdb``), so a query's memory does not grow with the warehouse."""
    import duckdb

    spill = os.environ.get(SPILL_ENV) or os.path.join(tempfile.gettempdir(), "chesslab-duckdb")
    con = duckdb.connect(":memory:", config={
        "memory_limit": os.environ.get(MEMORY_ENV) or DEFAULT_MEMORY,
        "temp_directory": spill})
    # not in config: the setting is the Parquet extension's, loaded by the first use
    con.execute("set parquet_metadata_cache = true")
    return con


def sql_strings(paths: Sequence[str | os.PathLike[str]]) -> str:
    """Paths as comma-separated SQL string literals."""
    return ", ".join("'" + str(p).replace("'", "''") + "'" for p in paths)
