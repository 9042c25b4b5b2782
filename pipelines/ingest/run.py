"""Ingesting files into the warehouse: one pass per file, committed by its ``sources`` row.

For each file: hash it (its SHA-256 is its ``source_id``; a file already in ``sources`` is
skipped), stream it, write its rows, and write its ``sources`` row last. A killed ingest leaves
no ``sources`` row, so the next run ingests the file again; the duplicate games and moves keys
this leaves are hidden by the views and dropped by ``compact``.

PGN games are cut into chunks in the main process (by the compiled splitter,
:mod:`pipelines.ingest.chunks`) and parsed, replayed and written by ``workers`` processes
(in-process when ``workers == 1``), two steps per chunk in the same process: parse (returning
each game's base key), then, once the main process has numbered the file's identical records
in file order (:mod:`pipelines.ingest.keys`), replay and write the chunk's moves, new positions
(deduped against the warehouse) and games under the final keys. The main process counts,
reports each Zobrist collision once per file and writes the errors every ``flush_games``
games; its memory does not grow with the file.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from engines.stamps import file_sha256
from pipelines.ingest.chunks import PgnChunks
from pipelines.ingest.config import IngestConfig, IngestError, capped, default_workers
from pipelines.ingest.epd import BadOpcodes, parse_epd_line, parse_fen_line
from pipelines.ingest.games import (
    POSITION_SCHEMA,
    ChunkJob,
    ChunkResult,
    parse_stage,
    process_chunk,
    write_stage,
)
from pipelines.ingest.keys import Occurrences
from pipelines.ingest.positions import PositionSink
from pipelines.ingest.sources import ReadPosition, SourceFile, read_lines
from pipelines.ingest.training_data import (
    TRAINING_FORMATS,
    epd_labels,
    ingest_training_file,
)
from pipelines.processes import forkserver_pool
from pipelines.progress import Meter, Report, no_report, size
from warehouse import Lake

log = logging.getLogger(__name__)

# Errors of one game that keeps its row (the plies before the error, or none): each is named on
# the console, up to GAME_WARNINGS per file; ingest_errors has them all.
GAME_ERRORS = frozenset({"illegal_move", "bad_fen", "unknown_variant", "bad_tag",
                         "unclosed_comment", "unclosed_variation"})
GAME_WARNINGS = 20


@dataclass
class IngestSummary:
    """What ingesting one file did (``skipped`` when its SHA-256 was already ingested)."""

    path: str
    source_id: str
    format: str
    games: int = 0            # game records read (each one a game), duplicates included
    duplicates: int = 0       # games already stored from another file: counted, stored once;
    #                           training data: label rows already stored (same position, engine, depth)
    repeats: int = 0          # records identical to an earlier record of the file: new games
    records: int = 0
    plies: int = 0
    new_positions: int = 0
    errors: int = 0
    collisions: int = 0
    truncated: bool = False
    encoding: str = ""
    seconds: float = 0.0
    skipped: bool = False
    labels: int = 0           # labels stored (training data, EPD ce)
    empty: bool = False       # nothing in it: no byte, or no game, record or error read

    def read_nothing(self) -> bool:
        return not (self.games or self.records or self.errors or self.truncated)


@dataclass
class FileRun:
    """The state of one file being ingested."""

    lake: Lake
    source: SourceFile
    source_id: str
    config: IngestConfig
    sink: PositionSink
    summary: IngestSummary
    errors: list[dict[str, Any]] = field(default_factory=list)
    games_since_flush: int = 0
    game_errors: int = 0      # game errors met (named on the console up to GAME_WARNINGS)
    report: Report = no_report          # where the progress lines inside the file go
    position: ReadPosition = field(default_factory=ReadPosition)
    meter: Meter | None = None

    def __post_init__(self) -> None:
        self.meter = file_meter(self.source, self.report)

    def show_progress(self) -> None:
        """The file's progress line, when one is due: the bytes read, the counts so far."""
        assert self.meter is not None
        s = self.summary
        counts = f"{s.games:,} games, " if self.source.format == "pgn" else \
            f"{s.records:,} records, "
        self.meter.update(self.position.bytes_read(),
                          f"{counts}{self.sink.new_positions:,} new positions")

    def error(self, kind: str, message: str, line: int | None = None,
              game_index: int | None = None) -> None:
        self.errors.append({"source_id": self.source_id, "path": str(self.source.path),
                            "game_index": game_index, "line": line, "kind": kind,
                            "message": capped(message)})

    def flush(self) -> None:
        """Write the buffered new positions and every error recorded so far."""
        self.errors.extend(self.sink.flush())
        if self.errors:
            now = datetime.now(UTC)
            self.lake.write("ingest_errors", [{**row, "recorded_at": now} for row in self.errors])
            self.summary.errors += len(self.errors)
            self.errors = []
        self.summary.new_positions = self.sink.new_positions
        self.summary.collisions = self.sink.collisions
        self.games_since_flush = 0


