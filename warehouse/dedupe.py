"""Key deduplication: the rows of a keyed batch that are neither repeated nor stored.

A keyed table stores each key once. :func:`dedupe` keeps the first row of each key within a
batch (a hash of each key finds the rows that may repeat one; only those are grouped
exactly). :func:`unseen_rows` keeps the rows whose key a version of the table does not hold,
reading as little as it can: per partition of the batch, only the files of that partition
whose first-key range overlaps the batch's (the log's statistics, :mod:`warehouse.datafiles`),
none of the files the table's key index covers (:mod:`warehouse.keyindex`), and of the rest
only the key columns, by a DuckDB join on this thread's kept connection (:func:`key_scanner`).
Nothing here writes or locks: :mod:`warehouse.commits` calls it before and under the table's
write lock.
"""
from __future__ import annotations

import atexit
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable

from warehouse.connection import duckdb_connection
from warehouse.datafiles import (
    basename,
    file_index,
    matches,
    partition_groups,
    partition_values,
    row_key,
)
from warehouse.keyindex import KeyIndex, index_keys, is_hashed
from warehouse.tables import Table

if TYPE_CHECKING:  # imported where it is used (0.1 s): ingest workers seldom need it
    import duckdb

ROW = "__row"
_SCANNER = threading.local()


def dedupe(spec: Table, data: pa.Table) -> pa.Table:
    """Keep the first row of each key (all rows when the table has no key), in order.

    A hash of each row's key finds the rows that may repeat a key (equal keys hash alike):
    usually none; otherwise only those rows are grouped exactly."""
    if not spec.key or data.num_rows == 0:
        return data
    keys = data.select(list(spec.key))
    hashes = key_hashes(keys)
    if hashes is None:
        suspects = np.arange(data.num_rows)
    else:
        suspects = shared(hashes)
        if len(suspects) == 0:
            return data  # the common case, checked cheaply: no key twice
    some = keys.take(pa.array(suspects)).append_column(ROW, pa.array(suspects, pa.int64()))
    first = some.group_by(list(spec.key), use_threads=False).aggregate([(ROW, "min")])
    keep = np.ones(data.num_rows, bool)
    keep[suspects] = False
    keep[first.column(f"{ROW}_min").to_numpy()] = True
    return data.filter(pa.array(keep))


def shared(hashes: np.ndarray) -> np.ndarray:
    """The rows (ascending) whose hash another row has too.

    >>> shared(np.array([5, 7, 5, 9, 7, 1], np.uint64)).tolist()
    [0, 1, 2, 4]
    """
    ordered = np.sort(hashes)
    if not (ordered[1:] == ordered[:-1]).any():
        return np.zeros(0, np.int64)   # the common case (a sort costs less than an argsort)
    order = np.argsort(hashes, kind="stable")
    ordered = hashes[order]
    same = ordered[1:] == ordered[:-1]
    in_run = np.zeros(len(hashes), bool)
    in_run[1:] |= same
    in_run[:-1] |= same
    return np.sort(order[in_run])


def key_hashes(keys: pa.Table) -> np.ndarray | None:
    """A 64-bit hash of each row of ``keys`` (equal keys hash alike; nulls equal each other),
    or None for a column type it cannot hash.

    >>> h = key_hashes(pa.table({"k": [1, 1, 1, 2], "s": ["a", None, "a", "a"]}))
    >>> bool(h[0] == h[2]), bool(h[0] == h[1]), bool(h[0] == h[3])
    (True, False, False)
    """
    mixed = np.zeros(keys.num_rows, np.uint64)
    for column in keys.columns:
        values = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        try:
            if pa.types.is_integer(values.type) or pa.types.is_timestamp(values.type):
                codes = pc.cast(values, pa.int64(), safe=False)
            else:     # strings and the rest: the index of the value in the column's dictionary
                codes = pc.cast(pc.dictionary_encode(values).indices, pa.int64())
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
            return None
        raw = codes.fill_null(-1).to_numpy(zero_copy_only=False).view(np.uint64)
        if codes.null_count:   # null, not -1: a code of its own
            raw = np.where(codes.is_null().to_numpy(zero_copy_only=False),
                           np.uint64(0x9E3779B97F4A7C15), raw)
        mixed = (mixed ^ raw) * np.uint64(0x100000001B3) + np.uint64(0x632BE59BD9B4E019)
    return mixed


