"""Importing the field's training data: Lichess evaluations (JSONL), bullet/marlinflow text,
Stockfish binpack and chesslab's own Parquet export, as positions and labels.

A file is read in blocks (:mod:`pipelines.formats`), each parsed column by column; every
``flush_records`` records the batch is committed: its new positions (deduplicated against the
warehouse, collisions recorded), its labels (keyed by position, engine and depth, so a label
stored before is not stored again), its errors (each naming the line or byte offset), then an
``ingest_progress`` row saying how far the file is committed. A killed import resumes after its
last progress row, so nothing is read twice and nothing is stored twice; the ``sources`` row,
written last, ends the file. Labels are stored with ``run_id`` = the file's ``source_id``.
"""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from pipelines.formats.binpack_file import chunk_blocks
from pipelines.formats.blocks import CutStream, TextBlock, text_blocks
from pipelines.formats.lichess_eval import parse_block as parse_jsonl
from pipelines.formats.parquet import ParquetShapeError, parquet_blocks
from pipelines.formats.records import RecordBlock, error, resolve
from pipelines.formats.text import parse_block as parse_text
from pipelines.ingest.config import IngestConfig, IngestError, capped
from pipelines.ingest.epd import BadDepth, BadLabel, epd_label
from pipelines.ingest.positions import PositionSink
from pipelines.ingest.sources import ReadPosition, SourceFile, open_binary
from pipelines.progress import Meter, Report, no_report
from warehouse import Lake, connect
from warehouse.catalog import named_query, query

log = logging.getLogger(__name__)

TRAINING_FORMATS = ("text", "lichess-eval", "binpack", "parquet")
DEFAULT_ENGINE_IDS = {"lichess-eval": "lichess-eval", "binpack": "binpack", "parquet": "parquet",
                      "epd": "epd"}
TEXT_PARSERS: dict[str, Callable[[TextBlock], RecordBlock]] = {
    "text": parse_text, "lichess-eval": parse_jsonl}
RECORD_WARNINGS = 20      # bad records named on the console per file (ingest_errors has all)


@dataclass(frozen=True)
class Point:
    """How far into a file: decompressed bytes (or Parquet rows) and lines read."""

    offset: int = 0
    line: int = 0


@dataclass
class Progress:
    """The last committed point of a file and the counts up to it."""

    point: Point = field(default_factory=Point)
    records: int = 0
    label_rows: int = 0
    truncated: bool = False


def engine_for(source: SourceFile, config: IngestConfig) -> str:
    """The engine id a file's labels are stored under; IngestError for text without one."""
    if config.engine_id:
        return config.engine_id
    if source.format == "text":
        raise IngestError(f"{str(source.path)!r}: text training data names no engine: give "
                          f"--engine-id (the engine or data set its scores come from)")
    return DEFAULT_ENGINE_IDS[source.format]


def check_training_options(sources: list[SourceFile], config: IngestConfig) -> None:
    """IngestError before any work when a file would need an option that was not given."""
    for source in sources:
        if source.format in TRAINING_FORMATS:
            engine_for(source, config)


def register_import_engine(lake: Lake, engine_id: str, fmt: str) -> None:
    """The ``engines`` row of an imported data set's identity (kept once: a keyed table)."""
    lake.write("engines", [{
        "engine_id": engine_id, "name": engine_id, "version": "",
        "options": json.dumps({"imported": fmt}), "kind": "external",
        "created_at": datetime.now(UTC)}])


def last_progress(lake: Lake, source_id: str) -> Progress | None:
    """The furthest committed point of an unfinished import of ``source_id``, if any."""
    rows = lake.read("ingest_progress").to_pylist()
    mine = [row for row in rows if row["source_id"] == source_id]
    if not mine:
        return None
    row = max(mine, key=lambda r: r["byte_offset"])
    return Progress(Point(row["byte_offset"], row["line"]), row["records"], row["label_rows"],
                    bool(row["truncated"]))


