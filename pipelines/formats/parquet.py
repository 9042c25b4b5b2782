"""Parquet files of labelled positions, as ``chesslab export --format parquet`` writes them.

Reading needs a ``fen`` column and a ``score_cp`` column (the side to move's centipawns); it
uses ``score_mate``, ``result`` (the side to move's: 1, 0.5, 0), ``best_move``, ``depth`` and
``engine_id`` when they are there (a depth outside 0 to 1000 is an error). Rows are numbered
from 1 (errors name the row as the line).
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipelines.formats.depth import depth_problem
from pipelines.formats.records import (
    SIDE_TO_MOVE,
    RecordBlock,
    error,
    in_depth_range,
    label_table,
)

BATCH_ROWS = 500_000
OPTIONAL = {"score_mate": pa.int32(), "result": pa.float32(), "best_move": pa.string(),
            "depth": pa.int32(), "engine_id": pa.string()}


class ParquetShapeError(ValueError):
    """A Parquet file without the columns an import needs: names the file and the column."""


def parquet_blocks(path: Path, start: int) -> Iterator[tuple[RecordBlock, int]]:
    """(records of a batch of rows, rows read so far) from row ``start`` on."""
    handle = pq.ParquetFile(path)
    names = set(handle.schema_arrow.names)
    for needed in ("fen", "score_cp"):
        if needed not in names:
            raise ParquetShapeError(f"{str(path)!r}: no {needed!r} column (columns: "
                                    f"{', '.join(sorted(names))})")
    columns = ["fen", "score_cp", *(name for name in OPTIONAL if name in names)]
    row = 0
    for batch in handle.iter_batches(batch_size=BATCH_ROWS, columns=columns):
        first, row = row, row + batch.num_rows
        if row <= start:
            continue
        if first < start:
            batch = batch.slice(start - first)
            first = start
        yield records_of(pa.Table.from_batches([batch]), first), row


def records_of(table: pa.Table, first: int) -> RecordBlock:
    """One label per row with a score; rows without one are errors."""
    lines = pa.array(np.arange(first + 1, first + 1 + table.num_rows), pa.int64())
    column = {name: table.column(name) if name in table.column_names else
              pa.nulls(table.num_rows, kind) for name, kind in OPTIONAL.items()}
    cp = pc.cast(table.column("score_cp"), pa.int32())
    scored = pc.or_(pc.is_valid(cp), pc.is_valid(column["score_mate"]))
    errors = [error("bad_score", "no score_cp or score_mate", lines[i].as_py())
              for i in np.flatnonzero(~scored.to_numpy(zero_copy_only=False)).tolist()]
    depth = pc.cast(column["depth"], pa.int64())      # checked before it becomes an int32
    deep_ok = pc.fill_null(in_depth_range(depth), True)
    errors += [error("bad_depth", depth_problem(depth[i].as_py()) or "", lines[i].as_py())
               for i in np.flatnonzero(~deep_ok.to_numpy(zero_copy_only=False)).tolist()]
    labels = label_table(record=np.arange(table.num_rows), cp=cp,
                         mate=pc.cast(column["score_mate"], pa.int32()),
                         best_move=column["best_move"],
                         result=pc.cast(column["result"], pa.float32()),
                         depth=pc.cast(pc.if_else(deep_ok, depth, None), pa.int32()),
                         engine_id=pc.cast(column["engine_id"], pa.string()))
    return RecordBlock(records=table.num_rows, fens=table.column("fen").combine_chunks(),
                       lines=lines, labels=labels.filter(pc.and_(scored, deep_ok)),
                       view=SIDE_TO_MOVE, errors=sorted(errors, key=lambda e: e["line"]))