def unseen_rows(spec: Table, delta: DeltaTable, data: pa.Table,
                only: set[str] | None = None, index: Path | None = None) -> pa.Table:
    """The rows of ``data`` (storage types, keys unique) whose key ``delta`` does not hold
    (in its files ``only``, when given), in their order. Per partition of the batch, only the
    files of that partition whose first-key range overlaps the batch's are read, and of them
    only the key columns; with ``index`` (the table's folder), the files its key index covers
    are not read at all (see :mod:`warehouse.keyindex`)."""
    live = files = file_index(delta)
    if only is not None:
        files = files.filter(pc.is_in(files.column("uri"), value_set=pa.array(sorted(only))))
    if files.num_rows == 0:
        return data
    # the key columns only: the groups are filtered copies, the other columns are not needed
    numbered = data.select([*spec.partition_by, *row_key(spec)]).append_column(
        ROW, row_numbers(data.num_rows))
    rows = pa.chunked_array([absent_rows(spec, *indexed_lookup(spec, files, group, index, live))
                             for group in partition_groups(spec, numbered)], pa.int64())
    if len(rows) == data.num_rows:
        return data   # the common case of new facts: nothing to drop, nothing to copy
    return data.take(pc.take(rows, pc.sort_indices(rows)))


def indexed_lookup(spec: Table, files: pa.Table, group: pa.Table, index: Path | None,
                   live: pa.Table | None = None) -> tuple[list[str], pa.Table]:
    """(the files still to scan for ``group``'s keys, the rows of ``group`` still unknown):
    the candidate files (of ``files``), less those the key index covers, and the group less
    the rows whose key the index found stored. ``live``: all the version's files, when
    ``files`` are some of them (the index's runs each cover many files, and are used only
    when all of theirs are live: judged on the files asked about, a run covering them and
    older ones was never used, and each file was scanned instead)."""
    uris = candidate_files(spec, files, group)
    if index is None or not uris:
        return uris, group
    live = live if live is not None else files
    values = partition_values(spec, group)
    mine = live.filter(matches(live, {f"partition.{c}": v for c, v in values.items()})) \
        if values else live
    by_name = {basename(uri): uri for uri in uris}
    column = group.column(row_key(spec)[0])
    found = KeyIndex(index, values).lookup(
        index_keys(column, distinct=is_hashed(column)),
        [basename(uri) for uri in mine.column("uri").to_pylist()], by_name,
        holders=is_hashed(column))      # only a hash's hit names the files to read
    if is_hashed(column):   # a hit is a hash's: confirmed in the files named, a miss is certain
        named = (found.holders & by_name.keys()) | set(found.uncovered)
        return [by_name[name] for name in sorted(named)], group
    left = group.filter(pa.array(~found.present)) if found.present.any() else group
    return ([by_name[name] for name in found.uncovered] if left.num_rows else []), left


def indexed(spec: Table) -> bool:
    """The table's keyed writes can use a key index: its row key is one 64-bit integer, or
    its first key column is a string (indexed by hash: games, moves)."""
    key = row_key(spec)
    if not key or key[0] in spec.nullable_key:
        return False
    kind = spec.schema.field(key[0]).type
    return (len(key) == 1 and kind in (pa.int64(), pa.uint64())) or pa.types.is_string(kind)


def row_numbers(count: int) -> pa.Array:
    """0, 1, ..., count - 1 as int64 (a cumulative sum of ones: a Python range is slow)."""
    return pc.subtract(pc.cumulative_sum(pa.nulls(count, pa.int64()).fill_null(1)), 1)


