"""Training data streamed from the warehouse: a named query's rows as Arrow record batches
(DuckDB 2's ``to_arrow_reader``, formerly ``fetch_record_batch``), never a whole table in memory, split by game.

A run first writes its data set once into a snapshot file in its folder
(:func:`write_snapshot`); every epoch's query then reads that file with ``$validation``
(which split), ``$shuffle_seed`` (a new row order per epoch) and ``$max_positions``, so the
costly joins run once and a resumed run trains on the rows its model_datasets row records.

The snapshot is sorted by position_key, so each of its row groups covers a narrow key range.
An epoch reads it one key range at a time (``$key_lo``, ``$key_hi``: about ``range_rows``
rows each, the ranges in an order drawn from the epoch's seed, each range's rows in
``hash(position_key, $shuffle_seed)`` order), so its first batch comes after one range's
query, which reads that range's row groups only, and its memory is a range's, not the
split's. ``$hash_cutoff`` keeps the rows a whole-split ``limit $max_positions`` would keep.
"""
from __future__ import annotations

import contextlib
import json
import logging
import math
import queue
import random
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from pipelines.progress import Meter, Report
from warehouse import Lake, connect
from warehouse.catalog import connect_files, named_query

log = logging.getLogger(__name__)

NO_LIMIT = 2**62
# Rows of a snapshot an epoch reads per key-range query (about; the keys are hashes, so
# equal slices of the unsigned 64-bit key space hold about equal rows).
RANGE_ROWS = 1 << 18
KEY_SPACE = 1 << 64
WHOLE = ((0, KEY_SPACE - 1),)
# The lake tables a data set reads; their versions go into model_datasets.
READ_TABLES = ("positions", "labels", "moves", "games")
T = TypeVar("T")
R = TypeVar("R")
_END = object()


class DatasetError(ValueError):
    """The data set cannot be built: names the query and the parameter at fault."""


@dataclass(frozen=True)
class SplitQuery:
    """One split of a named query: what to stream and with which parameters."""

    home: str
    query: str
    parameters: Mapping[str, Any]
    validation: bool
    range_rows: int = RANGE_ROWS

    def params(self, epoch: int) -> dict[str, Any]:
        return {**self.parameters, "validation": self.validation, "shuffle_seed": epoch}


def stream_batches(split: SplitQuery, epoch: int, read_batch: int) -> Iterator[pa.RecordBatch]:
    """The split's rows for ``epoch`` (shuffled by the epoch) as record batches. A query over
    a run's snapshot reads that file alone: its connection has none of the lake's views (which
    cost more to create than the epoch's query takes), and runs once per key range
    (:func:`range_parameters`); a query over the lake runs once."""
    snapshot = split.parameters.get("snapshot")
    con = connect(Lake(split.home)) if snapshot is None else connect_files([snapshot])
    try:
        params = split.params(epoch)
        for extra in range_parameters(con, split, epoch) if snapshot is not None else [{}]:
            relation = con.sql(named_query(split.query), params={**params, **extra})
            yield from relation.to_arrow_reader(read_batch)  # fetch_record_batch before DuckDB 2
    finally:
        con.close()


