"""Asking the warehouse what it already stores, with one DuckDB connection per process and thread.

Ingest looks up the keys of every chunk of games and every batch of positions. Opening a DuckDB
connection costs more than such a lookup (measured 48 ms against 12 ms for a 500-key lookup
over 30 parts, on a loaded 2-core machine), so each process and thread keeps one; threads
never share one. Every one is closed before this process forks (DuckDB's threads do not
survive a fork, and a child must not inherit an instance whose locks they may hold); the
next lookup opens a new one. A thread's connection is closed once the thread has ended (when
the next connection is opened: ``chesslab serve`` runs every flow on new threads), and every
one at exit: a DuckDB object still alive when the interpreter finalizes, with a daemon thread
running (Prefect's event loops), is reported by nanobind as leaked, a hundred lines of it.
"""
from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from warehouse.catalog import named_query, query
from warehouse.connection import duckdb_connection

if TYPE_CHECKING:  # imported by the first connection: a worker may never need one
    import duckdb

_CONNECTIONS: dict[tuple[int, int], duckdb.DuckDBPyConnection] = {}
_OPENING = threading.Lock()


def close_connections() -> None:
    """Close every cached connection (before a fork, at exit, and whenever a caller wants)."""
    while _CONNECTIONS:
        _CONNECTIONS.popitem()[1].close()


os.register_at_fork(before=close_connections)
atexit.register(close_connections)


def connection() -> duckdb.DuckDBPyConnection:
    """This process's and thread's in-memory DuckDB connection."""
    owner = (os.getpid(), threading.get_ident())
    con = _CONNECTIONS.get(owner)
    if con is None:
        with _OPENING:
            close_ended_threads()
            con = _CONNECTIONS[owner] = duckdb_connection()
    return con


def close_ended_threads() -> None:
    """Close the connections of this process's threads that have ended (a new thread may
    reuse an ended one's id: it then reuses its connection, used by no one else)."""
    alive = {thread.ident for thread in threading.enumerate()}
    for owner in [owner for owner in _CONNECTIONS if owner[1] not in alive]:
        _CONNECTIONS.pop(owner).close()


def stored_lookup(name: str, batch: Mapping[str, pa.Table],
                  stored: Mapping[str, tuple[Sequence[Path], str]]) -> pa.Table:
    """The named query ``name`` over ``batch`` (view name to Arrow table) and ``stored`` (view
    name to Parquet parts and the columns to read from them)."""
    con = connection().cursor()  # its own results and views, the cached database
    try:
        for view, (parts, columns) in stored.items():
            con.read_parquet([str(p) for p in parts]).select(columns).create_view(view)
        for view, table in batch.items():
            con.register(view, table)
        return query(con, named_query(name))
    finally:
        con.close()