def candidate_files(spec: Table, files: pa.Table, group: pa.Table) -> list[str]:
    """The files that can hold keys of ``group``: those of its partition whose statistics of
    the first non-partition key column overlap the group's range (or that have none)."""
    wanted = {f"partition.{c}": group.column(c)[0].as_py() for c in spec.partition_by}
    if wanted:
        files = files.filter(matches(files, wanted))
    column = row_key(spec)[0]
    if column not in spec.nullable_key and f"min.{column}" in files.column_names:
        bounds = pc.min_max(group.column(column))
        low, high = files.column(f"min.{column}"), files.column(f"max.{column}")
        overlap = pc.and_(pc.less_equal(low, bounds["max"]), pc.greater_equal(high, bounds["min"]))
        files = files.filter(pc.fill_null(overlap, True))
    return files.column("uri").to_pylist()


def absent_rows(spec: Table, uris: list[str], group: pa.Table) -> pa.Array:
    """The ``ROW`` numbers of ``group`` whose key is in none of the files ``uris``.

    A key of several columns is looked up in two steps: the batch's values of its first
    column that the files hold (one column read, the others not: a batch of new facts, such
    as the moves of new games, finds none and is done), then the whole key of the rows with
    such a value only."""
    if not uris:
        return group.column(ROW).combine_chunks()
    columns = row_key(spec)
    con = key_scanner()
    if len(columns) > 1:
        held = held_values(con, spec, uris, group, columns[0])
        if len(held) == 0:
            return group.column(ROW).combine_chunks()
        maybe = pc.is_in(group.column(columns[0]), value_set=held)
        if not pc.all(maybe).as_py():
            return pa.concat_arrays([
                group.filter(pc.invert(maybe)).column(ROW).combine_chunks(),
                key_absent(con, spec, uris, group.filter(maybe), columns)])
    return key_absent(con, spec, uris, group, columns)


def held_values(con: duckdb.DuckDBPyConnection, spec: Table, uris: list[str], group: pa.Table,
                column: str) -> pa.Array:
    """The distinct values of ``group``'s ``column`` that the files ``uris`` hold."""
    equal = (f"t.{column} is not distinct from g.{column}" if column in spec.nullable_key
             else f"t.{column} = g.{column}")
    con.register("b", group.select([column]))
    try:
        return con.sql(f"select distinct t.{column} from read_parquet($uris) t semi join "
                       f"(select distinct {column} from b) g on {equal}",
                       params={"uris": uris}).to_arrow_table().column(column).combine_chunks() \
            .cast(group.schema.field(column).type)
    finally:
        con.unregister("b")


def key_absent(con: duckdb.DuckDBPyConnection, spec: Table, uris: list[str], group: pa.Table,
               columns: list[str]) -> pa.Array:
    """The ``ROW`` numbers of ``group`` whose whole key (``columns``) no file holds."""
    equal = " and ".join(f"t.{c} is not distinct from b.{c}" if c in spec.nullable_key
                         else f"t.{c} = b.{c}" for c in columns)
    con.register("b", group.select([*columns, ROW]))
    try:
        # the stored keys of the batch first (a semi join, hashing the small batch), then
        # the batch without them: twice as fast as one anti join hashing every stored key
        return con.sql(f"with stored as (select {', '.join(columns)} from read_parquet($uris) t "
                       f"semi join b on {equal}) "
                       f"select b.{ROW} from b anti join stored t on {equal}",
                       params={"uris": uris}).to_arrow_table().column(ROW).combine_chunks()
    finally:
        con.unregister("b")


def key_scanner() -> duckdb.DuckDBPyConnection:
    """This thread's DuckDB connection for key scans, kept (opening one takes tens of ms),
    with Parquet footers cached: Delta never rewrites a data file in place. One per process
    and thread, as connections are neither thread-safe nor to be used after a fork (one a
    forked child inherits stays referenced: closing it there could hang)."""
    connections = _SCANNER.__dict__.setdefault("by_pid", {})
    if os.getpid() not in connections:
        con = duckdb_connection()
        con.execute("set parquet_metadata_cache = true")
        connections[os.getpid()] = con
    return connections[os.getpid()]


@atexit.register
def close_key_scanner() -> None:
    """Close this thread's key scanner (at exit, on the main thread: another thread's goes
    with its thread). A DuckDB object alive when the interpreter finalizes, with a daemon
    thread running (Prefect's event loops), is reported by nanobind as leaked."""
    con = _SCANNER.__dict__.get("by_pid", {}).pop(os.getpid(), None)
    if con is not None:
        con.close()
