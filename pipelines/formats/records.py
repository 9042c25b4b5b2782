"""What every importer of labelled positions produces, and how it becomes warehouse rows.

A reader turns a block of its file into a :class:`RecordBlock`: the FEN of each record (or,
for binpack, the key and normalised FEN its compiled decoder already made), where each record
is (its line; a binpack reader's own errors name byte offsets), its labels (scores from
White's or the side to move's view, as the format gives them) and the records it could not
read. :func:`resolve` keys the FENs in compiled code, turns bad FENs into errors, and gives
the ``positions`` rows (for the deduplicating sink) and the ``labels`` rows, every score in
both views, all of it columnar.

>>> block = RecordBlock(records=1, fens=pa.array(["4k3/8/8/8/8/8/8/4K3 b - - 0 1"]),
...                     lines=pa.array([7], pa.int64()),
...                     labels=label_table(record=[0], depth=[0], cp=[25], result=[1.0]),
...                     view=WHITE)
>>> rows = resolve(block, "txt", 0)
>>> rows.labels.select(["score_cp", "white_cp", "result"]).to_pylist()
[{'score_cp': -25, 'white_cp': 25, 'result': 0.0}]
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipelines.formats.depth import MAX_DEPTH, depth_problem
from pipelines.formats.fens import REASONS, fen_keys

WHITE = "white"              # scores and results from White's view (text, Lichess JSONL)
SIDE_TO_MOVE = "side to move"  # from the side to move's view (binpack, EPD ce, Parquet)

LABEL_FIELDS = pa.schema([
    ("record", pa.int64()),      # index of the record in its block
    ("depth", pa.int32()),
    ("cp", pa.int32()),
    ("mate", pa.int32()),
    ("best_move", pa.string()),
    ("pv", pa.list_(pa.string())),
    ("nodes", pa.int64()),
    ("result", pa.float32()),    # 1 win, 0.5 draw, 0 loss
    ("engine_id", pa.string()),  # null: the import's engine id
])
POSITION_ROWS = pa.schema([("position_key", pa.uint64()), ("fen", pa.string()),
                           ("game_index", pa.int32()), ("line", pa.int32())])


def label_table(**columns: Sequence[Any] | pa.Array) -> pa.Table:
    """A labels table of :data:`LABEL_FIELDS` from the given columns (the rest null)."""
    size = len(next(iter(columns.values())))
    return pa.table({f.name: pa.array(columns[f.name], f.type) if f.name in columns
                     else pa.nulls(size, f.type) for f in LABEL_FIELDS}, schema=LABEL_FIELDS)


@dataclass
class RecordBlock:
    """One block of a file: ``records`` read (bad ones included), the good ones' FENs (or
    keys), where each one is, their labels and the errors met.

    ``lines`` (1-based line of each record) says where a record is, for the errors
    :func:`resolve` finds; binpack's have precomputed keys and no depths, so it finds none
    there, and the binpack reader's own errors carry ``byte_offset``.
    """

    records: int
    fens: pa.Array | None = None
    lines: pa.Array | None = None
    labels: pa.Table = field(default_factory=LABEL_FIELDS.empty_table)
    view: str = SIDE_TO_MOVE
    errors: list[dict[str, Any]] = field(default_factory=list)
    keys: np.ndarray | None = None        # precomputed (binpack): uint64 keys,
    normalised: pa.Array | None = None    # normalised FENs
    sides: np.ndarray | None = None       # and side to move (0 white, 1 black)


@dataclass
class Rows:
    """A block resolved into warehouse rows (labels without run-wide columns yet)."""

    positions: pa.Table
    labels: pa.Table
    errors: list[dict[str, Any]]
    label_rows: int


def in_depth_range(depths: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Whether each depth is 0 to MAX_DEPTH (:mod:`pipelines.formats.depth`; null where the
    depth is null)."""
    return pc.and_(pc.greater_equal(depths, 0), pc.less_equal(depths, MAX_DEPTH))


def error(kind: str, message: str, line: int | None = None,
          offset: int | None = None) -> dict[str, Any]:
    """An error of a record: its kind, a message quoting the bad value, where it is."""
    return {"kind": kind, "message": message, "line": line, "byte_offset": offset}


def line_of(block: RecordBlock, index: int) -> int | None:
    """The line of record ``index`` of the block (None: its format has no lines)."""
    return block.lines[index].as_py() if block.lines is not None else None


