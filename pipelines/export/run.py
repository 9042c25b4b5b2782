"""Writing a data set out: the rows are streamed from DuckDB (an ``nnue_examples`` selection)
or from a model version's snapshot file, a batch at a time, into a temporary file renamed into
place at the end (a killed export leaves no partial file under the name asked for).

Every format gets the side to move's centipawns, the game result where known and the best
move; text and binpack need a result for each position, so positions without one are skipped
or written as draws (``--missing-result``), and counted either way.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import chess
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipelines.export.config import EXAMPLES_VIEW, ExportConfig, ExportError
from pipelines.formats.binpack import BinpackWriter
from pipelines.formats.binpack_file import binpack_results, binpack_scores
from pipelines.formats.text import text_lines_of, write_lines
from pipelines.progress import Meter, Report, no_report
from warehouse import Lake, connect
from warehouse.catalog import named_query, query

log = logging.getLogger(__name__)

SNAPSHOT = "dataset.parquet"   # the NNUE run's snapshot (pipelines.kinds.nnue.module.SNAPSHOT)
NEEDS_RESULT = ("text", "binpack")
REFUSALS_SHOWN = 10


@dataclass
class ExportSummary:
    """What an export wrote."""

    dataset: str
    format: str
    out: str
    rows: int = 0          # rows selected
    written: int = 0       # positions written
    no_result: int = 0     # of them, rows without a game result (skipped or written as draws)
    refused: int = 0       # rows the format cannot hold (a move that is not legal there)
    bytes: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class Selection:
    """The rows to write, batch by batch, with the engine and depth where constant."""

    batches: Iterator[pa.RecordBatch]
    engine_id: str | None = None
    depth: int | None = None
    rows: int | None = None            # how many, when known before reading (a snapshot)


def export_dataset(lake: Lake, config: ExportConfig,
                   report: Report = no_report) -> ExportSummary:
    """Write the data set ``config`` names to ``config.out`` in ``config.format``; a long
    export shows its progress through ``report`` (rows, rate, time left when known)."""
    began = time.monotonic()
    summary = ExportSummary(config.dataset, config.format, config.out)
    selection = select(lake, config)
    meter = Meter("export", "rows", selection.rows, report)
    out = Path(config.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    try:
        with open(tmp, "wb") as stream:
            writer = WRITERS[config.format](stream)
            for batch in selection.batches:
                write_batch(writer, with_constants(batch, selection), config, summary)
                meter.update(summary.rows, f"{summary.written:,} written to {out.name}")
            writer.close()
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    summary.bytes = out.stat().st_size
    summary.seconds = time.monotonic() - began
    return summary


def select(lake: Lake, config: ExportConfig) -> Selection:
    """The rows of an ``nnue_examples`` selection, or of a model version's snapshot."""
    if config.dataset == EXAMPLES_VIEW:
        sql = named_query("export_examples").replace("{where}", config.where or "true")
        reader = connect(lake).sql(sql, params={"engine_id": config.engine_id,
                                                "depth": config.depth}
                                   ).to_arrow_reader(config.batch_rows)
        return Selection(iter(reader))   # the view's rows carry their engine and depth
    return model_snapshot(lake, config.dataset, config.batch_rows)


def model_snapshot(lake: Lake, name: str, batch_rows: int) -> Selection:
    """The snapshot a model version was trained on (checked against model_datasets)."""
    from pipelines.models.registry import resolve_model

    model = resolve_model(lake, name)
    if model.kind != "nnue":
        raise ExportError(f"export: {model.model_id} is a {model.kind} model; only NNUE data "
                          f"sets (positions with scores) can be exported")
    path = model.artifact_path.parent / SNAPSHOT
    rows = query(connect(lake), named_query("export_model_dataset"),
                 {"model_id": model.model_id}).to_pylist()
    if not path.is_file() or not rows:
        raise ExportError(f"export: {model.model_id} has no training snapshot at {path} "
                          f"(or no model_datasets row)")
    recorded = rows[0]["train_rows"] + rows[0]["validation_rows"]
    handle = pq.ParquetFile(path)
    if handle.metadata.num_rows != recorded:
        raise ExportError(f"export: {path} holds {handle.metadata.num_rows} rows, but "
                          f"model_datasets recorded {recorded} for {model.model_id}")
    depths = rows[0]["label_depths"] or [None]
    return Selection(handle.iter_batches(batch_size=batch_rows), rows[0]["label_engine_id"],
                     depths[0], handle.metadata.num_rows)


def with_constants(batch: pa.RecordBatch, selection: Selection) -> pa.Table:
    """The batch as a table with engine_id and depth columns (a snapshot has neither)."""
    table = pa.Table.from_batches([batch])
    for name, value, kind in (("engine_id", selection.engine_id, pa.string()),
                              ("depth", selection.depth, pa.int32())):
        if name not in table.column_names:
            table = table.append_column(name, pa.repeat(pa.scalar(value, kind), table.num_rows))
    return table


