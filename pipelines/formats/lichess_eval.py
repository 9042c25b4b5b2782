"""The Lichess evaluation database (``lichess_db_eval.jsonl.zst``): one position per line.

Each line is a JSON object (lichess-org/database ``Evals.scala``)::

    {"fen": "<board> <side> <castling> <ep>",
     "evals": [{"pvs": [{"cp": 311, "line": "g7g6 c6d5 ..."}, {"mate": -3, "line": "..."}],
                "knodes": 206765, "depth": 36}, ...]}

``cp`` and ``mate`` are White's; ``line`` is the PV in UCI_Chess960 (castling is the king
taking its own rook, ``e1h1``); ``knodes`` thousands of nodes. Every eval becomes a label at its
depth: the score of its first line (the best), the best move that line's first move, the
line's first 8 moves as the PV (what chesslab's own labels keep), nodes ``1000 * knodes``; the
other lines (MultiPV) are not kept. Castling is stored in standard UCI (``e1g1``), as engines
and python-chess write it (:func:`standard_castling`).

A block is read by a compiled scanner (:mod:`pipelines.formats._lichess_eval`: no Python per
line), straight into the columns of its records and labels. The lines it does not take as
plain (anything unusual: a line that is not JSON, a value of the wrong type, an escape in a
string, an eval without a score, ...) are parsed by Arrow's JSON reader and checked column by
column as before; when Arrow refuses them they are read again line by line, so each bad line
is recorded with its line number and the others are kept.

>>> from pipelines.formats.blocks import TextBlock
>>> data = (b'{"fen": "8/8/8/8/8/8/8/K6k b - -", "evals": [{"pvs": [{"cp": 20, '
...         b'"line": "h1g2 a1b2"}], "knodes": 5, "depth": 20}]}\\nnot json\\n')
>>> block = parse_block(TextBlock(data, 1, 0, len(data)))
>>> block.labels.select(["depth", "cp", "best_move", "nodes"]).to_pylist()
[{'depth': 20, 'cp': 20, 'best_move': 'h1g2', 'nodes': 5000}]
>>> block.errors[0]["line"], block.errors[0]["kind"]
(2, 'bad_json')
"""
from __future__ import annotations

import dataclasses
import io
import json
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson

from pipelines.formats._lichess_eval import scan_block
from pipelines.formats.blocks import TextBlock, blank_lines, line_spans
from pipelines.formats.depth import MAX_DEPTH
from pipelines.formats.records import (
    WHITE,
    RecordBlock,
    error,
    in_depth_range,
    label_table,
    quoted,
)

PV = pa.struct([("cp", pa.int64()), ("mate", pa.int64()), ("line", pa.string())])
EVAL = pa.struct([("pvs", pa.list_(PV)), ("knodes", pa.int64()), ("depth", pa.int64())])
SCHEMA = pa.schema([("fen", pa.string()), ("evals", pa.list_(EVAL))])
PARSE = pajson.ParseOptions(explicit_schema=SCHEMA, unexpected_field_behavior="ignore")
UCI = r"^[a-h][1-8][a-h][1-8][qrbn]?$"
# Arrow parses a block's JSON in pieces of this size on its thread pool (one piece: one core).
JSON_PIECE_BYTES = 1 << 19
PV_MOVES = 8
INT32 = 2**31 - 1
# knodes from 0 to this: 1000 * knodes (the label's nodes) stays an exact integer in an
# int64 and a float64; a negative or larger one was once stored wrapped round.
MAX_KNODES = 2**53 // 1000
# The king taking its own rook from its start square (UCI_Chess960) in standard UCI.
CASTLING_960 = {"e1h1": "e1g1", "e1a1": "e1c1", "e8h8": "e8g8", "e8a8": "e8c8"}


def parse_block(block: TextBlock) -> RecordBlock:
    """The positions and labels of a block of the evaluation database: the plain lines by
    the compiled scanner, the others by :func:`parse_lines`, in line order."""
    scanned = scan_block(block.data, PV_MOVES)
    fast = scanned_records(scanned, block.first_line)
    slow_lines = scanned["slow"]
    if len(slow_lines) == 0:
        return standard_castling(fast)
    starts, ends = line_spans(block.data)
    slow = parse_lines(block.data, starts[slow_lines], ends[slow_lines],
                       block.first_line + slow_lines)
    return standard_castling(merged(fast, slow))


def parse_block_arrow(block: TextBlock) -> RecordBlock:
    """The block read without the scanner: every line by Arrow's JSON reader (the reader
    before the scanner; the baseline of ``benchmarks/formats.py``)."""
    starts, ends = line_spans(block.data)
    solid = np.flatnonzero(~blank_lines(block.data, starts, ends))
    return standard_castling(parse_lines(block.data, starts[solid], ends[solid],
                                         block.first_line + solid))