def resolve(block: RecordBlock, engine_id: str, depth: int) -> Rows:
    """Key the block's FENs, record the bad ones, and give its positions and labels rows."""
    errors = list(block.errors)
    if block.keys is None:
        fens = block.fens if block.fens is not None else pa.array([], pa.string())
        keys, normalised, sides, status = fen_keys(fens)
        bad = np.flatnonzero(status)
        for index in bad.tolist():
            errors.append(error("bad_fen", f"{REASONS[status[index]]}: "
                                f"{quoted(fens[index].as_py())}", line_of(block, index)))
    else:
        assert block.normalised is not None and block.sides is not None
        keys, normalised, sides = block.keys, block.normalised, block.sides
        status = np.zeros(len(keys), np.uint8)
    good = status == 0
    positions = position_rows(keys, normalised, block, good)
    labels, bad_depths = checked_depths(block)
    errors.extend(bad_depths)
    labels = label_rows(labels, keys, sides, good, block.view, engine_id, depth)
    return Rows(positions, labels, errors, labels.num_rows)


def checked_depths(block: RecordBlock) -> tuple[pa.Table, list[dict[str, Any]]]:
    """The block's labels without those whose depth is out of range, and an error for each
    of them (a reader that checks its depths leaves none here)."""
    labels = block.labels
    ok = pc.fill_null(in_depth_range(labels.column("depth")), True)
    if pc.all(ok).as_py() is not False:
        return labels, []
    bad = np.flatnonzero(~ok.to_numpy(zero_copy_only=False)).tolist()
    depths, records = labels.column("depth"), labels.column("record")
    errors = [error("bad_depth", depth_problem(depths[i].as_py()) or "",
                    line_of(block, records[i].as_py())) for i in bad]
    return labels.filter(ok), errors


def quoted(text: str | None, limit: int = 120) -> str:
    """A value quoted for a message, its start only when it is long.

    >>> quoted("x" * 300, limit=3)
    "'xxx'... (300 characters)"
    """
    if text is None:
        return "null"
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text):,} characters)"


def position_rows(keys: np.ndarray, normalised: pa.Array, block: RecordBlock,
                  good: np.ndarray) -> pa.Table:
    """(position_key, fen, game_index, line) of the good records, for the PositionSink."""
    lines = block.lines if block.lines is not None else pa.nulls(len(keys), pa.int64())
    table = pa.table({
        "position_key": pa.array(keys, pa.uint64()), "fen": normalised,
        "game_index": pa.nulls(len(keys), pa.int32()),
        "line": pc.cast(lines, pa.int32(), safe=False),
    }, schema=POSITION_ROWS)
    return table if good.all() else table.filter(pa.array(good))


def label_rows(labels: pa.Table, keys: np.ndarray, sides: np.ndarray, good: np.ndarray,
               view: str, engine_id: str, depth: int) -> pa.Table:
    """The labels of good records, with both score views and the record's key."""
    if labels.num_rows == 0:
        return labels.select([]).append_column("position_key", pa.array([], pa.uint64()))
    record = labels.column("record").to_numpy()
    if not good[record].all():
        labels = labels.filter(pa.array(good[record]))
        record = labels.column("record").to_numpy()
    black = pa.array(sides[record] == 1)
    cp, mate = labels.column("cp"), labels.column("mate")
    result = labels.column("result")
    flipped = {"cp": pc.negate(cp), "mate": pc.negate(mate),
               "result": pc.subtract(pa.scalar(1.0, pa.float32()), result)}
    own = {"cp": pc.if_else(black, flipped["cp"], cp),
           "mate": pc.if_else(black, flipped["mate"], mate),
           "result": pc.if_else(black, flipped["result"], result)}
    if view == WHITE:
        score_cp, score_mate, white_cp, white_mate = own["cp"], own["mate"], cp, mate
        stm_result = own["result"]
    else:
        score_cp, score_mate, white_cp, white_mate = cp, mate, own["cp"], own["mate"]
        stm_result = result
    engine = pc.fill_null(labels.column("engine_id"), engine_id)
    depths = pc.fill_null(labels.column("depth"), depth)
    return pa.table({
        "position_key": pa.array(keys[record], pa.uint64()),
        "engine_id": engine, "depth": pc.cast(depths, pa.int32()),
        "score_cp": score_cp, "score_mate": score_mate,
        "white_cp": white_cp, "white_mate": white_mate,
        "best_move": labels.column("best_move"), "pv": labels.column("pv"),
        "nodes": labels.column("nodes"), "result": stm_result,
    })
