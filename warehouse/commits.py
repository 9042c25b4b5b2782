"""Commits to the lake's Delta tables: retried on conflict, keyed ones staged and locked.

:class:`TableWriter` stores a checked batch in its table (:meth:`Lake.write` makes one per
write) and creates the table at its first write. Every write is one atomic Delta commit; a commit that loses a race with another writer is
retried with jittered backoff (:func:`with_retries`), and any other failure is a
WarehouseError naming the table. A keyed write takes the table's write lock
(:func:`write_lock`: ``flock`` on ``<table>/_chesslab_write.lock``), finds the rows whose key
the current version does not hold (:mod:`warehouse.dedupe`) and appends them in one commit.
An unpartitioned table's keyed write does that reading and the Parquet encoding before it
takes the lock, into staged files (:class:`Staged`, under ``<table>/_staging/``), and under
the lock checks only the files committed meanwhile, then moves its files in and commits:
parallel writers encode in parallel. The lock serializes writers on one machine (processes,
threads, Dask local workers) for that short step only; the kernel releases it when a writer
dies, so a writer killed with ``kill -9`` blocks no one, and its files, which no commit
references, are never seen by readers and are vacuumed by ``compact`` (its staging folder
too, once older than the retention). Writers on other machines sharing the folder are not
serialized by ``flock``: they would need a Delta merge on the key (``warehouse/lake.py``'s
history before the lock has one).

Tables are created with a checkpoint every CHECKPOINT_INTERVAL commits, and written with the
Parquet settings of :mod:`warehouse.encoding` (WRITER_PROPERTIES).
"""
from __future__ import annotations

import fcntl
import json
import logging
import os
import random
import shutil
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable, write_deltalake
from deltalake.exceptions import CommitFailedError, DeltaError
from deltalake.transaction import AddAction, RemoveAction

from warehouse.datafiles import basename, file_index, matches, partition_combos, row_key
from warehouse.dedupe import unseen_rows
from warehouse.encoding import writer_options
from warehouse.errors import WarehouseError, first_line
from warehouse.keyindex import KeyIndex, Run
from warehouse.schema import storage_schema
from warehouse.tablecache import (
    DELTA_LOG,
    current_table,
    forget_table,
    latest_table,
    refuse_old_layout,
)
from warehouse.tables import Table

log = logging.getLogger(__name__)

# The keyed-write lock file: a leading underscore, so Delta readers and vacuum leave it alone.
WRITE_LOCK = "_chesslab_write.lock"
# Keyed writes stage their files in this folder of the table (a leading underscore again).
STAGING = "_staging"
# Commit conflicts are retried with jittered exponential backoff, this many times at most.
COMMIT_ATTEMPTS = 30
BACKOFF_BASE_S = 0.02
BACKOFF_MAX_S = 2.0
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
# The tables (folders) this process saw with the checkpoint property: not looked at again.
_CHECKPOINTED: set[str] = set()


