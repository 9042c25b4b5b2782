"""The lake: one Delta Lake table per warehouse table, under ``<home>/lake/<table>/``.

Every write is one atomic Delta commit, checked against the table's schema. Keyed tables are
written by merge on their key (insert when not matched), so a fact written twice by parallel
writers or a resumed run is stored once and every reader of the files (DuckDB, pandas,
polars) sees correct counts. Concurrent writers retry on a commit conflict; a writer killed
mid-write leaves files that no commit references, which readers never see and ``compact``
vacuums. Each commit is a table version that can be read again (time travel).

Delta has no unsigned integers: ``uint64`` columns (position keys) are stored as the signed
64-bit integer with the same bits and given back unsigned by :meth:`Lake.read` and the views.

>>> lake = Lake("/tmp/chesslab-doctest")
>>> lake.table_dir("positions").name
'positions'
"""
from __future__ import annotations

import logging
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable, write_deltalake
from deltalake.exceptions import CommitFailedError, DeltaError, TableNotFoundError

from warehouse.tables import REGISTRY, Table, table

log = logging.getLogger(__name__)

HOME_ENV = "CHESSLAB_HOME"
DEFAULT_HOME = "chesslab_home"
DELTA_LOG = "_delta_log"
# Commit conflicts are retried with jittered exponential backoff, this many times at most.
COMMIT_ATTEMPTS = 30
BACKOFF_BASE_S = 0.02
BACKOFF_MAX_S = 2.0
# Delta's own default: files of versions older than this survive a vacuum (time travel).
DEFAULT_RETAIN_HOURS = 168
T = TypeVar("T")


class WarehouseError(ValueError):
    """A lake operation failed on bad input: names the table or path."""


def resolve_home(home: str | os.PathLike[str] | None = None) -> Path:
    """``home``, else ``$CHESSLAB_HOME``, else ``./chesslab_home``; ``file://`` is accepted."""
    raw = str(home) if home else os.environ.get(HOME_ENV, DEFAULT_HOME)
    if raw.startswith("file://"):
        raw = raw[len("file://"):]
    elif "://" in raw:
        raise WarehouseError(f"only local or file:// homes are supported, got {raw!r}")
    return Path(raw).expanduser().absolute()