def standard_castling(block: RecordBlock) -> RecordBlock:
    """The block with its labels' castlings in standard UCI: each PV holding a king's move
    from e1 to h1 or a1 (e8 to h8 or a8) is followed from its FEN, and the king's are
    rewritten; a rook or queen going from e1 to h1 stays as it is."""
    pv = flat(block.labels.column("pv"))
    castles = pc.is_in(pc.list_flatten(pv), value_set=pa.array(list(CASTLING_960)))
    rows = np.unique(pc.list_parent_indices(pv).filter(castles).to_numpy())
    if len(rows) == 0:
        return block
    assert block.fens is not None
    records = block.labels.column("record").to_numpy()[rows]
    fens = block.fens.take(pa.array(records)).to_pylist()
    lines, best = pv.to_pylist(), block.labels.column("best_move").to_pylist()
    for row, fen in zip(rows.tolist(), fens, strict=True):
        lines[row] = standard_line(fen, lines[row])
        best[row] = lines[row][0]
    labels = block.labels.set_column(block.labels.schema.get_field_index("pv"), "pv",
                                     pa.array(lines, pv.type))
    labels = labels.set_column(labels.schema.get_field_index("best_move"), "best_move",
                               pa.array(best, pa.string()))
    return dataclasses.replace(block, labels=labels)


def standard_line(fen: str, moves: list[str]) -> list[str]:
    """The moves of a PV with the kings' castlings in standard UCI, the kings followed from
    the FEN's board.

    >>> standard_line("r3k2r/8/8/8/8/8/8/R3K2R w KQkq -", ["e1h1", "e8a8", "f1e1", "c8b8"])
    ['e1g1', 'e8c8', 'f1e1', 'c8b8']
    >>> standard_line("4k3/8/8/8/8/8/8/K3R3 w - -", ["e1h1"])
    ['e1h1']
    """
    kings = king_squares(fen.split(" ")[0])
    out = []
    for move in moves:
        if move[:2] in kings:
            move = CASTLING_960.get(move, move)
            kings = {move[2:4] if square == move[:2] else square for square in kings}
        out.append(move)
    return out


def king_squares(board: str) -> set[str]:
    """The squares of the kings on a FEN board, as names.

    >>> sorted(king_squares("r3k2r/8/8/8/8/8/8/R3K2R"))
    ['e1', 'e8']
    """
    squares = set()
    for rank, row in zip("87654321", board.split("/"), strict=False):
        file = 0
        for char in row:
            if char.isdigit():
                file += int(char)
                continue
            if char in "Kk":
                squares.add(f"{'abcdefgh'[file % 8]}{rank}")
            file += 1
    return squares


def parse_lines(data: bytes, starts: np.ndarray, ends: np.ndarray,
                numbers: np.ndarray) -> RecordBlock:
    """The records of some lines of ``data`` (none blank; ``numbers`` their line numbers),
    parsed by Arrow's JSON reader, or line by line when it refuses them."""
    text = b"\n".join(data[start:end] for start, end in zip(starts.tolist(), ends.tolist(),
                                                            strict=True))
    table = fast_table(text, len(numbers))
    errors: list[dict[str, Any]] = []
    if table is None:
        spans = line_spans(text)
        table, kept, errors = careful_table(text, *spans, numbers)
        numbers = numbers[kept]
    return records_of(table, pa.array(numbers, pa.int64()), len(starts), errors)


def scanned_records(scanned: dict[str, np.ndarray], first_line: int) -> RecordBlock:
    """The records and labels the compiled scanner read (its ``fast`` lines)."""
    fens = pa.StringArray.from_buffers(
        len(scanned["fast"]), pa.py_buffer(scanned["fen_offsets"].astype(np.int32)),
        pa.py_buffer(scanned["fen_data"]))
    best = pa.StringArray.from_buffers(
        len(scanned["depth"]), pa.py_buffer(scanned["best_offsets"].astype(np.int32)),
        pa.py_buffer(scanned["best_data"]))
    moves = pa.StringArray.from_buffers(
        len(scanned["pv_offsets"]) - 1, pa.py_buffer(scanned["pv_offsets"].astype(np.int32)),
        pa.py_buffer(scanned["pv_data"]))
    pv = pa.ListArray.from_arrays(pa.array(scanned["pv_list_offsets"].astype(np.int32)), moves)
    labels = label_table(
        record=scanned["record"], depth=scanned["depth"],
        cp=pa.array(scanned["cp"], pa.int32(), mask=~scanned["cp_ok"]),
        mate=pa.array(scanned["mate"], pa.int32(), mask=~scanned["mate_ok"]),
        best_move=best, pv=pv,
        nodes=pa.array(scanned["nodes"], pa.int64(), mask=~scanned["nodes_ok"]))
    return RecordBlock(records=len(scanned["fast"]), fens=fens,
                       lines=pa.array(first_line + scanned["fast"], pa.int64()),
                       labels=labels, view=WHITE)