@dataclass(frozen=True)
class TableWriter:
    """The commits of one table: how :meth:`Lake.write` stores a checked batch.

    spec: the table's declaration.
    folder: its folder, ``<home>/lake/<table>``.
    index: the folder again when its keyed writes use the key index
        (:mod:`warehouse.keyindex`), else None (every candidate file's keys are scanned).
    index_from: the keys a partition holds before its key index is kept (see INDEX_FROM).
    """

    spec: Table
    folder: Path
    index: Path | None = None
    index_from: int = DEFAULT_INDEX_FROM

    def write(self, stored: pa.Table, absent_from: DeltaTable | None = None) -> int:
        """Commit ``stored`` (storage types, keys unique, partition values checked), creating
        the table at its first write; returns the rows stored (rows whose key is new).
        ``absent_from``: see :meth:`Lake.write`."""
        name = self.spec.name
        self.ensure_table()
        self.ensure_checkpoints()
        if not self.spec.key:
            return with_retries(name, lambda: self.append(stored, self.latest()))
        if not self.spec.partition_by:
            return self.append_staged(stored, absent_from)
        with write_lock(self.folder):
            return with_retries(name, lambda: self.append_new(stored))

    def ensure_table(self) -> None:
        """Create the table at its first write, under its write lock: writers that reach a
        table not created yet wait for the first of them to create it, and the others find
        it created (one CREATE TABLE in the log, one table id)."""
        spec, folder = self.spec, self.folder
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

    def ensure_checkpoints(self) -> None:
        """Give a table created without it (by an older chesslab) the checkpoint interval
        (one commit, under the table's write lock; once per table and process)."""
        folder = self.folder
        if str(folder) in _CHECKPOINTED:
            return
        if not has_checkpoint_property(self.latest()):
            with write_lock(folder):
                with_retries(self.spec.name, lambda: set_checkpoint_property(folder))
        _CHECKPOINTED.add(str(folder))

    def latest(self) -> DeltaTable:
        """The (created) table at its latest version: :func:`current_table`, not None."""
        delta = current_table(self.folder, self.spec.name)
        if delta is None:
            raise WarehouseError(f"table {self.spec.name!r} has no commit")
        return delta

    def append(self, data: pa.Table, delta: DeltaTable) -> int:
        # merge: a column added to the table's schema since the table was created joins it
        try:
            write_deltalake(delta, data, mode="append",
                            partition_by=list(self.spec.partition_by) or None,
                            schema_mode="merge", **writer_options(self.spec.name))
        except BaseException:
            forget_table(self.folder)   # its state after a failed commit
            raise
        return data.num_rows

    def append_new(self, data: pa.Table) -> int:
        """Append the rows whose key the current version does not hold (under the lock)."""
        delta = self.latest()
        self.refresh_index(delta, data)
        new = unseen_rows(self.spec, delta, data, index=self.index)
        return self.append(new, delta) if new.num_rows else 0

    def refresh_index(self, delta: DeltaTable, data: pa.Table) -> None:
        """Bring the key index of the partitions ``data`` writes to up to ``delta`` (under
        the table's write lock)."""
        folder = self.index
        if folder is None:
            return
        files = file_index(delta)
        for values in partition_combos(self.spec, data):
            mine = files.filter(matches(files, {f"partition.{c}": v for c, v in values.items()})) \
                if values else files
            if not self.indexing(delta, values):
                continue     # scanning so few keys costs less than keeping their runs
            KeyIndex(folder, values).refresh(
                {basename(uri): uri for uri in mine.column("uri").to_pylist()},
                row_key(self.spec)[0])

    def append_staged(self, data: pa.Table, absent_from: DeltaTable | None = None) -> int:
        """A keyed append that holds the table's lock only to commit: the rows whose key the
        current version does not hold are found and written to staged files (a Delta table of
        their own under ``_staging/``, which the table's readers and vacuum ignore) without
        the lock, so writers encode in parallel; under the lock they are checked again only
        against the files committed since, and the staged files are moved in and committed
        (or, when a key was committed meanwhile, the rows still new are written as before)."""
        name = self.spec.name
        # the files the keys are checked against (their names taken now: the cached table
        # is moved on by the commit below)
        before = absent_from if absent_from is not None else self.latest()
        checked = frozenset(before.file_uris())
        if absent_from is not None:     # the caller checked the keys against this version
            new = data
        else:
            new = unseen_rows(self.spec, before, data, index=self.index)
        if new.num_rows == 0:
            return 0
        staged = Staged(self.folder)
        try:
            with_retries(name, lambda: staged.write(new))   # errors worded as commits
            run = self.unlocked_run(before, new)
            with write_lock(self.folder):
                return with_retries(name, lambda: self.commit_staged(checked, new, staged, run))
        finally:
            staged.discard()

    def unlocked_run(self, delta: DeltaTable, rows: pa.Table) -> Run | None:
        """The key index's run of ``rows`` (keys sorted, fingerprints), made before the
        table's lock is taken, so that concurrent writers do that part in parallel; None
        when the table (at ``delta``) keeps no index."""
        folder = self.index
        if folder is None or self.spec.partition_by or not self.indexing(delta, {}):
            return None
        return KeyIndex(folder, {}).sorted_run(rows, row_key(self.spec)[0])

    def commit_staged(self, checked: frozenset[str], new: pa.Table, staged: Staged,
                      run: Run | None = None) -> int:
        delta = self.latest()
        self.refresh_index(delta, new)
        since = set(delta.file_uris()) - checked
        still = unseen_rows(self.spec, delta, new, only=since, index=self.index) \
            if since else new
        if set(new.schema.names) - set(delta.schema().to_arrow().names):
            return self.append(still, delta) if still.num_rows else 0
        if still.num_rows < new.num_rows:   # keys committed meanwhile: the rest staged again
            return self.commit_again(delta, still) if still.num_rows else 0
        folder = self.index
        actions = staged.actions()
        index = KeyIndex(folder, {}) if folder is not None and len(actions) == 1 and \
            self.indexing(delta, {}) else None
        # the rows about to be committed are in memory: their run is saved from them (no file
        # read back), before the commit, so that a lookup that sees the file sees its run
        # (one made after the commit left the file uncovered meanwhile: a concurrent writer
        # scanned it); a run is used only once all its files are live
        saved = index.stage(new, basename(actions[0].path), row_key(self.spec)[0], run) \
            if index is not None else None
        try:
            staged.commit(delta, actions)
        except BaseException:
            forget_table(self.folder)   # its state after a failed commit
            if index is not None and saved is not None:
                index.remove(saved.name)
            raise
        if index is not None and saved is not None:
            index.adopt(saved)
        return new.num_rows

    def commit_again(self, delta: DeltaTable, rows: pa.Table) -> int:
        """Stage and commit ``rows`` (still under the table's lock, checked against
        ``delta``, the current version): their file is indexed from memory as a staged
        commit's is (a plain append left it to the next writer's refresh, to read back, and
        every lookup before that scanned it)."""
        staged = Staged(self.folder)
        try:
            staged.write(rows)
            return self.commit_staged(frozenset(delta.file_uris()), rows, staged)
        finally:
            staged.discard()

    def indexing(self, delta: DeltaTable, values: Mapping[str, Any]) -> bool:
        """Whether the partition ``values`` of the table holds enough keys to keep its key
        index (see INDEX_FROM)."""
        if self.index_from <= 0:
            return True     # from the first key: no need to count them
        files = file_index(delta)
        if values:
            files = files.filter(matches(files, {f"partition.{c}": v for c, v in values.items()}))
        return (pc.sum(files.column("num_records")).as_py() or 0) >= self.index_from


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