class Lake:
    """The Delta tables of one chesslab home."""

    def __init__(self, home: str | os.PathLike[str] | None = None) -> None:
        self.home = resolve_home(home)
        self.root = self.home / "lake"

    def __repr__(self) -> str:
        return f"Lake({str(self.home)!r})"

    def table_dir(self, name: str) -> Path:
        return self.root / table(name).name

    def delta(self, name: str, version: int | None = None) -> DeltaTable | None:
        """The table's Delta table (at ``version``), or None before its first write."""
        folder = self.table_dir(name)
        if not (folder / DELTA_LOG).is_dir():
            refuse_old_layout(folder)
            return None
        try:
            return DeltaTable(str(folder), version=version)
        except (DeltaError, TableNotFoundError) as exc:
            at = f" at version {version}" if version is not None else ""
            raise WarehouseError(f"table {name!r}{at}: {first_line(str(exc))}") from None

    def version(self, name: str) -> int:
        """The table's current version (one per commit; -1 before its first write)."""
        delta = self.delta(name)
        return -1 if delta is None else delta.version()

    def parts(self, name: str) -> list[Path]:
        """The Parquet files of the table's current version, in a stable order."""
        delta = self.delta(name)
        return sorted(Path(uri) for uri in delta.file_uris()) if delta else []

    def write(self, name: str, rows: pa.Table | Sequence[Mapping[str, Any]]) -> int:
        """Commit rows to a table; returns the rows stored (rows whose key is new).

        Rows must match the schema: an unknown column, or a missing or null required column,
        is a WarehouseError naming the table and the column. Within ``rows``, the first row
        of each key wins; a key already stored keeps its stored row.
        """
        spec = table(name)
        data = dedupe(spec, conform(spec, rows))
        if data.num_rows == 0:
            return 0
        stored = to_storage(data)
        self._ensure_table(spec)
        if not spec.key:
            return with_retries(name, lambda: self._append(spec, stored))
        return with_retries(name, lambda: self._merge(spec, stored))

    def _ensure_table(self, spec: Table) -> None:
        if (self.table_dir(spec.name) / DELTA_LOG).is_dir():
            return
        refuse_old_layout(self.table_dir(spec.name))
        with_retries(spec.name, lambda: DeltaTable.create(
            str(self.table_dir(spec.name)), schema=storage_schema(spec.schema),
            partition_by=list(spec.partition_by) or None, mode="ignore", name=spec.name))

    def _append(self, spec: Table, data: pa.Table) -> int:
        write_deltalake(str(self.table_dir(spec.name)), data, mode="append",
                        partition_by=list(spec.partition_by) or None)
        return data.num_rows

    def _merge(self, spec: Table, data: pa.Table) -> int:
        delta = DeltaTable(str(self.table_dir(spec.name)))
        metrics = delta.merge(
            data, predicate=merge_predicate(spec, data), source_alias="s", target_alias="t",
        ).when_not_matched_insert_all().execute()
        return int(metrics["num_target_rows_inserted"])

    def read(self, name: str, columns: Sequence[str] | None = None,
             version: int | None = None) -> pa.Table:
        """The table (at ``version``) as Arrow, with the schema's types (for small tables,
        tests and training sets pinned to a version; use DuckDB for queries)."""
        spec = table(name)
        wanted = list(columns or spec.schema.names)
        unknown = [c for c in wanted if c not in spec.schema.names]
        if unknown:
            raise WarehouseError(f"table {name!r}: unknown column {unknown[0]!r}")
        delta = self.delta(name, version)
        if delta is None:
            if version is not None:
                raise WarehouseError(f"table {name!r} has no version {version}: never written")
            return spec.schema.empty_table().select(wanted)
        data = delta.to_pyarrow_table(columns=wanted)
        return data.cast(pa.schema([spec.schema.field(c) for c in wanted]), safe=False)

    def compact(self, name: str, retain_hours: float = DEFAULT_RETAIN_HOURS) -> tuple[int, int]:
        """Delta optimize (small files into large ones, per partition) then vacuum files no
        version newer than ``retain_hours`` uses. Returns (files before, files after)."""
        delta = self.delta(name)
        if delta is None:
            return 0, 0
        before = len(delta.file_uris())
        with_retries(name, lambda: DeltaTable(str(self.table_dir(name))).optimize.compact())
        delta = DeltaTable(str(self.table_dir(name)))
        delta.vacuum(retention_hours=int(retain_hours), enforce_retention_duration=False,
                     dry_run=False)
        return before, len(delta.file_uris())


def refuse_old_layout(folder: Path) -> None:
    """The part-file layout of chesslab before Delta Lake cannot be read: say so."""
    if folder.is_dir() and next(folder.rglob("*.parquet"), None) is not None:
        raise WarehouseError(
            f"{folder} holds Parquet parts without a Delta log (the layout before Delta Lake); "
            f"re-ingest into a new home or move the folder away")


def with_retries(name: str, commit: Callable[[], T]) -> T:
    """``commit()``, retried with jittered exponential backoff while commits conflict."""
    for attempt in range(COMMIT_ATTEMPTS):
        try:
            return commit()
        except (CommitFailedError, DeltaError) as exc:
            if not is_conflict(exc) or attempt == COMMIT_ATTEMPTS - 1:
                raise WarehouseError(f"table {name!r}: commit failed: "
                                     f"{first_line(str(exc))}") from None
            delay = min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2 ** attempt)
            log.debug("table %s: commit conflict (%s), retrying", name, exc)
            time.sleep(random.uniform(0, delay))
    raise AssertionError("unreachable")


def is_conflict(exc: Exception) -> bool:
    """A commit lost a race with another writer (retrying can succeed)."""
    text = str(exc).lower()
    return isinstance(exc, CommitFailedError) or "already exists" in text \
        or "conflict" in text or "transaction failed" in text


