"""Binpack files, block by block: positions and labels from the compiled decoder, entries
written by the compiled writer, and the score units of both sides.

A binpack score is Stockfish's internal evaluation, not centipawns: nnue-pytorch's loader
turns it into centipawns as ``100 * score / 208`` (``training_data_entry.h``), and so do we
(rounded); writing multiplies back, so an export read again gives the same centipawns.
Scores at or beyond Stockfish's mate bound (``32000 - 246``) are mates: ``32000 - score``
plies. ``VALUE_NONE`` (32002) is no score.

>>> centipawns(np.array([208, -104, 31999, -31990, 32002], np.int16))
(array([100, -50, None, None, None], dtype=object), array([None, None, 1, -5, None], dtype=object))
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

import numpy as np
import pyarrow as pa

from pipelines.formats.binpack import MAGIC, MAX_CHUNK_BYTES, decode_chunk
from pipelines.formats.blocks import ReadCut, read_some, skip_to
from pipelines.formats.records import SIDE_TO_MOVE, RecordBlock, error, label_table

READ_BYTES = 1 << 20         # bytes_left's reads
PAWN_VALUE = 208            # nnue-pytorch: centipawns = 100 * score / 208
VALUE_MATE = 32000
MATE_BOUND = VALUE_MATE - 246   # Stockfish's VALUE_MATE_IN_MAX_PLY
HEADER_BYTES = 8


def centipawns(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(centipawns or None, moves to mate or None) of binpack scores."""
    values = scores.astype(np.int64)
    size = np.abs(values)
    cp = np.rint(values * 100 / PAWN_VALUE).astype(np.int64).astype(object)
    cp[size >= MATE_BOUND] = None
    moves = (VALUE_MATE - size + 1) // 2
    mate = np.where(values > 0, moves, -moves).astype(object)
    mate[(size < MATE_BOUND) | (size > VALUE_MATE)] = None
    return cp, mate


def binpack_scores(cp: np.ndarray) -> np.ndarray:
    """Binpack scores (int16) of side-to-move centipawns.

    >>> binpack_scores(np.array([100, -50, 12])).tolist()
    [208, -104, 25]
    """
    return np.clip(np.rint(np.asarray(cp, np.float64) * PAWN_VALUE / 100), -MATE_BOUND + 1,
                   MATE_BOUND - 1).astype(np.int16)


def binpack_results(result: np.ndarray) -> np.ndarray:
    """-1, 0, 1 of side-to-move results 0, 0.5, 1."""
    return np.rint(np.asarray(result, np.float64) * 2 - 1).astype(np.int8)


def chunk_blocks(stream: BinaryIO, start: int = 0) -> Iterator[tuple[RecordBlock, int]]:
    """(records of one block, the byte offset just after it) for each block from ``start``.

    A block whose header is not ``BINP`` or whose size is impossible ends the reading (an
    error says where and how many bytes were left unread); a block cut short is decoded as
    far as its bytes go.
    """
    skip_to(stream, start)
    at = start
    while True:
        header, cut = read_or_cut(stream, HEADER_BYTES)
        if cut is not None and len(header) < HEADER_BYTES:   # a cut archive, in a header
            yield RecordBlock(records=0, errors=[error(
                "truncated", f"stream ends at byte {at + len(header)}, inside the header of "
                f"a block at byte {at}: {cut}", offset=at)]), at + len(header)
            return
        if not header:
            return
        size = int.from_bytes(header[4:8], "little")     # a short header is refused below
        if header[:4] != MAGIC or len(header) < HEADER_BYTES or size > MAX_CHUNK_BYTES:
            rest = len(header) + bytes_left(stream)
            yield RecordBlock(records=0, errors=[error(
                "bad_chunk", f"no binpack block at byte {at} (header {header!r}): the "
                f"{rest} bytes from there on are not read", offset=at)]), at + rest
            return
        data, cut = read_or_cut(stream, size)
        block = records_of(data, at + HEADER_BYTES)
        if len(data) < size:
            block.errors.append(error("truncated", f"block at byte {at} is cut: "
                                      f"{len(data)} of its {size} bytes are in the file"
                                      + (f" ({cut})" if cut else ""), offset=at))
        at += HEADER_BYTES + len(data)
        yield block, at
        if len(data) < size:
            return


def read_or_cut(stream: BinaryIO, size: int) -> tuple[bytes, str | None]:
    """(up to ``size`` bytes, None), or (the bytes before a cut or corrupt archive, its
    error)."""
    try:
        return read_some(stream, size), None
    except ReadCut as exc:
        return exc.data, str(exc)


def bytes_left(stream: BinaryIO) -> int:
    """The bytes left in ``stream`` (up to a cut), read a block at a time."""
    count = 0
    while True:
        data, cut = read_or_cut(stream, READ_BYTES)
        count += len(data)
        if len(data) < READ_BYTES or cut is not None:
            return count


def records_of(data: bytes, base: int) -> RecordBlock:
    """The entries of one block's data as records: positions (already keyed) and labels."""
    entries = decode_chunk(np.frombuffer(data, np.uint8), base)
    columns = entries.columns()
    count = len(columns["key"])
    cp, mate = centipawns(columns["score"])
    moves = columns["move"]
    labels = label_table(
        record=np.arange(count), cp=pa.array(cp, pa.int32()), mate=pa.array(mate, pa.int32()),
        best_move=moves, result=(columns["result"].astype(np.float32) + 1) / 2)
    errors = [error(kind, message, offset=offset) for offset, kind, message in entries.errors]
    return RecordBlock(records=count, keys=columns["key"], normalised=columns["fen"],
                       sides=columns["side"], labels=labels, view=SIDE_TO_MOVE, errors=errors)