def write_batch(writer: Any, table: pa.Table, config: ExportConfig,
                summary: ExportSummary) -> None:
    """Count a batch and write the rows its format can take."""
    summary.rows += table.num_rows
    missing = pc.is_null(table.column("result"))
    summary.no_result += pc.sum(missing).as_py() or 0
    if config.format in NEEDS_RESULT:
        if config.missing_result == "skip":
            table = table.filter(pc.invert(missing))
        else:
            table = table.set_column(table.schema.get_field_index("result"), "result",
                                     pc.fill_null(pc.cast(table.column("result"), pa.float64()),
                                                  0.5))
    refused = writer.write(table)
    summary.refused += refused
    summary.written += table.num_rows - refused


class TextWriter:
    """``FEN | score | result`` lines: full FEN, White's centipawns and result."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream

    def write(self, table: pa.Table) -> int:
        white = pc.equal(pc.list_element(pc.split_pattern(table.column("fen"), " "), 1), "w")
        score = pc.cast(table.column("score_cp"), pa.int64())
        result = pc.cast(table.column("result"), pa.float64())
        fens = pc.binary_join_element_wise(table.column("fen"), "0 1", " ")
        write_lines(self.stream, text_lines_of(
            fens, pc.if_else(white, score, pc.negate(score)),
            pc.if_else(white, result, pc.subtract(1.0, result))))
        return 0

    def close(self) -> None:
        return None


class BinpackFileWriter:
    """Binpack entries (the best move as the entry's move; no move: a null move)."""

    def __init__(self, stream: BinaryIO) -> None:
        self.writer = BinpackWriter(stream)
        self.shown = 0     # refusals logged so far (the first REFUSALS_SHOWN are)

    def write(self, table: pa.Table) -> int:
        fens = table.column("fen").to_pylist()
        plies = [int(fen.split()[1] == "b") for fen in fens]   # 0 White to move, 1 Black
        refused = self.writer.add(
            fens, table.column("best_move").to_pylist(),
            binpack_scores(table.column("score_cp").to_numpy()),
            plies, binpack_results(pc.cast(table.column("result"), pa.float64()).to_numpy()))
        for _, message in refused[:max(0, REFUSALS_SHOWN - self.shown)]:
            log.warning("binpack export: row left out: %s", message)
        self.shown += len(refused)
        return len(refused)

    def close(self) -> None:
        self.writer.close()


class EpdWriter:
    """EPD lines: ``ce`` (side to move's centipawns), ``bm`` (SAN), ``acd`` (depth), ``c9``
    (the game result, White's view, as Texel-tuning sets hold it) and ``c0`` (the engine)."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream

    def write(self, table: pa.Table) -> int:
        lines = [epd_line(row) for row in table.select(
            ["fen", "score_cp", "best_move", "depth", "result", "engine_id"]).to_pylist()]
        self.stream.write("".join(line + "\n" for line in lines).encode())
        return 0

    def close(self) -> None:
        return None


def epd_line(row: dict[str, Any]) -> str:
    """One EPD line of an example.

    >>> epd_line({"fen": "4k3/8/8/8/8/8/8/4K2R w K -", "score_cp": 410, "best_move": "e1g1",
    ...           "depth": 9, "result": 1.0, "engine_id": "sf"})
    '4k3/8/8/8/8/8/8/4K2R w K - ce 410; bm O-O; acd 9; c9 "1-0"; c0 "sf";'
    """
    ops = [f"ce {row['score_cp']}"]
    if row["best_move"]:
        board = chess.Board(row["fen"])
        move = chess.Move.from_uci(row["best_move"])
        if board.is_legal(move):
            ops.append(f"bm {board.san(move)}")
    if row["depth"] is not None:
        ops.append(f"acd {row['depth']}")
    if row["result"] is not None:
        white = row["result"] if row["fen"].split()[1] == "w" else 1 - row["result"]
        ops.append(f'c9 "{ {1.0: "1-0", 0.0: "0-1"}.get(white, "1/2-1/2") }"')
    if row["engine_id"]:
        ops.append(f'c0 "{row["engine_id"]}"')
    return f"{row['fen']} {'; '.join(ops)};"


class ParquetFileWriter:
    """The rows as they are (with engine_id and depth), zstd-compressed Parquet."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.writer: pq.ParquetWriter | None = None

    def write(self, table: pa.Table) -> int:
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.stream, table.schema, compression="zstd")
        self.writer.write_table(table)
        return 0

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


WRITERS: dict[str, Any] = {"text": TextWriter, "binpack": BinpackFileWriter, "epd": EpdWriter,
                           "parquet": ParquetFileWriter}
