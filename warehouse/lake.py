"""The lake: one Delta Lake table per warehouse table, under ``<home>/lake/<table>/``.

Every write is one atomic Delta commit, checked against the table's schema. Keyed tables keep
each key once in their files, so a fact written twice by parallel writers or a resumed run is
stored once and every reader of the files (DuckDB, pandas, polars) sees correct counts: a
keyed write takes the table's write lock (``flock`` on ``<table>/_chesslab_write.lock``),
reads only the key columns of the current version's files that can hold the batch's keys
(its partitions, files whose key range overlaps the batch's) to drop the keys already stored,
and appends the rest in one commit. An unpartitioned table's keyed write does the reading and
the Parquet encoding before it takes the lock (into staged files under ``<table>/_staging/``),
and under the lock checks only the files committed meanwhile, then moves its files in and
commits: parallel writers encode in parallel. The lock serializes writers on one machine
(processes, threads, Dask local workers) for that short step only; the kernel releases it when
a writer dies, so a writer killed with ``kill -9`` blocks no one, and its files, which no
commit references, are never seen by readers and are vacuumed by ``compact`` (its staging
folder too, once older than the retention). Writers on other machines sharing the folder are
not serialized by ``flock``: they would need a Delta merge on the key (this module's history
before the lock has one). Each commit is a table version that can be read again (time
travel).

Delta has no unsigned integers: ``uint64`` columns (position keys) are stored as the signed
64-bit integer with the same bits and given back unsigned by :meth:`Lake.read` and the views.

>>> lake = Lake("/tmp/chesslab-doctest")
>>> lake.table_dir("positions").name
'positions'
"""
from __future__ import annotations

import os
import shutil
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable, write_deltalake
from deltalake.exceptions import DeltaError, TableNotFoundError

from warehouse.commits import (
    STAGING,
    Staged,
    checkpoint_property,
    has_checkpoint_property,
    has_commits,
    set_checkpoint_property,
    with_retries,
    write_lock,
    writer_options,
)
from warehouse.compaction import (
    DEFAULT_RETAIN_HOURS,
    SORT_SPILL_BYTES,
    SORTED_FILE_BYTES,
    SORTED_PROPERTIES,
    unsorted_partitions,
)
from warehouse.datafiles import basename, file_index, matches, partition_combos, row_key
from warehouse.dedupe import dedupe, indexed, unseen_rows
from warehouse.errors import WarehouseError, first_line
from warehouse.keyindex import KeyIndex, Run, index_keys
from warehouse.schema import check_partition_values, conform, storage_schema, to_storage
from warehouse.tablecache import DELTA_LOG, cached, forget_table, latest_table, refuse_old_layout
from warehouse.tables import Table, table

