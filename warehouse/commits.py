"""Commits to the lake's Delta tables: retried on conflict, keyed ones staged and locked.

Every write is one atomic Delta commit; a commit that loses a race with another writer is
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
serialized by ``flock``: they would need a Delta merge on the key.

Tables are created with a checkpoint every CHECKPOINT_INTERVAL commits, and the Parquet
settings of WRITER_PROPERTIES.
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
from deltalake import ColumnProperties, DeltaTable, WriterProperties, write_deltalake
from deltalake.exceptions import CommitFailedError, DeltaError
from deltalake.transaction import AddAction, RemoveAction

from warehouse.datafiles import basename
from warehouse.errors import WarehouseError, first_line
from warehouse.tablecache import DELTA_LOG, forget_table, latest_table

log = logging.getLogger(__name__)

# The keyed-write lock file: a leading underscore, so Delta readers and vacuum leave it alone.
WRITE_LOCK = "_chesslab_write.lock"
# Keyed writes stage their files in this folder of the table (a leading underscore again).
STAGING = "_staging"
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
# Commit conflicts are retried with jittered exponential backoff, this many times at most.
COMMIT_ATTEMPTS = 30
BACKOFF_BASE_S = 0.02
BACKOFF_MAX_S = 2.0
T = TypeVar("T")
# Loading a table replays its JSON log from the last checkpoint: deltalake checkpoints every 100
# commits unless the table says otherwise, and an ingest of many small files commits to each
# table once a file, so each load read up to 99 commits (about 0.4 ms each). chesslab's tables
# checkpoint every CHECKPOINT_INTERVAL commits (Delta Lake's own default), set when a table is
# created, and on a table made before on its next write or compact.
CHECKPOINT_PROPERTY = "delta.checkpointInterval"
CHECKPOINT_INTERVAL = 10


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


def writer_options(name: str) -> dict[str, Any]:
    """``write_deltalake``'s Parquet settings for table ``name`` (none: Delta's defaults)."""
    return {"writer_properties": WRITER_PROPERTIES[name]} if name in WRITER_PROPERTIES else {}


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
