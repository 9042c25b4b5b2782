"""The lake: one Delta Lake table per warehouse table, under ``<home>/lake/<table>/``.

:class:`Lake` is the one door to the tables: every write, read and compaction goes through
it, and it hands each part of the work to the module that holds it:

* :mod:`warehouse.schema`: a batch checked against its table's declared schema (an unknown
  column, or a missing or null required one, is a WarehouseError naming both) and cast to
  the types Delta stores (``uint64`` keys as the signed integer with the same bits, given
  back unsigned by :meth:`Lake.read` and the views);
* :mod:`warehouse.dedupe`: the rows of a keyed batch whose key is neither repeated in it nor
  stored, so a fact written twice by parallel writers or a resumed run is stored once and
  every reader of the files (DuckDB, pandas, polars) sees correct counts;
* :mod:`warehouse.commits`: one atomic Delta commit per write, a keyed one staged and taken
  under the table's write lock;
* :mod:`warehouse.tablecache`: each thread's latest DeltaTable of a table;
* :mod:`warehouse.compaction`: small files merged (sorted, where the table says), old ones
  vacuumed.

Each commit is a table version that can be read again (time travel) until a compaction's
vacuum drops its files.

>>> lake = Lake("/tmp/chesslab-doctest")
>>> lake.table_dir("positions").name
'positions'
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable
from deltalake.exceptions import DeltaError, TableNotFoundError

from warehouse.commits import DEFAULT_INDEX_FROM, INDEX_FROM, TableWriter, write_lock
from warehouse.compaction import DEFAULT_RETAIN_HOURS, compact
from warehouse.datafiles import basename
from warehouse.dedupe import dedupe, indexed
from warehouse.errors import WarehouseError, first_line
from warehouse.keyindex import CHECK_DTYPE, INDEX_DIR, KeyIndex, index_keys, prune
from warehouse.schema import check_partition_values, conform, to_storage
from warehouse.tablecache import current_table, table_exists
from warehouse.tables import Table, table


def resolve_home(home: str | os.PathLike[str]) -> Path:
    """The absolute folder of ``home`` (a path; ``file://`` is accepted). The home is always
    given: the command line chooses it (``--home``) and hands the :class:`Lake` down."""
    raw = str(home)
    if not raw:
        raise WarehouseError("no warehouse home given")
    if raw.startswith("file://"):
        raw = raw[len("file://"):]
    elif "://" in raw:
        raise WarehouseError(f"only local or file:// homes are supported, got {raw!r}")
    return Path(raw).expanduser().absolute()


class Lake:
    """The Delta tables of one chesslab home."""

    def __init__(self, home: str | os.PathLike[str],
                 key_index: bool = True, index_threshold: int | None = None) -> None:
        self.home = resolve_home(home)
        self.root = self.home / "lake"
        # keyed writes of one-integer-key tables look keys up in warehouse.keyindex (False:
        # scan every candidate file's keys, the behaviour before it: a benchmark's baseline)
        self.key_index = key_index
        self.index_threshold = index_threshold   # None: INDEX_FROM's

    def __repr__(self) -> str:
        return f"Lake({str(self.home)!r})"

    def table_dir(self, name: str) -> Path:
        return self.root / table(name).name

    def delta(self, name: str, version: int | None = None) -> DeltaTable | None:
        """The table's Delta table (at ``version``), or None before its first write: a
        DeltaTable of its own, a snapshot the caller may keep (see :meth:`current`)."""
        if not self.exists(name):
            return None
        try:
            return DeltaTable(str(self.table_dir(name)), version=version)
        except (DeltaError, TableNotFoundError) as exc:
            at = f" at version {version}" if version is not None else ""
            raise WarehouseError(f"table {name!r}{at}: {first_line(str(exc))}") from None

    def current(self, name: str) -> DeltaTable | None:
        """The table at its latest version, or None before its first write: this thread's
        cached DeltaTable of it, brought up to date (see :mod:`warehouse.tablecache`). To be
        used at once: the lake's next call on this thread may move it to a newer version, so
        a caller that keeps a version to compare with later takes :meth:`delta`."""
        return current_table(self.table_dir(name), name)

    def exists(self, name: str) -> bool:
        """The table has its first commit (False while another process is creating it)."""
        return table_exists(self.table_dir(name))

    def version(self, name: str) -> int:
        """The table's current version (one per commit; -1 before its first write)."""
        delta = self.current(name)
        return -1 if delta is None else delta.version()

    def parts(self, name: str) -> list[Path]:
        """The Parquet files of the table's current version, in a stable order."""
        delta = self.current(name)
        return sorted(Path(uri) for uri in delta.file_uris()) if delta else []

    def write(self, name: str, rows: pa.Table | Sequence[Mapping[str, Any]],
              unique: bool = False, absent_from: DeltaTable | None = None) -> int:
        """Commit rows to a table; returns the rows stored (rows whose key is new).

        Rows must match the schema: an unknown column, or a missing or null required column,
        is a WarehouseError naming the table and the column. Within ``rows``, the first row
        of each key wins (``unique``: the caller vouches that no key is there twice, and that
        check is skipped); a key already stored keeps its stored row. ``absent_from`` (a
        keyed, unpartitioned table): the caller looked every key up in that version of the
        table and found none, so only the files committed since are checked.
        """
        spec = table(name)
        data = conform(spec, rows)
        if not unique:
            data = dedupe(spec, data)
        if data.num_rows == 0:
            return 0
        for column in spec.partition_by:
            check_partition_values(spec, column, data.column(column).unique().to_pylist())
        return self.writer(spec).write(to_storage(data), absent_from)

    def writer(self, spec: Table) -> TableWriter:
        """The commits of table ``spec`` in this lake (see :mod:`warehouse.commits`)."""
        return TableWriter(spec, self.table_dir(spec.name), self._index_dir(spec),
                           self.index_from(spec))

    def index_from(self, spec: Table) -> int:
        """The keys a partition holds before its key index is kept (see INDEX_FROM)."""
        return self.index_threshold if self.index_threshold is not None else \
            INDEX_FROM.get(spec.name, DEFAULT_INDEX_FROM)

    def _index_dir(self, spec: Table) -> Path | None:
        """The table's folder when its keyed writes use the key index, else None."""
        return self.table_dir(spec.name) if self.key_index and indexed(spec) else None

    def key_files(self, name: str, keys: pa.Array | pa.ChunkedArray) -> list[Path]:
        """The current files of table ``name`` (unpartitioned, :func:`indexed`; ``keys``: of
        its first key column) that may hold any of ``keys``: those its key index finds them in, and those it does
        not cover yet (all of them without the index)."""
        spec = table(name)
        delta = self.current(name)
        if delta is None:
            return []
        uris = delta.file_uris()
        folder = self._index_dir(spec)
        if folder is None or spec.partition_by or not uris:
            return sorted(Path(uri) for uri in uris)
        by_name = {basename(uri): uri for uri in uris}
        found = KeyIndex(folder, {}).lookup(index_keys(keys, distinct=True), by_name, by_name)
        return sorted(Path(by_name[n]) for n in found.holders | set(found.uncovered))

    def indexed_checks(self, name: str, keys: pa.Array | pa.ChunkedArray,
                       delta: DeltaTable | None = None
                       ) -> tuple[np.ndarray, np.ndarray, list[Path]]:
        """For table ``name`` (unpartitioned, one-integer key, a column of
        ``keyindex.CHECKED``): (a mask of ``keys`` its key index finds stored, the stored
        rows' ``keyindex.check_prints`` of the checked column there (0 elsewhere), the current files no
        run covers, which may hold the other keys). Without the index: nothing found, every
        file uncovered. ``delta``: that version of the table (default: the current one)."""
        delta = delta if delta is not None else self.current(name)
        none = np.zeros(len(keys), dtype=bool), np.zeros(len(keys), dtype=CHECK_DTYPE)
        if delta is None:
            return *none, []
        uris = delta.file_uris()
        folder = self._index_dir(table(name))
        if folder is None or not uris or table(name).partition_by:
            return *none, sorted(Path(uri) for uri in uris)
        by_name = {basename(uri): uri for uri in uris}
        found = KeyIndex(folder, {}).lookup(
            pc.cast(keys, pa.int64(), safe=False).to_numpy(), by_name, by_name, holders=False)
        checks = found.checks if found.checks is not None else none[1]
        return found.present, checks, sorted(Path(by_name[n]) for n in found.uncovered)

    def read(self, name: str, columns: Sequence[str] | None = None,
             version: int | None = None) -> pa.Table:
        """The table (at ``version``) as Arrow, with the schema's types (for small tables,
        tests and training sets pinned to a version; use DuckDB for queries)."""
        spec = table(name)
        wanted = list(columns or spec.schema.names)
        unknown = [c for c in wanted if c not in spec.schema.names]
        if unknown:
            raise WarehouseError(f"table {name!r}: unknown column {unknown[0]!r}")
        delta = self.delta(name, version) if version is not None else self.current(name)
        if delta is None:
            if version is not None:
                raise WarehouseError(f"table {name!r} has no version {version}: never written")
            return spec.schema.empty_table().select(wanted)
        stored = set(delta.schema().to_arrow().names)  # a column added later: null until written
        data = delta.to_pyarrow_table(columns=[c for c in wanted if c in stored] or
                                      [next(iter(stored))])
        data = pa.table({c: data.column(c) if c in stored else
                         pa.nulls(data.num_rows, spec.schema.field(c).type) for c in wanted})
        return data.cast(pa.schema([spec.schema.field(c) for c in wanted]), safe=False)

    def compact(self, name: str, retain_hours: float = DEFAULT_RETAIN_HOURS,
                merge: bool = True) -> tuple[int, int]:
        """Delta optimize (small files into large ones, per partition; a table with
        ``sort_by``: each partition not yet one sorted file rewritten sorted by that column)
        then vacuum files no version newer than ``retain_hours`` uses (see
        :func:`warehouse.compaction.compact`), and remove the key-index runs of the files it
        replaced. ``merge`` False: no optimize, the rest only. Returns (files before, files
        after)."""
        delta = self.delta(name)
        if delta is None:
            return 0, 0
        spec = table(name)
        before = len(delta.file_uris())
        self.writer(spec).ensure_checkpoints()
        after = compact(spec, self.table_dir(name), retain_hours, merge)
        self.prune_key_index(name)
        return before, after

    def prune_key_index(self, name: str) -> None:
        """Remove the key-index runs of files a compaction replaced (unusable from then on:
        the next write indexes the new files), under the table's write lock."""
        folder = self.table_dir(name)
        if not (folder / INDEX_DIR).is_dir():
            return
        with write_lock(folder):
            delta = self.current(name)
            if delta is not None:
                prune(folder, (basename(uri) for uri in delta.file_uris()))


__all__ = ["Lake", "WarehouseError", "resolve_home"]