def merged(fast: RecordBlock, slow: RecordBlock) -> RecordBlock:
    """One block of two blocks' records, in line order (the first FEN of a key and the
    first label of a key are the first in the file)."""
    assert fast.fens is not None and fast.lines is not None
    assert slow.fens is not None and slow.lines is not None
    lines = pa.concat_arrays([fast.lines, flat(slow.lines)])
    order = pc.sort_indices(lines).to_numpy()
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    labels = pa.concat_tables([fast.labels, slow.labels.set_column(
        0, "record", pc.add(slow.labels["record"], len(fast.fens)))])
    labels = labels.set_column(0, "record", pa.array(rank[labels["record"].to_numpy()]))
    labels = labels.take(pc.sort_indices(labels, [("record", "ascending")]))
    return RecordBlock(records=fast.records + slow.records,
                       fens=pa.concat_arrays([fast.fens, flat(slow.fens)]).take(order),
                       lines=lines.take(order), labels=labels, view=WHITE,
                       errors=slow.errors)


def fast_table(data: bytes, rows: int) -> pa.Table | None:
    """The block read by Arrow's JSON reader, or None when it refuses it (or finds a number
    of rows other than the block's lines)."""
    if rows == 0:
        return SCHEMA.empty_table()
    try:
        table = pajson.read_json(io.BytesIO(data), parse_options=PARSE,
                                 read_options=pajson.ReadOptions(block_size=JSON_PIECE_BYTES))
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    return table if table.num_rows == rows else None


def careful_table(data: bytes, starts: np.ndarray, ends: np.ndarray,
                  numbers: np.ndarray) -> tuple[pa.Table, np.ndarray, list[dict[str, Any]]]:
    """The block line by line: (table of the good lines, their indexes, errors of the rest)."""
    entries, kept, errors = [], [], []
    for index, (start, end) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        text = data[start:end].decode("utf-8", errors="replace").strip()
        try:
            entry = json.loads(text)
        except ValueError as exc:
            errors.append(error("bad_json", f"not JSON ({exc.args[0].split(':')[0]}): "
                                f"{quoted(text)}", int(numbers[index])))
            continue
        problem = entry_problem(entry)
        if problem:
            errors.append(error(problem[0], f"{problem[1]}: {quoted(text)}", int(numbers[index])))
            continue
        entries.append(entry)
        kept.append(index)
    return pa.Table.from_pylist(entries, schema=SCHEMA), np.array(kept, np.int64), errors


def flat(array: pa.Array | pa.ChunkedArray) -> pa.Array:
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def entry_problem(entry: Any) -> tuple[str, str] | None:
    """(kind, what) when a decoded line does not have the database's shape, else None."""
    if not isinstance(entry, dict):
        return "bad_record", "not a JSON object"
    if not isinstance(entry.get("fen"), str):
        return "bad_fen", "'fen' is not a string"
    evals = entry.get("evals")
    if not isinstance(evals, list):
        return "bad_record", "'evals' is not a list"
    for item in evals:
        if not isinstance(item, dict) or not isinstance(item.get("pvs"), list):
            return "bad_record", "an eval without a 'pvs' list"
        for name in ("knodes", "depth"):
            if name in item and item[name] is not None and not is_integer(item[name]):
                return "bad_score", f"{name} is not a number"
        for pv in item["pvs"]:
            if not isinstance(pv, dict):
                return "bad_record", "a pv is not an object"
            for name in ("cp", "mate"):
                if name in pv and pv[name] is not None and not is_integer(pv[name]):
                    return "bad_score", f"{name} is not a number: {pv[name]!r}"
            if "line" in pv and pv["line"] is not None and not isinstance(pv["line"], str):
                return "bad_move", "a pv's line is not a string"
    return None


def is_integer(value: Any) -> bool:
    """A JSON integer an int64 holds (JSON's true and false are not numbers)."""
    return isinstance(value, int) and not isinstance(value, bool) and -2**63 <= value < 2**63