def file_meter(source: SourceFile, report: Report) -> Meter:
    """The progress of one file, in bytes read of its size on disk (a compressed file's
    compressed bytes), a line every few seconds while it is read."""
    return Meter(f"ingest {source.path.name}", "bytes", source.size_bytes, report)


def ingest_file(lake: Lake, source: SourceFile, config: IngestConfig,
                pool: RoutedPool | None = None, report: Report = no_report) -> IngestSummary:
    """Ingest one file unless its SHA-256 is already in ``sources``; a long one shows its
    progress through ``report`` (bytes read, rate, time left, counts so far)."""
    began = time.monotonic()
    source_id = file_sha256(source.path)
    summary = IngestSummary(str(source.path), source_id, source.format)
    if source.size_bytes == 0:    # nothing to record: every empty file has this SHA-256
        log.debug("%s: empty file", source.path)
        summary.empty = True
        return summary
    if already_ingested(lake, source_id):
        log.debug("%s: already ingested (sha256 %s), skipped", source.path, source_id[:16])
        summary.skipped = True
        return summary
    if source.format in TRAINING_FORMATS:
        summary = ingest_training_file(lake, source, source_id, config, summary, report)
        summary.empty = summary.read_nothing()
        return summary
    run = FileRun(lake, source, source_id, config,
                  PositionSink(lake, source_id, str(source.path)), summary, report=report)
    log.debug("%s: ingesting (%s, %s)", source.path, source.format, source.compression)
    if source.format == "pgn":
        ingest_pgn(run, pool)
    else:
        ingest_records(run)
    run.flush()
    if run.game_errors > GAME_WARNINGS:
        log.warning("%s: %d more game errors (select * from ingest_errors where path = '%s')",
                    source.path, run.game_errors - GAME_WARNINGS, source.path)
    summary.seconds = time.monotonic() - began
    summary.empty = summary.read_nothing()
    write_source_row(lake, run)
    log.debug("%s: %d games (%d duplicates), %d records, %d plies, %d new positions, %d errors "
              "in %.1f s", source.path, summary.games, summary.duplicates, summary.records,
              summary.plies, summary.new_positions, summary.errors, summary.seconds)
    return summary


def already_ingested(lake: Lake, source_id: str) -> bool:
    """Whether ``sources`` holds ``source_id`` (reading only the files its key index names:
    a folder of many small files would read every stored source row per file)."""
    for part in lake.key_files("sources", pa.array([source_id], pa.string())):
        ids = pq.read_table(part, columns=["source_id"]).column("source_id")
        if pc.any(pc.equal(ids, source_id)).as_py():
            return True
    return False


def write_source_row(lake: Lake, run: FileRun) -> None:
    s = run.summary
    lake.write("sources", [{
        "source_id": run.source_id, "path": str(run.source.path), "format": run.source.format,
        "compression": run.source.compression, "size_bytes": run.source.size_bytes,
        "encoding": s.encoding, "games": s.games, "duplicates": s.duplicates,
        "records": s.records, "plies": s.plies,
        "new_positions": s.new_positions, "errors": s.errors, "truncated": s.truncated,
        "seconds": s.seconds, "ingested_at": datetime.now(UTC), "labels": s.labels}])


