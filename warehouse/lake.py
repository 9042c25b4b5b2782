"""The lake: Parquet part files, one folder per table, written atomically.

Every write is a new ``part-<uuid>.parquet`` written under a hidden temporary name and renamed
into place, so any number of processes can write the same table at once and a killed writer
leaves no partial file. Readers only ever see whole parts.

>>> lake = Lake("/tmp/chesslab-doctest")
>>> lake.table_dir("positions").name
'positions'
"""
from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from warehouse.tables import REGISTRY, Table, table

log = logging.getLogger(__name__)

HOME_ENV = "CHESSLAB_HOME"
DEFAULT_HOME = "chesslab_home"
PART_GLOB = "**/*.parquet"
TEMP_GLOB = "**/.part-*.parquet.tmp"
# A temporary part older than this belongs to a writer that was killed mid-write.
STALE_TEMP_S = 3600.0


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
    """The Parquet files of one chesslab home."""

    def __init__(self, home: str | os.PathLike[str] | None = None) -> None:
        self.home = resolve_home(home)
        self.root = self.home / "lake"

    def __repr__(self) -> str:
        return f"Lake({str(self.home)!r})"

    def table_dir(self, name: str) -> Path:
        return self.root / table(name).name

    def parts(self, name: str) -> list[Path]:
        """Every committed part of a table, in a stable order."""
        folder = self.table_dir(name)
        return sorted(folder.glob(PART_GLOB)) if folder.is_dir() else []

    def glob(self, name: str) -> str:
        """The glob DuckDB reads the table from."""
        return str(self.table_dir(name) / PART_GLOB)

    def write(self, name: str, rows: pa.Table | Sequence[Mapping[str, Any]]) -> list[Path]:
        """Append rows to a table as new part files (one per partition); returns the parts.

        Rows are cast to the table's schema: a missing column is null, an extra one is an error.
        """
        spec = table(name)
        data = conform(spec, rows)
        if data.num_rows == 0:
            return []
        if not spec.partition_by:
            return [self._write_part(self.table_dir(name), data)]
        return [
            self._write_part(self.table_dir(name) / partition_path(spec, values), part)
            for values, part in split_partitions(spec, data)
        ]

    def _write_part(self, folder: Path, data: pa.Table) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        name = f"part-{uuid.uuid4().hex}.parquet"
        tmp = folder / f".{name}.tmp"
        try:
            pq.write_table(data, tmp, compression="zstd")
            os.replace(tmp, folder / name)
        finally:
            tmp.unlink(missing_ok=True)
        log.debug("wrote %d rows to %s", data.num_rows, folder / name)
        return folder / name

    def read(self, name: str, columns: Sequence[str] | None = None) -> pa.Table:
        """The whole table as Arrow (small tables and tests; use DuckDB for queries)."""
        spec = table(name)
        parts = self.parts(name)
        if not parts:
            return spec.schema.empty_table().select(list(columns or spec.schema.names))
        dataset = pq.ParquetDataset(
            [str(p) for p in parts], partitioning="hive",
            schema=spec.schema,
        )
        return dataset.read(columns=list(columns) if columns else None)

    def sweep_temporary(self, name: str, older_than_s: float = STALE_TEMP_S) -> int:
        """Delete temporary parts left by writers killed mid-write; returns how many."""
        folder = self.table_dir(name)
        cutoff = time.time() - older_than_s
        stale = [p for p in folder.glob(TEMP_GLOB) if p.stat().st_mtime < cutoff] \
            if folder.is_dir() else []
        for path in stale:
            path.unlink(missing_ok=True)
        return len(stale)

    def compact(self, name: str) -> tuple[int, int]:
        """Merge a table's parts (per partition) into one, dropping duplicate keys, and sweep
        stale temporary parts.

        Returns (parts before, parts after). New parts are committed before old ones are
        removed, so a reader never sees a table with rows missing; a crash in between leaves
        duplicates that the views and the next compaction drop.
        """
        spec = table(name)
        self.sweep_temporary(name)
        old = self.parts(name)
        if len(old) <= 1:
            return len(old), len(old)
        data = dedupe(spec, self.read(name))
        new = self.write(name, data)
        for part in old:
            part.unlink(missing_ok=True)
        return len(old), len(new)


def conform(spec: Table, rows: pa.Table | Sequence[Mapping[str, Any]]) -> pa.Table:
    """Rows as an Arrow table with exactly the table's schema."""
    if not isinstance(rows, pa.Table):
        return pa.Table.from_pylist(list(rows), schema=spec.schema)
    extra = set(rows.column_names) - set(spec.schema.names)
    if extra:
        raise WarehouseError(f"table {spec.name!r}: unknown columns {sorted(extra)}")
    columns = [
        rows.column(f.name).cast(f.type) if f.name in rows.column_names
        else pa.nulls(rows.num_rows, f.type)
        for f in spec.schema
    ]
    return pa.Table.from_arrays(columns, schema=spec.schema)


def split_partitions(spec: Table, data: pa.Table) -> Iterable[tuple[tuple[Any, ...], pa.Table]]:
    """(partition values, rows without the partition columns) for each partition present."""
    keys = data.select(list(spec.partition_by)).group_by(list(spec.partition_by)).aggregate([])
    for values in keys.to_pylist():
        mask = None
        for column, value in values.items():
            cond = pc.equal(data.column(column), value) if value is not None \
                else pc.is_null(data.column(column))
            mask = cond if mask is None else pc.and_(mask, cond)
        part = data.filter(mask).drop_columns(list(spec.partition_by))
        yield tuple(values[c] for c in spec.partition_by), part


def partition_path(spec: Table, values: tuple[Any, ...]) -> Path:
    for column, value in zip(spec.partition_by, values):
        if value is None or "/" in str(value) or str(value) in ("", ".", ".."):
            raise WarehouseError(f"table {spec.name!r}: bad partition value {column}={value!r}")
    return Path(*(f"{c}={v}" for c, v in zip(spec.partition_by, values)))


def dedupe(spec: Table, data: pa.Table) -> pa.Table:
    """Keep the first row of each key (all rows when the table has no key)."""
    if not spec.key or data.num_rows == 0:
        return data
    indexed = data.append_column("__row", pa.array(range(data.num_rows), pa.int64()))
    first = indexed.group_by(list(spec.key), use_threads=False).aggregate([("__row", "min")])
    rows = first.column("__row_min")
    return data.take(pc.take(rows, pc.sort_indices(rows)))


__all__ = ["Lake", "WarehouseError", "resolve_home", "REGISTRY", "conform", "dedupe"]
