"""The Delta table in a table's folder at its latest version, kept per thread.

Loading a Delta table replays its log from the last checkpoint; a lake writes and reads the
same tables again and again. :func:`latest_table` keeps each thread's latest DeltaTable of
the last TABLE_CACHE_SIZE folders and brings it up to date by reading only the commits made
since (by any process). A cached table is used only while the commit file of its version is
still the one it read (the folder deleted and written again is another table); a forked
child starts with an empty cache. :func:`forget_table` drops a folder's table after a failed
commit, whose state it cannot trust. :func:`current_table` is what the lake asks: None before
the table's first commit (:func:`table_exists`), and Delta's errors as a WarehouseError
naming the table. The tables given back are to be used at once: the next call on the
thread may move them to a newer version.

A folder holding Parquet files without a Delta log is chesslab's layout before Delta Lake:
:func:`refuse_old_layout` says so (a WarehouseError naming the folder).
"""
from __future__ import annotations

import os
import threading
from pathlib import Path

from deltalake import DeltaTable
from deltalake.exceptions import DeltaError, TableNotFoundError

from warehouse.errors import WarehouseError, first_line

DELTA_LOG = "_delta_log"
# Each thread keeps its latest DeltaTable of this many tables (brought up to date by reading
# only the commits since, instead of loading the table again).
TABLE_CACHE_SIZE = 64
_TABLES = threading.local()


def table_cache() -> dict[str, tuple[DeltaTable, tuple[int, int]]]:
    """This thread's cached tables: folder -> (DeltaTable, :func:`commit_mark` of its
    version)."""
    cache: dict[str, tuple[DeltaTable, tuple[int, int]]] | None = getattr(
        _TABLES, "tables", None)
    if cache is None or _TABLES.pid != os.getpid():    # none yet, or a forked child's
        cache = _TABLES.tables = {}
        _TABLES.pid = os.getpid()
    return cache


def commit_mark(folder: Path, version: int) -> tuple[int, int]:
    """The identity of the commit file of ``version`` (inode, modification time): another
    table made in the same folder (the folder deleted and written again) has other ones."""
    try:
        stat = (folder / DELTA_LOG / f"{version:020d}.json").stat()
    except FileNotFoundError:
        return -1, -1
    return stat.st_ino, stat.st_mtime_ns


def cached(folder: Path) -> bool:
    """This thread has a cached table of ``folder``, and that table is still there."""
    held = table_cache().get(str(folder))
    return held is not None and commit_mark(folder, held[0].version()) == held[1] != (-1, -1)


def latest_table(folder: Path) -> DeltaTable:
    """The Delta table in ``folder`` at its latest version: this thread's cached DeltaTable of
    it brought up to date by reading only the commits made since (by any process; none when
    the log has no commit after its version), or the table loaded (replaying its log from its
    last checkpoint) when none is cached or the cached one is of a table no longer there."""
    cache = table_cache()
    delta = None
    if cached(folder):
        delta = cache.pop(str(folder))[0]
        try:
            if (folder / DELTA_LOG / f"{delta.version() + 1:020d}.json").exists():
                delta.update_incremental()
        except (DeltaError, TableNotFoundError, OSError):
            delta = None      # e.g. its next commits expired from the log: load it again
    if delta is None:
        cache.pop(str(folder), None)
        delta = DeltaTable(str(folder))
    cache[str(folder)] = delta, commit_mark(folder, delta.version())   # the newest last
    while len(cache) > TABLE_CACHE_SIZE:
        del cache[next(iter(cache))]
    return delta


def forget_table(folder: Path) -> None:
    """Drop this thread's cached table of ``folder`` (loaded again at its next use)."""
    table_cache().pop(str(folder), None)


def refuse_old_layout(folder: Path) -> None:
    """The part-file layout of chesslab before Delta Lake cannot be read: say so."""
    if folder.is_dir() and next(folder.rglob("*.parquet"), None) is not None:
        raise WarehouseError(
            f"{folder} holds Parquet parts without a Delta log (the layout before Delta Lake); "
            f"re-ingest into a new home or move the folder away")


def table_exists(folder: Path) -> bool:
    """The table in ``folder`` has its first commit (False while another process is creating
    it); WarehouseError for a folder in the layout before Delta Lake."""
    log_dir = folder / DELTA_LOG
    if not log_dir.is_dir():
        refuse_old_layout(folder)
        return False
    # no commit yet: another process is creating the table
    return any(log_dir.glob("*.json"))


def current_table(folder: Path, name: str) -> DeltaTable | None:
    """Table ``name`` (in ``folder``) at its latest version, or None before its first write:
    :func:`latest_table`, with Delta's error as a WarehouseError naming the table."""
    if not cached(folder) and not table_exists(folder):
        return None
    try:
        return latest_table(folder)
    except (DeltaError, TableNotFoundError) as exc:
        raise WarehouseError(f"table {name!r}: {first_line(str(exc))}") from None