def cut(run: FileRun, line: int, game_index: int | None, reason: OSError) -> None:
    """Record a stream that stopped with an error after ``line``: what came before is kept."""
    if line == 0:
        raise IngestError(f"cannot read {str(run.source.path)!r}: {reason}") from None
    run.summary.truncated = True
    where = f"after line {line}"
    if game_index is not None:
        where += f"; game {game_index}, cut short, is dropped"
    log.warning("%s: truncated %s (%s)", run.source.path, where, reason)
    run.error("truncated", f"stream ends before its end marker {where}: {reason}",
              line=line + 1, game_index=game_index)


def ingest_pgn(run: FileRun, pool: RoutedPool | None) -> None:
    """Every chunk parsed, numbered in file order, then written; ``2 x workers`` chunks in
    each step at most."""
    chunks = PgnChunks(run.source, run.config.chunk_games)
    run.position = chunks.position
    jobs = (ChunkJob(str(run.lake.home), run.source_id, str(run.source.path), chunk, number)
            for number, chunk in enumerate(chunks))
    with Occurrences() as occurrences:
        if pool is None:
            for job in jobs:
                absorb(run, process_chunk(job, occurrences))
        else:
            pipeline(run, pool, jobs, occurrences)
        run.summary.repeats = occurrences.repeats
    if chunks.cut is not None:
        cut(run, chunks.cut.line, chunks.cut.game_index, chunks.cut.reason)
    run.summary.encoding = chunks.encoding


def pipeline(run: FileRun, pool: RoutedPool, jobs: Iterator[ChunkJob],
             occurrences: Occurrences) -> None:
    """Chunks through the pool's two steps, at most ``2 x workers`` in each."""
    parsing: deque[tuple[int, Future[list[str]]]] = deque()
    writing: deque[Future[ChunkResult]] = deque()
    window = 2 * pool.workers

    def write_next() -> None:
        number, bases = parsing.popleft()
        writing.append(pool.submit(number, write_stage, run.source_id, number,
                                   occurrences.keys(bases.result())))

    for job in jobs:
        parsing.append((job.number, pool.submit(job.number, parse_stage, job)))
        while len(parsing) >= window:
            write_next()
        while len(writing) >= window:
            absorb(run, writing.popleft().result())
    while parsing:
        write_next()
    while writing:
        absorb(run, writing.popleft().result())


def absorb(run: FileRun, result: ChunkResult) -> None:
    """Count a finished chunk, report its collisions, buffer its errors, flush when due."""
    run.summary.games += result.games
    run.summary.duplicates += result.duplicates
    run.summary.plies += result.plies
    run.sink.new_positions += result.new_positions
    run.errors.extend(run.sink.report(result.clashes))
    run.errors.extend(result.errors)
    name_game_errors(run, result.errors)
    run.games_since_flush += result.games
    if run.games_since_flush >= run.config.flush_games:
        run.flush()
    run.show_progress()


def name_game_errors(run: FileRun, errors: list[dict[str, Any]]) -> None:
    """One console line per game error (file, line, game, what is wrong), the first
    ``GAME_WARNINGS`` of a file."""
    for row in errors:
        if row["kind"] not in GAME_ERRORS:
            continue
        run.game_errors += 1
        if run.game_errors <= GAME_WARNINGS:
            kept = "kept with the plies before it" if row["kind"] == "illegal_move" else "kept"
            log.warning("%s:%d: game %d: %s (%s; ingest_errors has it)", run.source.path,
                        row["line"], row["game_index"], row["message"], kept)


def ingest_records(run: FileRun) -> None:
    """An EPD suite or FEN list: one position_records row per line, bad lines as errors."""
    parse = parse_epd_line if run.source.format == "epd" else parse_fen_line
    rows: list[dict[str, Any]] = []
    line = 0
    lines = read_lines(run.source, run.position)
    try:
        for line, text in enumerate(lines, 1):
            stripped = text.strip()
            if not stripped or stripped.startswith("#"):
                continue
            try:
                row = parse(stripped)
            except BadOpcodes as exc:  # the position is kept, its opcodes as raw text
                run.error("bad_opcode", f"{exc}", line=line)
                row = exc.row
            except ValueError as exc:
                run.error("bad_" + run.source.format, f"{exc}", line=line)
                continue
            rows.append({**row, "source_id": run.source_id, "line": line})
            if len(rows) >= run.config.epd_chunk:
                write_records(run, rows)
                rows = []
                run.show_progress()
    except OSError as exc:  # a cut or corrupt archive: keep the lines before it
        cut(run, line, None, exc)
    run.summary.encoding = lines.encoding
    write_records(run, rows)


