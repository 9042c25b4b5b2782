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

import atexit
import fcntl
import json
import logging
import os
import random
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from deltalake import ColumnProperties, DeltaTable, WriterProperties, write_deltalake
from deltalake.exceptions import CommitFailedError, DeltaError, TableNotFoundError
from deltalake.transaction import AddAction, RemoveAction

from warehouse.keyindex import KeyIndex, Run, index_keys, is_hashed
from warehouse.tables import REGISTRY, Table, table

if TYPE_CHECKING:  # imported where it is used (0.1 s): ingest workers seldom need it
    import duckdb

log = logging.getLogger(__name__)

# DuckDB's memory per connection: a query that needs more (a join, sort or aggregate over a
# big warehouse) spills to the temporary folder instead of growing with the warehouse.
MEMORY_ENV, DEFAULT_MEMORY = "CHESSLAB_DUCKDB_MEMORY", "2GB"
SPILL_ENV = "CHESSLAB_DUCKDB_TEMP"
DELTA_LOG = "_delta_log"
# The keyed-write lock file: a leading underscore, so Delta readers and vacuum leave it alone.
WRITE_LOCK = "_chesslab_write.lock"
# Keyed writes stage their files in this folder of the table (a leading underscore again).
STAGING = "_staging"
ROW = "__row"
# Parquet settings where the defaults waste CPU: a dictionary is tried, then dropped, for
# every page of a column whose values are nearly all distinct (keys, FENs). Without one,
# positions' FENs compress with LZ4 (Snappy leaves them at their size); the values read back
# are the same. Measured in docs/experiments/ingest.md.
_PLAIN = ColumnProperties(dictionary_enabled=False)
WRITER_PROPERTIES = {
    "positions": WriterProperties(compression="LZ4_RAW",
                                  column_properties={"position_key": _PLAIN, "fen": _PLAIN}),
    "moves": WriterProperties(compression="SNAPPY", column_properties={"position_key": _PLAIN}),
}
# compact's sort of a table with ``sort_by`` (a one-column z-order is a sort): rows per row
# group (a key range reads the row groups that overlap it), bytes per file (Delta's default),
# and DataFusion's memory before it spills to disk.
SORTED_ROW_GROUP = 1 << 17
SORTED_FILE_BYTES = 100 << 20
SORTED_PROPERTIES = WriterProperties(compression="ZSTD", max_row_group_size=SORTED_ROW_GROUP)
SORT_SPILL_BYTES = 512 << 20
_SCANNER = threading.local()
# Commit conflicts are retried with jittered exponential backoff, this many times at most.
COMMIT_ATTEMPTS = 30
BACKOFF_BASE_S = 0.02
BACKOFF_MAX_S = 2.0
# Delta's own default: files of versions older than this survive a vacuum (time travel).
DEFAULT_RETAIN_HOURS = 168
T = TypeVar("T")
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
# Loading a table replays its JSON log from the last checkpoint: deltalake checkpoints every 100
# commits unless the table says otherwise, and an ingest of many small files commits to each
# table once a file, so each load read up to 99 commits (about 0.4 ms each). chesslab's tables
# checkpoint every CHECKPOINT_INTERVAL commits (Delta Lake's own default), set when a table is
# created, and on a table made before on its next write or compact.
CHECKPOINT_PROPERTY = "delta.checkpointInterval"
CHECKPOINT_INTERVAL = 10
# Each thread keeps its latest DeltaTable of this many tables (brought up to date by reading
# only the commits since, instead of loading the table again).
TABLE_CACHE_SIZE = 64
_TABLES = threading.local()
# The tables (folders) this process saw with the checkpoint property: not looked at again.
_CHECKPOINTED: set[str] = set()


class WarehouseError(ValueError):
    """A lake operation failed on bad input: names the table or path."""


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