def key_ranges(rows: int, range_rows: int) -> list[tuple[int, int]]:
    """The unsigned 64-bit key space cut into equal ranges (inclusive bounds) of about
    ``range_rows`` of ``rows`` uniformly spread keys each; one range for a small split."""
    count = max(1, math.ceil(rows / range_rows))
    return [(KEY_SPACE * i // count, KEY_SPACE * (i + 1) // count - 1) for i in range(count)]


def range_parameters(con: Any, split: SplitQuery, epoch: int) -> list[dict[str, int]]:
    """The key ranges of a snapshot split's epoch, in the epoch's order (a shuffle seeded by
    the epoch), each with the hash cutoff of ``$max_positions``: the largest
    ``hash(position_key, $shuffle_seed)`` among the split's first ``$max_positions`` rows
    in hash order (every hash without a limit, or with one range, where the limit does it)."""
    params = split.params(epoch)
    ranges = key_ranges(pq.ParquetFile(params["snapshot"]).metadata.num_rows, split.range_rows)
    random.Random(params["shuffle_seed"]).shuffle(ranges)
    cutoff = KEY_SPACE - 1
    if len(ranges) > 1 and params["max_positions"] < NO_LIMIT:
        found = con.sql(named_query("snapshot_hash_cutoff"), params={
            k: params[k] for k in ("snapshot", "validation", "shuffle_seed", "max_positions")
        }).fetchall()
        cutoff = cutoff if not found or found[0][0] is None else int(found[0][0])
    return [{"key_lo": lo, "key_hi": hi, "hash_cutoff": cutoff} for lo, hi in ranges]


def prefetched(items: Iterator[T], depth: int = 2) -> Generator[T, None, None]:
    """``items`` made by a background thread up to ``depth`` ahead of the consumer, so that
    reading and encoding the next batches overlaps the training step (DuckDB, Arrow and torch
    release the GIL while they work). The producer's exception is raised in the consumer;
    closing the consumer early stops the producer and closes ``items`` in its thread."""
    slots: queue.Queue[tuple[Any, BaseException | None]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(entry: tuple[Any, BaseException | None]) -> bool:
        while not stop.is_set():
            try:
                slots.put(entry, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put((item, None)):
                    return
            put((_END, None))
        except BaseException as error:  # noqa: BLE001 - handed to the consumer
            put((_END, error))
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()

    thread = threading.Thread(target=produce, name="chesslab-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            item, error = slots.get()
            if item is _END:
                if error is not None:
                    raise error
                return
            yield item
    finally:
        stop.set()
        thread.join()


def pooled(work: Callable[[T], R], items: Iterator[T], threads: int) -> Generator[R, None, None]:
    """``work(item)`` of each of ``items``, in the items' order, computed by ``threads``
    threads (at most ``2 * threads`` items in flight: ``items`` is read as results are taken).
    ``work``'s exception is raised here at its item's turn; closing the generator cancels the
    work not started, waits for the rest and closes ``items``."""
    pool = ThreadPoolExecutor(threads, thread_name_prefix="chesslab-encode")
    pending: deque[Future[R]] = deque()
    try:
        for item in items:
            pending.append(pool.submit(work, item))
            if len(pending) >= 2 * threads:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        close = getattr(items, "close", None)
        if close is not None:
            close()


def write_snapshot(lake: Lake, query_name: str, parameters: Mapping[str, Any], path: Path,
                   keep: Callable[[pa.RecordBatch], pa.RecordBatch], read_batch: int,
                   ranges: Sequence[tuple[int, int]] = WHOLE, report: Report = log.info
                   ) -> Path:
    """Stream a named query's rows into one Parquet file (``keep`` filters each batch),
    under a temporary name renamed into place: a killed writer leaves no partial snapshot.
    The query runs once per key range (``$key_lo``, ``$key_hi``; ascending, so a query
    sorted by key writes the same rows in the same order as over the whole key space), each
    on a connection for its range (its labels' views read the row groups of the range only)
    joining and sorting that range's rows only. ``report`` says what it does from the start
    and its progress every few seconds (a large snapshot takes minutes before training)."""
    tmp = path.with_name(f".{path.name}.tmp")
    report(f"train: writing the data set snapshot ({query_name}, {len(ranges)} key "
           f"range{'s' if len(ranges) > 1 else ''}) to {path}")
    meter = Meter("train: snapshot", "key ranges" if len(ranges) > 1 else "rows",
                  len(ranges) if len(ranges) > 1 else None, report)
    rows = 0
    try:
        with contextlib.ExitStack() as stack:
            writer = None
            for done, (lo, hi) in enumerate(ranges):
                con = connect(lake, key_range=None if (lo, hi) == WHOLE[0] else (lo, hi))
                try:
                    reader = con.sql(named_query(query_name),
                                     params={**parameters, "key_lo": lo, "key_hi": hi}
                                     ).to_arrow_reader(read_batch)
                    if writer is None:
                        writer = stack.enter_context(
                            pq.ParquetWriter(tmp, reader.schema, compression="zstd"))
                    for batch in reader:
                        kept = keep(batch)
                        writer.write_batch(kept)
                        rows += kept.num_rows
                        meter.update(done if len(ranges) > 1 else rows, f"{rows:,} rows")
                finally:
                    con.close()
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def table_versions(lake: Lake, tables: tuple[str, ...] = READ_TABLES) -> dict[str, int | None]:
    """``Lake.version(table)`` of each table read, or None while the lake has no versions
    (the Parquet lake; the Delta Lake port adds ``Lake.version``)."""
    version = getattr(lake, "version", None)
    return {name: (version(name) if callable(version) else None) for name in tables}


def parameters_json(parameters: Mapping[str, Any]) -> str:
    return json.dumps(dict(parameters), sort_keys=True, separators=(",", ":"))