def write_records(run: FileRun, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    positions = pa.table({
        "position_key": pa.array([r["position_key"] for r in rows], pa.uint64()),
        "fen": [r.pop("normalised_fen") for r in rows],
        "game_index": pa.nulls(len(rows), pa.int32()),
        "line": pa.array([r["line"] for r in rows], pa.int32())}, schema=POSITION_SCHEMA)
    run.lake.write("position_records", rows)
    run.summary.labels += epd_labels(run.lake, rows, run.source_id, run.config, run.error)
    run.summary.records += len(rows)
    run.sink.add(positions)
    run.flush()


class InProcess:
    """Stands in for a pool when ``workers == 1``."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


class RoutedPool:
    """``workers`` single-process pools; chunk ``n`` goes to pool ``n % workers`` for both of
    its steps, so its second step finds the chunk its first step parsed in that process."""

    def __init__(self, workers: int, preload: Sequence[str] = ("pipelines.ingest.games",)) -> None:
        self.pools = [forkserver_pool(1, preload) for _ in range(workers)]
        # The workers start now, from a thread: starting the first one waits for the fork
        # server's imports (a few tenths of a second), while this process hashes and cuts
        # the file. A chunk submitted meanwhile waits for its pool's start (its lock).
        self.starting = threading.Thread(target=self.start, name="ingest-workers", daemon=True)
        self.starting.start()

    def start(self) -> None:
        for pool in self.pools:
            pool.submit(os.getpid)

    @property
    def workers(self) -> int:
        return len(self.pools)

    def submit(self, number: int, fn: Any, *args: Any) -> Future[Any]:
        return self.pools[number % len(self.pools)].submit(fn, *args)

    def __enter__(self) -> RoutedPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.starting.join()
        for pool in self.pools:
            pool.shutdown(cancel_futures=True)


class PoolOnDemand:
    """The ingest pool of a step, started for the first PGN file that needs it and kept for
    the files after it (a context manager); ``None`` for a file parsed in this process.

    ``workers`` given: that many processes for every PGN file (1: this process). ``None``
    (the default): one per CPU for a file of at least ``pool_from_bytes`` of text, this
    process for a smaller one, where the pool's start costs more than its workers save; each
    choice is reported the first time it is made."""

    def __init__(self, workers: int | None, pool_from_bytes: int) -> None:
        self.workers, self.pool_from_bytes = workers, pool_from_bytes
        self.pool: RoutedPool | None = None
        self.in_process_said = False

    def for_file(self, source: SourceFile, report: Report = no_report) -> RoutedPool | None:
        """The pool for ``source`` (None: this process); ``report`` gets the choice."""
        count = self.workers or default_workers()
        if count == 1:
            return None
        text = f"{size(source.text_bytes)} of PGN text" + \
            ("" if source.compression == "none" else " (estimated)")
        limit = f"{size(self.pool_from_bytes)} (--pool-from-mb)"
        if self.workers is None and source.text_bytes < self.pool_from_bytes:
            if not self.in_process_said:
                self.in_process_said = True
                report(f"ingest: 1 worker (this process) for {source.path.name}: {text}, "
                       f"under {limit}; --workers N to choose")
            return None
        if self.pool is None:
            if self.workers is None:
                report(f"ingest: {count} workers from {source.path.name} on: {text}, "
                       f"at least {limit}")
            self.pool = RoutedPool(count)
        return self.pool

    def __enter__(self) -> PoolOnDemand:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.__exit__(*exc)


def worker_pool(workers: int) -> Any:
    """A :class:`RoutedPool` of ``workers`` processes, or in-process work for one.

    Workers come from a fork server, never a plain fork: the lake's runtime does not survive
    a fork after use, and the caller may run threads. Each worker gets its own process group
    and dies with the fork server, which exits with this process.
    """
    if workers == 1:
        return InProcess()
    return RoutedPool(workers)