def blocks_of(source: SourceFile, start: Point, block_bytes: int,
              position: ReadPosition | None = None) -> Iterator[tuple[RecordBlock, Point]]:
    """Each block of a file from ``start``, with the point just after it; a cut stream ends
    with a block holding the ``truncated`` error. ``position`` follows the file's bytes."""
    if source.format == "parquet":
        try:
            for block, rows in parquet_blocks(source.path, start.offset):
                yield block, Point(rows, rows)
        except ParquetShapeError as exc:
            raise IngestError(str(exc)) from None
        return
    with open_binary(source, position) as stream:
        if source.format == "binpack":
            for block, offset in chunk_blocks(stream, start.offset):
                yield block, Point(offset, 0)
            return
        parse = TEXT_PARSERS[source.format]
        try:
            for text in text_blocks(stream, start.offset, start.line + 1, block_bytes):
                yield parse(text), Point(text.end, text.first_line - 1 + text.data.count(b"\n"))
        except CutStream as exc:
            cut = exc.cut
            dropped = f"; a partial line of {cut.dropped} bytes after it is dropped" \
                if cut.dropped else ""
            yield RecordBlock(records=0, errors=[error(
                "truncated", f"stream ends before its end after line {cut.line} (byte "
                f"{cut.offset}): {cut.reason}{dropped}", cut.line + 1)]), \
                Point(cut.offset, cut.line)


@dataclass
class Import:
    """One file being imported: what is buffered for the next commit and the counts."""

    lake: Lake
    source: SourceFile
    source_id: str
    config: IngestConfig
    engine_id: str
    sink: PositionSink
    progress: Progress
    labels_stored: int = 0
    errors_written: int = 0
    warned: int = 0
    pending_labels: list[pa.Table] = field(default_factory=list)
    pending_errors: list[dict[str, Any]] = field(default_factory=list)
    pending_records: int = 0

    def take(self, block: RecordBlock) -> None:
        """Resolve a block into rows and buffer them."""
        rows = resolve(block, self.engine_id, self.config.depth)
        self.sink.add(rows.positions)
        if rows.labels.num_rows:
            self.pending_labels.append(rows.labels)
        for row in rows.errors:
            self.record_error(row)
        self.progress.records += block.records
        self.progress.label_rows += rows.label_rows
        self.pending_records += block.records

    def record_error(self, row: dict[str, Any]) -> None:
        if row["kind"] == "truncated":
            self.progress.truncated = True
        self.warned += 1
        if self.warned <= RECORD_WARNINGS:
            where = f"line {row['line']}" if row.get("line") is not None \
                else f"byte {row.get('byte_offset')}"
            log.warning("%s: %s: %s (%s; ingest_errors has it)", self.source.path, where,
                        row["message"], row["kind"])
        self.pending_errors.append({
            "source_id": self.source_id, "path": str(self.source.path), "game_index": None,
            "line": row.get("line"), "kind": row["kind"], "message": capped(row["message"]),
            "byte_offset": row.get("byte_offset")})

    def commit(self, point: Point) -> None:
        """Store the buffered positions, labels and errors, then the progress row."""
        self.pending_errors.extend(self.sink.flush())
        if self.pending_labels:
            labels = pa.concat_tables(self.pending_labels, promote_options="permissive")
            now = pa.scalar(datetime.now(UTC), pa.timestamp("us", tz="UTC"))
            labels = labels.append_column("run_id", pa.repeat(
                pa.scalar(self.source_id), labels.num_rows)).append_column(
                "labelled_at", pa.repeat(now, labels.num_rows))
            self.labels_stored += self.lake.write("labels", labels)
        if self.pending_errors:
            now_dt = datetime.now(UTC)
            self.lake.write("ingest_errors", [{**row, "recorded_at": now_dt}
                                              for row in self.pending_errors])
            self.errors_written += len(self.pending_errors)
        self.lake.write("ingest_progress", [{
            "source_id": self.source_id, "byte_offset": point.offset, "line": point.line,
            "records": self.progress.records, "label_rows": self.progress.label_rows,
            "truncated": self.progress.truncated, "committed_at": datetime.now(UTC)}])
        self.progress.point = point
        self.pending_labels, self.pending_errors, self.pending_records = [], [], 0