class Staged:
    """Rows written as a Delta table of their own in ``<table>/_staging/<uuid>/`` (with the
    Parquet statistics the table's readers use), then moved into the table and committed."""

    def __init__(self, folder: Path) -> None:
        self.table = folder
        self.folder = folder / STAGING / uuid.uuid4().hex

    def write(self, data: pa.Table) -> None:
        write_deltalake(str(self.folder), data, mode="append", **writer_options(self.table.name))

    def actions(self, data_change: bool = True) -> list[AddAction | RemoveAction]:
        """The staged files' add actions (``data_change`` False: rows rewritten as they were,
        as a compaction's)."""
        adds: list[AddAction | RemoveAction] = []
        for log in sorted((self.folder / DELTA_LOG).glob("*.json")):
            for line in log.read_text().splitlines():
                action = json.loads(line).get("add") if line.strip() else None
                if action:    # the log's path is URL-encoded (a partition folder's name is
                    # escaped on disk too: engine_id=sf%3A1); the transaction encodes it
                    adds.append(AddAction(unquote(action["path"]), action["size"],
                                          action.get("partitionValues") or {},
                                          action["modificationTime"], data_change,
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


def has_commits(folder: Path) -> bool:
    """The table in ``folder`` has a commit (its log has a commit or checkpoint file): a log
    folder without one is a table another writer is creating."""
    log_dir = folder / DELTA_LOG
    return log_dir.is_dir() and any(
        entry.name.endswith((".json", ".checkpoint.parquet")) for entry in log_dir.iterdir())


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