def records_of(table: pa.Table, numbers: pa.Array, records: int,
               errors: list[dict[str, Any]]) -> RecordBlock:
    """Checked records and their first-line labels; the problems found as errors."""
    evals = table.column("evals").combine_chunks()
    has_evals = pc.fill_null(pc.greater(pc.list_value_length(evals), 0), False)
    fen_ok = pc.is_valid(table.column("fen"))
    for index in np.flatnonzero(~fen_ok.to_numpy(zero_copy_only=False)).tolist():
        errors.append(error("bad_fen", "no 'fen'", numbers[index].as_py()))
    for index in np.flatnonzero(pc.and_(fen_ok, pc.invert(has_evals))
                                .to_numpy(zero_copy_only=False)).tolist():
        errors.append(error("bad_record", f"no evals for {quoted(table['fen'][index].as_py())}",
                            numbers[index].as_py()))
    good = pc.and_(fen_ok, has_evals)
    table, numbers = table.filter(good), numbers.filter(good)
    labels, label_errors = eval_labels(table.column("evals").combine_chunks(), numbers)
    return RecordBlock(records=records, fens=table.column("fen").combine_chunks(),
                       lines=numbers, labels=labels, view=WHITE,
                       errors=sorted(errors + label_errors, key=lambda e: e["line"]))


def eval_labels(evals: pa.Array, numbers: pa.Array) -> tuple[pa.Table, list[dict[str, Any]]]:
    """One label per eval (its first pv), and an error for each eval that gives none."""
    parent = pc.list_parent_indices(evals)
    flat = pc.list_flatten(evals)
    pvs, knodes, depth = (pc.struct_field(flat, name) for name in ("pvs", "knodes", "depth"))
    has_pv = pc.fill_null(pc.greater(pc.list_value_length(pvs), 0), False)
    first = pc.list_element(pc.if_else(has_pv, pvs, pa.scalar([{"line": ""}], pvs.type)), 0)
    cp, mate, line = (pc.struct_field(first, name) for name in ("cp", "mate", "line"))
    pv = pc.utf8_split_whitespace(pc.fill_null(line, ""))
    best = pc.list_element(pc.if_else(pc.greater(pc.list_value_length(pv), 0), pv,
                                      pa.scalar([""], pv.type)), 0)
    one_score = pc.xor(pc.is_valid(cp), pc.is_valid(mate))
    in_range = pc.and_(within_32_bits(cp), within_32_bits(mate))
    checks = [
        (has_pv, "bad_record", "an eval without pvs"),
        (pc.is_valid(depth), "bad_record", "an eval without a depth"),
        (in_depth_range(depth), "bad_depth", f"an eval whose depth is not 0 to {MAX_DEPTH}"),
        (pc.or_kleene(pc.is_null(knodes), pc.and_(pc.greater_equal(knodes, 0),
                                                  pc.less_equal(knodes, MAX_KNODES))),
         "bad_score", f"an eval whose knodes is not 0 to {MAX_KNODES:,}"),
        (pc.and_(one_score, in_range), "bad_score", "a pv needs one of cp or mate, a number"),
        (pc.match_substring_regex(best, UCI), "bad_move", "a pv's first move is not UCI"),
    ]
    ok = pa.array(np.ones(len(flat), bool))
    problems: list[dict[str, Any]] = []
    for passed, kind, what in checks:
        failed = pc.and_(ok, pc.invert(pc.fill_null(passed, False)))
        for index in np.flatnonzero(failed.to_numpy(zero_copy_only=False)).tolist():
            row = parent[index].as_py()
            problems.append(error(kind, f"{what} (eval {index_in_list(parent, index)} at depth "
                                  f"{depth[index].as_py()}: {quoted(json.dumps(flat[index].as_py()))})",
                                  numbers[row].as_py()))
        ok = pc.and_(ok, pc.fill_null(passed, False))
    keep = ok
    labels = label_table(
        record=pc.cast(parent.filter(keep), pa.int64()), depth=pc.cast(depth.filter(keep), pa.int32()),
        cp=pc.cast(cp.filter(keep), pa.int32()), mate=pc.cast(mate.filter(keep), pa.int32()),
        best_move=best.filter(keep), pv=pc.list_slice(pv.filter(keep), 0, PV_MOVES),
        nodes=pc.multiply(knodes.filter(keep), 1000))
    return labels, problems


def within_32_bits(values: pa.Array) -> pa.Array:
    """Whether each value is null or within +-(2**31 - 1) (no abs: it wraps at -2**63)."""
    filled = pc.fill_null(values, 0)
    return pc.and_(pc.greater_equal(filled, -INT32), pc.less_equal(filled, INT32))


def index_in_list(parent: pa.Array, index: int) -> int:
    """The position of flattened element ``index`` within its own list."""
    row = parent[index].as_py()
    first = index
    while first > 0 and parent[first - 1].as_py() == row:
        first -= 1
    return index - first