def conform(spec: Table, rows: pa.Table | Sequence[Mapping[str, Any]]) -> pa.Table:
    """Rows as an Arrow table with exactly the table's schema; WarehouseError naming the
    table and column for an unknown column or a missing (or null) required one."""
    given = rows.column_names if isinstance(rows, pa.Table) \
        else list(dict.fromkeys(name for row in rows for name in row))
    unknown = [c for c in given if c not in spec.schema.names]
    if unknown:
        raise WarehouseError(f"table {spec.name!r}: unknown column {unknown[0]!r}")
    if isinstance(rows, pa.Table):
        data = rows
    else:
        data = pa.Table.from_pylist(list(rows), schema=spec.schema) if rows \
            else spec.schema.empty_table()
    if data.num_rows == 0:
        return spec.schema.empty_table()
    for column in spec.required_columns:
        if column not in given or data.column(column).null_count:
            raise WarehouseError(f"table {spec.name!r}: required column {column!r} is "
                                 f"{'missing' if column not in given else 'null'}")
    return pa.Table.from_arrays([
        data.column(f.name).cast(f.type) if f.name in data.column_names
        else pa.nulls(data.num_rows, f.type)
        for f in spec.schema], schema=spec.schema)


def storage_type(kind: pa.DataType) -> pa.DataType:
    """The Delta-storable type: unsigned 64-bit integers become signed (same bits)."""
    return pa.int64() if kind == pa.uint64() else kind


def storage_schema(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f.with_type(storage_type(f.type)) for f in schema])


def to_storage(data: pa.Table) -> pa.Table:
    return data.cast(storage_schema(data.schema), safe=False)


def merge_predicate(spec: Table, data: pa.Table) -> str:
    """The merge condition: equal keys; the batch's partitions as literals, so the merge reads
    (and conflicts on) only the partitions it writes; and the range of the first key column,
    so files whose statistics lie outside it are skipped (a game's moves are merged against
    the moves of its own source file, not all moves)."""
    for column in spec.partition_by:
        check_partition_values(spec, column, data.column(column).unique().to_pylist())
    terms = [f"t.{c} is not distinct from s.{c}" if c in spec.nullable_key else f"t.{c} = s.{c}"
             for c in spec.key]
    terms += [f"t.{c} in ({', '.join(sql_literal(v) for v in data.column(c).unique().to_pylist())})"
              for c in spec.partition_by]
    return " and ".join(f"({term})" for term in terms + key_range(spec, data))


def key_range(spec: Table, data: pa.Table) -> list[str]:
    """``t.k between <min> and <max>`` for the first key column, when a string or integer."""
    column = spec.key[0]
    kind = data.schema.field(column).type
    if column in spec.nullable_key or not (pa.types.is_string(kind) or pa.types.is_integer(kind)):
        return []
    bounds = pc.min_max(data.column(column))
    return [f"t.{column} between {sql_literal(bounds['min'].as_py())} "
            f"and {sql_literal(bounds['max'].as_py())}"]


def check_partition_values(spec: Table, column: str, values: list[Any]) -> None:
    for value in values:
        if value is None or "/" in str(value) or str(value) in ("", ".", ".."):
            raise WarehouseError(f"table {spec.name!r}: bad partition value {column}={value!r}")


def sql_literal(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(int(value))


def dedupe(spec: Table, data: pa.Table) -> pa.Table:
    """Keep the first row of each key (all rows when the table has no key)."""
    if not spec.key or data.num_rows == 0:
        return data
    keys = data.select(list(spec.key))
    if keys.group_by(list(spec.key)).aggregate([]).num_rows == data.num_rows:
        return data  # the common case, checked cheaply: no key twice
    indexed = keys.append_column("__row", pa.array(range(data.num_rows), pa.int64()))
    first = indexed.group_by(list(spec.key), use_threads=False).aggregate([("__row", "min")])
    rows = first.column("__row_min")
    return data.take(pc.take(rows, pc.sort_indices(rows)))


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


__all__ = ["Lake", "WarehouseError", "resolve_home", "REGISTRY", "conform", "dedupe"]