# A partition's key index is kept once it holds this many keys: below, DuckDB's scan of the
# key column (about 40M keys/s) costs less than keeping runs (measured by
# benchmarks/keyed_writes.py: at 12M keys the scan took 0.27 s a 500k-key write, the index
# 0.4-1.9 s with its merges). positions keeps it from the first key: ingest's stored-FEN
# lookup reads FEN fingerprints from it instead of every stored FEN. games and moves keep it
# from the first key too: their game_id hashes defeat min/max pruning, so without it each
# write reads every stored file's keys (ingest of many small files grew quadratic); sources
# (one row a file ingested) for the same reason.
DEFAULT_INDEX_FROM = 32_000_000
INDEX_FROM = {"positions": 0, "games": 0, "moves": 0, "sources": 0}
# The tables (folders) this process saw with the checkpoint property: not looked at again.
_CHECKPOINTED: set[str] = set()


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
        cached DeltaTable of it, brought up to date (see :func:`latest_table`). To be used at
        once: the lake's next call on this thread may move it to a newer version, so a
        caller that keeps a version to compare with later takes :meth:`delta`."""
        folder = self.table_dir(name)
        if not cached(folder) and not self.exists(name):
            return None
        try:
            return latest_table(folder)
        except (DeltaError, TableNotFoundError) as exc:
            raise WarehouseError(f"table {name!r}: {first_line(str(exc))}") from None

    def exists(self, name: str) -> bool:
        """The table has its first commit (False while another process is creating it)."""
        folder = self.table_dir(name)
        log_dir = folder / DELTA_LOG
        if not log_dir.is_dir():
            refuse_old_layout(folder)
            return False
        # no commit yet: another process is creating the table
        return any(log_dir.glob("*.json"))

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
        stored = to_storage(data)
        self._ensure_table(spec)
        self._ensure_checkpoints(spec)
        if not spec.key:
            return with_retries(name, lambda: self._append(
                spec, stored, self._latest(spec)))
        if not spec.partition_by:
            return self._append_staged(spec, stored, absent_from)
        with write_lock(self.table_dir(name)):
            return with_retries(name, lambda: self._append_new(spec, stored))

    def _ensure_table(self, spec: Table) -> None:
        """Create the table at its first write, under its write lock: writers that reach a
        table not created yet wait for the first of them to create it, and the others find
        it created (one CREATE TABLE in the log, one table id)."""
        folder = self.table_dir(spec.name)
        if has_commits(folder):
            return
        refuse_old_layout(folder)
        folder.mkdir(parents=True, exist_ok=True)
        with write_lock(folder):
            if not has_commits(folder):
                with_retries(spec.name, lambda: DeltaTable.create(
                    str(folder), schema=storage_schema(spec.schema),
                    partition_by=list(spec.partition_by) or None, mode="ignore",
                    name=spec.name, configuration=checkpoint_property()))

    def _ensure_checkpoints(self, spec: Table) -> None:
        """Give a table created without it (by an older chesslab) the checkpoint interval
        (one commit, under the table's write lock; once per table and process)."""
        folder = self.table_dir(spec.name)
        if str(folder) in _CHECKPOINTED:
            return
        if not has_checkpoint_property(self._latest(spec)):
            with write_lock(folder):
                with_retries(spec.name, lambda: set_checkpoint_property(folder))
        _CHECKPOINTED.add(str(folder))

    def _latest(self, spec: Table) -> DeltaTable:
        """The (created) table at its latest version: :meth:`current`, not None."""
        delta = self.current(spec.name)
        if delta is None:
            raise WarehouseError(f"table {spec.name!r} has no commit")
        return delta

    def _append(self, spec: Table, data: pa.Table, delta: DeltaTable) -> int:
        # merge: a column added to the table's schema since the table was created joins it
        try:
            write_deltalake(delta, data, mode="append",
                            partition_by=list(spec.partition_by) or None, schema_mode="merge",
                            **writer_options(spec.name))
        except BaseException:
            forget_table(self.table_dir(spec.name))   # its state after a failed commit
            raise
        return data.num_rows

    def _append_new(self, spec: Table, data: pa.Table) -> int:
        """Append the rows whose key the current version does not hold (under the lock)."""
        delta = self._latest(spec)
        self._refresh_index(spec, delta, data)
        new = unseen_rows(spec, delta, data, index=self._index_dir(spec))
        return self._append(spec, new, delta) if new.num_rows else 0

    def index_from(self, spec: Table) -> int:
        """The keys a partition holds before its key index is kept (see INDEX_FROM)."""
        return self.index_threshold if self.index_threshold is not None else \
            INDEX_FROM.get(spec.name, DEFAULT_INDEX_FROM)

    def _index_dir(self, spec: Table) -> Path | None:
        """The table's folder when its keyed writes use the key index, else None."""
        return self.table_dir(spec.name) if self.key_index and indexed(spec) else None

    def _refresh_index(self, spec: Table, delta: DeltaTable, data: pa.Table) -> None:
        """Bring the key index of the partitions ``data`` writes to up to ``delta`` (under
        the table's write lock)."""
        folder = self._index_dir(spec)
        if folder is None:
            return
        files = file_index(delta)
        for values in partition_combos(spec, data):
            mine = files.filter(matches(files, {f"partition.{c}": v for c, v in values.items()})) \
                if values else files
            if not self._indexing(spec, delta, values):
                continue     # scanning so few keys costs less than keeping their runs
            KeyIndex(folder, values).refresh(
                {basename(uri): uri for uri in mine.column("uri").to_pylist()}, row_key(spec)[0])

    def _append_staged(self, spec: Table, data: pa.Table,
                       absent_from: DeltaTable | None = None) -> int:
        """A keyed append that holds the table's lock only to commit: the rows whose key the
        current version does not hold are found and written to staged files (a Delta table of
        their own under ``_staging/``, which the table's readers and vacuum ignore) without
        the lock, so writers encode in parallel; under the lock they are checked again only
        against the files committed since, and the staged files are moved in and committed
        (or, when a key was committed meanwhile, the rows still new are written as before)."""
        folder = self.table_dir(spec.name)
        # the files the keys are checked against (their names taken now: the cached table
        # is moved on by the commit below)
        before = absent_from if absent_from is not None else self._latest(spec)
        checked = frozenset(before.file_uris())
        if absent_from is not None:     # the caller checked the keys against this version
            new = data
        else:
            new = unseen_rows(spec, before, data, index=self._index_dir(spec))
        if new.num_rows == 0:
            return 0
        staged = Staged(folder)
        try:
            with_retries(spec.name, lambda: staged.write(new))   # errors worded as commits
            run = self._unlocked_run(spec, before, new)
            with write_lock(folder):
                return with_retries(spec.name, lambda: self._commit_staged(spec, checked, new,
                                                                           staged, run))
        finally:
            staged.discard()

    def _unlocked_run(self, spec: Table, delta: DeltaTable, rows: pa.Table) -> Run | None:
        """The key index's run of ``rows`` (keys sorted, fingerprints), made before the
        table's lock is taken, so that concurrent writers do that part in parallel; None
        when the table (at ``delta``) keeps no index."""
        folder = self._index_dir(spec)
        if folder is None or spec.partition_by or not self._indexing(spec, delta, {}):
            return None
        return KeyIndex(folder, {}).sorted_run(rows, row_key(spec)[0])

    def _commit_staged(self, spec: Table, checked: frozenset[str], new: pa.Table,
                       staged: Staged, run: Run | None = None) -> int:
        delta = self._latest(spec)
        self._refresh_index(spec, delta, new)
        since = set(delta.file_uris()) - checked
        still = unseen_rows(spec, delta, new, only=since, index=self._index_dir(spec)) \
            if since else new
        if set(new.schema.names) - set(delta.schema().to_arrow().names):
            return self._append(spec, still, delta) if still.num_rows else 0
        if still.num_rows < new.num_rows:   # keys committed meanwhile: the rest staged again
            return self._commit_again(spec, delta, still) if still.num_rows else 0
        folder = self._index_dir(spec)
        actions = staged.actions()
        index = KeyIndex(folder, {}) if folder is not None and len(actions) == 1 and \
            self._indexing(spec, delta, {}) else None
        # the rows about to be committed are in memory: their run is saved from them (no file
        # read back), before the commit, so that a lookup that sees the file sees its run
        # (one made after the commit left the file uncovered meanwhile: a concurrent writer
        # scanned it); a run is used only once all its files are live
        saved = index.stage(new, basename(actions[0].path), row_key(spec)[0], run) \
            if index is not None else None
        try:
            staged.commit(delta, actions)
        except BaseException:
            forget_table(self.table_dir(spec.name))   # its state after a failed commit
            if index is not None and saved is not None:
                index.remove(saved.name)
            raise
        if index is not None and saved is not None:
            index.adopt(saved)
        return new.num_rows

    def _commit_again(self, spec: Table, delta: DeltaTable, rows: pa.Table) -> int:
        """Stage and commit ``rows`` (still under the table's lock, checked against
        ``delta``, the current version): their file is indexed from memory as a staged
        commit's is (a plain append left it to the next writer's refresh, to read back, and
        every lookup before that scanned it)."""
        staged = Staged(self.table_dir(spec.name))
        try:
            staged.write(rows)
            return self._commit_staged(spec, frozenset(delta.file_uris()), rows, staged)
        finally:
            staged.discard()

    def _indexing(self, spec: Table, delta: DeltaTable, values: Mapping[str, Any]) -> bool:
        """Whether the partition ``values`` of the table holds enough keys to keep its key
        index (see INDEX_FROM)."""
        if self.index_from(spec) <= 0:
            return True     # from the first key: no need to count them
        files = file_index(delta)
        if values:
            files = files.filter(matches(files, {f"partition.{c}": v for c, v in values.items()}))
        return (pc.sum(files.column("num_records")).as_py() or 0) >= self.index_from(spec)

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
        rows' fingerprints of the checked column there (0 elsewhere), the current files no
        run covers, which may hold the other keys). Without the index: nothing found, every
        file uncovered. ``delta``: that version of the table (default: the current one)."""
        delta = delta if delta is not None else self.current(name)
        none = np.zeros(len(keys), dtype=bool), np.zeros(len(keys), dtype=np.uint64)
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

    def compact(self, name: str, retain_hours: float = DEFAULT_RETAIN_HOURS) -> tuple[int, int]:
        """Delta optimize (small files into large ones, per partition; a table with
        ``sort_by``: each partition not yet one sorted file rewritten sorted by that column,
        in row groups of SORTED_ROW_GROUP rows) then vacuum files no version newer than
        ``retain_hours`` uses. Returns (files before, files after)."""
        delta = self.delta(name)
        if delta is None:
            return 0, 0
        spec = table(name)
        before = len(delta.file_uris())
        self._ensure_checkpoints(spec)
        if spec.sort_by is None:
            with_retries(name, lambda: DeltaTable(str(self.table_dir(name))).optimize.compact())
        else:  # the sort makes one file of each partition it rewrites
            key = spec.sort_by
            for filters in unsorted_partitions(spec, DeltaTable(str(self.table_dir(name)))):
                with_retries(name, lambda f=filters: DeltaTable(  # type: ignore[misc]
                    str(self.table_dir(name))).optimize.z_order(
                        [key], partition_filters=f or None, target_size=SORTED_FILE_BYTES,
                        max_spill_size=SORT_SPILL_BYTES, writer_properties=SORTED_PROPERTIES))
        delta = DeltaTable(str(self.table_dir(name)))
        delta.vacuum(retention_hours=int(retain_hours), enforce_retention_duration=False,
                     dry_run=False)
        # a checkpoint of the compacted version, then the log before it that is older than
        # the table's log retention (Delta's delta.logRetentionDuration, 30 days) goes
        delta.create_checkpoint()
        delta.cleanup_metadata()
        for staged in (self.table_dir(name) / STAGING).glob("*"):   # of killed writers
            if time.time() - staged.stat().st_mtime > retain_hours * 3600:
                shutil.rmtree(staged, ignore_errors=True)
        return before, len(delta.file_uris())


__all__ = ["Lake", "WarehouseError", "resolve_home"]
