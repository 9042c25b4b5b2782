"""Plain text training data as bullet and marlinflow read it: one position per line.

Two spellings are read (``bulletformat``'s README and bullet's early README):

- ``<FEN> | <score> | <result>`` (bullet, marlinflow);
- ``<FEN> [<result>] <score>`` or ``<FEN> <score> [<result>]`` (the bracketed variant).

``score`` is White's, in centipawns (an integer); ``result`` is White's: ``1.0`` win, ``0.5``
draw, ``0.0`` loss (``1``, ``0``, ``1-0``, ``0-1`` and ``1/2-1/2`` are read too). The FEN may
lack its move counters. Blank lines and lines starting with ``#`` are skipped. Writing gives
the first spelling, with the full FEN, as bullet-utils ``convert --from text`` reads it.

>>> block = parse_block(TextBlock(b"8/8/8/8/8/8/8/K6k w - - 0 1 | 25 | 0.5\\nbad line\\n",
...                               1, 0, 42))
>>> block.records, block.fens.to_pylist(), block.labels.column("cp").to_pylist()
(2, ['8/8/8/8/8/8/8/K6k w - - 0 1'], [25])
>>> block.errors[0]["line"], block.errors[0]["kind"]
(2, 'bad_record')
"""
from __future__ import annotations

from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipelines.formats.blocks import TextBlock
from pipelines.formats.records import WHITE, RecordBlock, error, label_table, quoted

BRACKET_RESULT_LAST = r"^(?P<fen>.+?)\s+(?P<score>\S+)\s+\[(?P<result>[^\]]*)\]$"
BRACKET_RESULT_FIRST = r"^(?P<fen>.+?)\s+\[(?P<result>[^\]]*)\]\s+(?P<score>\S+)$"
SCORE = r"^[-+]?[0-9]{1,9}$"
RESULTS = {"1.0": 1.0, "1": 1.0, "1-0": 1.0, "0.5": 0.5, ".5": 0.5, "1/2-1/2": 0.5,
           "0.0": 0.0, "0": 0.0, "0-1": 0.0}
NUMERIC_RESULT = r"^(1(\.0+)?|0(\.0+)?|0?\.50*)$"


def text_lines(block: TextBlock) -> tuple[pa.Array, pa.Array]:
    """(stripped lines, their line numbers) of a block; the empty text after its last newline
    is a line too (blank, as the reader skips them)."""
    text = block.data.decode("utf-8", errors="replace")
    lines = pc.list_flatten(pc.split_pattern(pa.array([text]), "\n"))
    numbers = pa.array(np.arange(block.first_line, block.first_line + len(lines)), pa.int64())
    return pc.utf8_trim_whitespace(lines), numbers


def parse_block(block: TextBlock) -> RecordBlock:
    """The records of a block of text training data."""
    lines, numbers = text_lines(block)
    keep = pc.and_(pc.not_equal(pc.utf8_length(lines), 0),
                   pc.invert(pc.starts_with(lines, "#")))
    lines, numbers = lines.filter(keep), numbers.filter(keep)
    fen, score, result = split_fields(lines)
    errors: list[dict[str, Any]] = []
    # never null: a line with a FEN has a score and a result (both spellings give the three)
    shaped = pc.is_valid(fen)
    score_ok = pc.and_kleene(shaped, pc.match_substring_regex(score, SCORE))
    result_value = parse_results(result)
    result_ok = pc.and_kleene(shaped, pc.is_valid(result_value))
    for index in np.flatnonzero(~shaped.to_numpy(zero_copy_only=False)).tolist():
        errors.append(error("bad_record", f"expected 'FEN | score | result' or 'FEN [result] "
                            f"score', got {quoted(lines[index].as_py())}",
                            numbers[index].as_py()))
    bad_score = pc.and_(shaped, pc.invert(score_ok))
    for index in np.flatnonzero(bad_score.to_numpy(zero_copy_only=False)).tolist():
        errors.append(error("bad_score", f"score is not a whole number of centipawns: "
                            f"{quoted(score[index].as_py())}", numbers[index].as_py()))
    bad_result = pc.and_(score_ok, pc.invert(result_ok))
    for index in np.flatnonzero(bad_result.to_numpy(zero_copy_only=False)).tolist():
        errors.append(error("bad_result", f"result is not 1.0, 0.5 or 0.0: "
                            f"{quoted(result[index].as_py())}", numbers[index].as_py()))
    good = pc.and_(score_ok, result_ok)
    fens = fen.filter(good)
    labels = label_table(record=np.arange(len(fens)),
                         cp=pc.cast(pc.utf8_ltrim(score.filter(good), "+"), pa.int32()),
                         result=pc.cast(result_value.filter(good), pa.float32()))
    return RecordBlock(records=len(lines), fens=fens, lines=numbers.filter(good),
                       labels=labels, view=WHITE, errors=sorted(errors, key=lambda e: e["line"]))


def split_fields(lines: pa.Array) -> tuple[pa.Array, pa.Array, pa.Array]:
    """(FEN, score, result) text of each line; null where the line has neither shape."""
    parts = pc.split_pattern(lines, "|")
    piped = pc.equal(pc.list_value_length(parts), 3)
    safe = pc.if_else(piped, parts, pa.scalar(["", "", ""], parts.type))
    none = pa.scalar(None, pa.string())
    fields = [pc.if_else(piped, pc.utf8_trim_whitespace(pc.list_element(safe, i)), none)
              for i in range(3)]
    has_pipe = pc.match_substring(lines, "|")
    if pc.all(has_pipe).as_py() is not False:
        return fields[0], fields[1], fields[2]
    # the bracketed spelling (regular expressions cost ten times the split: only when needed)
    last = pc.extract_regex(lines, BRACKET_RESULT_LAST)
    first = pc.extract_regex(lines, BRACKET_RESULT_FIRST)
    out = []
    for index, name in enumerate(("fen", "score", "result")):
        bracket = pc.coalesce(pc.struct_field(first, name), pc.struct_field(last, name))
        out.append(pc.if_else(has_pipe, fields[index], bracket))
    return out[0], out[1], out[2]


def parse_results(result: pa.Array) -> pa.Array:
    """Each result as 1.0, 0.5 or 0.0 (White's view); null when it is none of them."""
    known = pa.array(list(RESULTS), pa.string())
    values = pa.array(list(RESULTS.values()), pa.float64())
    index = pc.index_in(result, value_set=known)
    mapped = pc.take(values, index)
    numeric = pc.match_substring_regex(result, NUMERIC_RESULT)
    parsed = pc.cast(pc.if_else(numeric, result, pa.scalar(None, pa.string())), pa.float64())
    return pc.coalesce(mapped, parsed)


def text_lines_of(fens: pa.Array, white_cp: pa.Array, white_result: pa.Array) -> pa.Array:
    """``FEN | score | result`` lines (no newline) for full FENs and White's scores/results.

    >>> text_lines_of(pa.array(["8/8/8/8/8/8/8/K6k b - - 0 1"]), pa.array([-7]),
    ...               pa.array([0.5])).to_pylist()
    ['8/8/8/8/8/8/8/K6k b - - 0 1 | -7 | 0.5']
    """
    results = pc.if_else(pc.equal(white_result, 1.0), "1.0",
                         pc.if_else(pc.equal(white_result, 0.0), "0.0", "0.5"))
    return pc.binary_join_element_wise(fens, pc.cast(white_cp, pa.string()), results, " | ")


def write_lines(out: BinaryIO, lines: pa.Array) -> None:
    """Write lines, each followed by a newline."""
    if len(lines):
        out.write(("\n".join(lines.to_pylist()) + "\n").encode())