class Staged:
    """Rows written as a Delta table of their own in ``<table>/_staging/<uuid>/`` (with the
    Parquet statistics the table's readers use), then moved into the table and committed."""

    def __init__(self, folder: Path) -> None:
        self.table = folder
        self.folder = folder / STAGING / uuid.uuid4().hex

    def write(self, data: pa.Table) -> None:
        write_deltalake(str(self.folder), data, mode="append", **writer_options(self.table.name))

    def actions(self) -> list[AddAction | RemoveAction]:
        adds: list[AddAction | RemoveAction] = []
        for log in sorted((self.folder / DELTA_LOG).glob("*.json")):
            for line in log.read_text().splitlines():
                action = json.loads(line).get("add") if line.strip() else None
                if action:
                    adds.append(AddAction(action["path"], action["size"],
                                          action.get("partitionValues") or {},
                                          action["modificationTime"], True,
                                          action.get("stats") or ""))
        return adds

    def commit(self, delta: DeltaTable,
               actions: list[AddAction | RemoveAction] | None = None) -> list[str]:
        """Move the staged files into the table and commit them (under the table's lock);
        returns their names. ``actions``: :meth:`actions`, when the caller has them."""
        actions = actions if actions is not None else self.actions()
        for action in actions:
            source = self.folder / action.path
            if source.exists():
                os.replace(source, self.table / action.path)
        delta.create_write_transaction(actions, mode="append", schema=delta.schema())
        return [basename(action.path) for action in actions]

    def discard(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def checkpoint_property() -> dict[str, str]:
    """The table configuration chesslab creates its tables with."""
    return {CHECKPOINT_PROPERTY: str(CHECKPOINT_INTERVAL)}


def has_checkpoint_property(delta: DeltaTable) -> bool:
    return CHECKPOINT_PROPERTY in delta.metadata().configuration


def set_checkpoint_property(folder: Path) -> None:
    """Set the checkpoint interval of the table in ``folder`` unless it has one."""
    delta = latest_table(folder)
    if not has_checkpoint_property(delta):
        try:
            delta.alter.set_table_properties(checkpoint_property())
        except BaseException:
            forget_table(folder)
            raise


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


def writer_options(name: str) -> dict[str, Any]:
    """``write_deltalake``'s Parquet settings for table ``name`` (none: Delta's defaults)."""
    return {"writer_properties": WRITER_PROPERTIES[name]} if name in WRITER_PROPERTIES else {}


def has_commits(folder: Path) -> bool:
    """The table in ``folder`` has a commit (its log has a commit or checkpoint file): a log
    folder without one is a table another writer is creating."""
    log_dir = folder / DELTA_LOG
    return log_dir.is_dir() and any(
        entry.name.endswith((".json", ".checkpoint.parquet")) for entry in log_dir.iterdir())


def duckdb_connection() -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB database with chesslab's bounds: at most ``$CHESSLAB_DUCKDB_MEMORY``
    (default 2GB) of memory, spilling beyond it into ``$CHESSLAB_DUCKDB_TEMP`` (default
    ``<tmp>/chesslab-duckdb``), so a query's memory does not grow with the warehouse."""
    import duckdb

    spill = os.environ.get(SPILL_ENV) or os.path.join(tempfile.gettempdir(), "chesslab-duckdb")
    return duckdb.connect(":memory:", config={
        "memory_limit": os.environ.get(MEMORY_ENV) or DEFAULT_MEMORY,
        "temp_directory": spill})


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


@contextmanager
def write_lock(folder: Path) -> Iterator[None]:
    """The table's cross-process write lock: ``flock`` on a file in its folder (a name Delta
    and vacuum ignore). The kernel drops it when the holder exits, however it dies."""
    with open(folder / WRITE_LOCK, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


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
        [basename(uri) for uri in mine.column("uri").to_pylist()], by_name)
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


def partition_values(spec: Table, group: pa.Table) -> dict[str, Any]:
    """The partition values of a group of one partition ({} when unpartitioned)."""
    return {c: group.column(c)[0].as_py() for c in spec.partition_by}


def row_numbers(count: int) -> pa.Array:
    """0, 1, ..., count - 1 as int64 (a cumulative sum of ones: a Python range is slow)."""
    return pc.subtract(pc.cumulative_sum(pa.nulls(count, pa.int64()).fill_null(1)), 1)


def unsorted_partitions(spec: Table, delta: DeltaTable) -> list[list[tuple[str, str, str]]]:
    """The partitions (as Delta partition filters) of a table with ``sort_by`` to sort: those
    of more files than their bytes make at SORTED_FILE_BYTES a file (small files to merge),
    and those whose row groups do not hold disjoint ranges of that column (SORTED_ROW_GROUP
    rows at most each, so that an unsorted file of one large row group is sorted too)."""
    assert spec.sort_by is not None
    by_partition: dict[tuple[tuple[str, str], ...], list[tuple[str, int]]] = {}
    for row in file_index(delta).to_pylist():
        values = tuple((c, str(row[f"partition.{c}"])) for c in spec.partition_by)
        by_partition.setdefault(values, []).append((row["uri"], int(row["size_bytes"])))
    return [[(c, "=", v) for c, v in values] for values, files in sorted(by_partition.items())
            if len(files) > 1 + sum(size for _, size in files) // SORTED_FILE_BYTES
            or not disjoint([g for uri, _ in files for g in row_group_ranges(uri, spec.sort_by)])]


def row_group_ranges(uri: str, column: str) -> list[tuple[int, int] | None]:
    """(min, max) of ``column`` in each row group of a Parquet file (from its footer), None
    for a group without statistics or of more than SORTED_ROW_GROUP rows."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(uri).metadata
    index = meta.schema.to_arrow_schema().get_field_index(column)
    ranges: list[tuple[int, int] | None] = []
    for group in range(meta.num_row_groups):
        stats = meta.row_group(group).column(index).statistics
        small = meta.row_group(group).num_rows <= SORTED_ROW_GROUP
        ranges.append((stats.min, stats.max) if small and stats is not None and
                      stats.has_min_max else None)
    return ranges


def disjoint(ranges: Sequence[tuple[int, int] | None]) -> bool:
    """Whether the ranges (None: unknown) are known and overlap nowhere."""
    if any(r is None for r in ranges):
        return False
    known = sorted(r for r in ranges if r is not None)
    return all(a[1] < b[0] for a, b in zip(known, known[1:], strict=False))


def file_index(delta: DeltaTable) -> pa.Table:
    """The current version's files: ``uri`` plus Delta's ``partition.*``, ``min.*`` and
    ``max.*`` columns (the log's statistics)."""
    actions = pa.table(delta.get_add_actions(flatten=True))
    uris = {basename(uri): uri for uri in delta.file_uris()}
    return actions.append_column("uri", pa.array(
        [uris[basename(path)] for path in actions.column("path").to_pylist()], pa.string()))


def basename(path: str) -> str:
    """A data file's name (``part-<n>-<uuid>...parquet``, unique in the table)."""
    return path.rsplit("/", 1)[-1]


def partition_combos(spec: Table, data: pa.Table) -> list[dict[str, Any]]:
    """The partition values ``data`` holds ([{}] when unpartitioned)."""
    if not spec.partition_by:
        return [{}]
    return data.select(list(spec.partition_by)).group_by(
        list(spec.partition_by)).aggregate([]).to_pylist()


def partition_groups(spec: Table, data: pa.Table) -> list[pa.Table]:
    """``data`` split by the table's partition values (one group when unpartitioned or when
    every row is in one partition)."""
    combos = partition_combos(spec, data)
    if len(combos) == 1:
        return [data]
    return [data.filter(matches(data, combo)) for combo in combos]


def matches(data: pa.Table, values: Mapping[str, Any]) -> pa.ChunkedArray:
    """A mask of the rows of ``data`` whose columns equal ``values``."""
    mask = None
    for column, value in values.items():
        equal = pc.equal(data.column(column), pa.scalar(value, data.schema.field(column).type))
        mask = equal if mask is None else pc.and_(mask, equal)
    return mask


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


def row_key(spec: Table) -> list[str]:
    """The key columns stored in the files (partition columns live in the folder names)."""
    return [c for c in spec.key if c not in spec.partition_by]


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


def check_partition_values(spec: Table, column: str, values: list[Any]) -> None:
    for value in values:
        if value is None or "/" in str(value) or str(value) in ("", ".", ".."):
            raise WarehouseError(f"table {spec.name!r}: bad partition value {column}={value!r}")


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


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


__all__ = ["Lake", "WarehouseError", "resolve_home", "REGISTRY", "conform", "dedupe"]