def ingest_training_file(lake: Lake, source: SourceFile, source_id: str,
                         config: IngestConfig, summary: Any, report: Report = no_report) -> Any:
    """Import one file of training data (resuming an unfinished import of it); fills and
    returns ``summary`` (an IngestSummary) and writes the file's ``sources`` row. Its
    progress (bytes read, rate, time left) goes to ``report`` every few seconds."""
    began = time.monotonic()
    engine_id = engine_for(source, config)
    register_import_engine(lake, engine_id, source.format)
    resumed = last_progress(lake, source_id)
    run = Import(lake, source, source_id, config, engine_id,
                 PositionSink(lake, source_id, str(source.path)), resumed or Progress())
    if resumed:
        log.info("%s: resuming after line %d / byte %d (%d records already committed)",
                 source.path, resumed.point.line, resumed.point.offset, resumed.records)
    point = run.progress.point
    position = ReadPosition()
    by_rows = source.format == "parquet"     # read by row groups, not as a stream of bytes
    meter = Meter(f"ingest {source.path.name}", "records" if by_rows else "bytes",
                  None if by_rows else source.size_bytes, report)
    for block, point in blocks_of(source, run.progress.point, config.block_bytes, position):
        run.take(block)
        if run.pending_records >= config.flush_records:
            run.commit(point)
        meter.update(run.progress.records if by_rows else position.bytes_read(),
                     f"{run.progress.records:,} records, {run.progress.label_rows:,} labels")
    run.commit(point)
    fill_summary(summary, run, resumed is not None)
    summary.seconds = time.monotonic() - began
    write_sources_row(lake, source, source_id, summary)
    return summary


def fill_summary(summary: Any, run: Import, resumed: bool) -> None:
    """The file's counts: this run's, or the warehouse's when an earlier run stored part."""
    summary.records = run.progress.records
    summary.truncated = run.progress.truncated
    summary.encoding = "" if run.source.format in ("binpack", "parquet") else "utf-8"
    summary.collisions = run.sink.collisions
    if resumed:
        counts = stored_counts(run.lake, run.source_id)
        summary.new_positions, summary.labels, summary.errors = \
            counts["new_positions"], counts["labels"], counts["errors"]
    else:
        summary.new_positions = run.sink.new_positions
        summary.labels, summary.errors = run.labels_stored, run.errors_written
    summary.duplicates = run.progress.label_rows - summary.labels


def stored_counts(lake: Lake, source_id: str) -> dict[str, int]:
    """Positions first seen in, labels from and errors of a source, counted in the warehouse."""
    rows = query(connect(lake), named_query("ingest_source_counts"),
                 {"source_id": source_id}).to_pylist()
    return {name: int(value or 0) for name, value in rows[0].items()}


def write_sources_row(lake: Lake, source: SourceFile, source_id: str, s: Any) -> None:
    lake.write("sources", [{
        "source_id": source_id, "path": str(source.path), "format": source.format,
        "compression": source.compression, "size_bytes": source.size_bytes,
        "encoding": s.encoding, "games": 0, "duplicates": s.duplicates, "records": s.records,
        "plies": 0, "new_positions": s.new_positions, "errors": s.errors,
        "truncated": s.truncated, "seconds": s.seconds, "ingested_at": datetime.now(UTC),
        "labels": s.labels}])


def epd_labels(lake: Lake, rows: list[dict[str, Any]], source_id: str, config: IngestConfig,
               record_error: Callable[..., None]) -> int:
    """Store the labels of EPD records that carry ``ce`` (under ``--engine-id``, default
    ``epd``); a line whose label opcodes are bad is an error (its position is kept). Returns
    the labels stored."""
    labels = []
    for row in rows:
        try:
            label = epd_label(row)
        except (BadLabel, ValueError) as exc:
            record_error("bad_depth" if isinstance(exc, BadDepth) else "bad_score",
                         f"{exc} in EPD line {row['line']}", line=row["line"])
            continue
        if label is not None:
            labels.append({**label, "key": row["position_key"],
                           "white": row["fen"].split()[1] == "w"})
    if not labels:
        return 0
    engine_id = config.engine_id or DEFAULT_ENGINE_IDS["epd"]
    register_import_engine(lake, engine_id, "epd")
    now = datetime.now(UTC)
    return lake.write("labels", [{
        "position_key": label["key"], "engine_id": engine_id,
        "depth": config.depth if label["depth"] is None else label["depth"],
        "score_cp": label["cp"], "white_cp": label["cp"] if label["white"] else -label["cp"],
        "best_move": label["best_move"], "pv": label["pv"], "nodes": label["nodes"],
        "result": label["result"], "run_id": source_id, "labelled_at": now}
        for label in labels])
