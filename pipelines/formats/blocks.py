"""Reading a file's decompressed bytes in large blocks that end at a line (or chunk) boundary.

The importers of text formats (bullet text, Lichess evaluation JSONL) parse a block at a time
with Arrow's vectorised kernels, never a Python frame per line. Each block knows where it
starts (byte offset in the decompressed stream, first line number), so an import that was
killed resumes after its last committed block: :func:`text_blocks` skips to a byte offset
(seeking in a plain file, decompressing and dropping bytes in an archive).

A stream cut short (a truncated ``.zst``, ``.gz``, ``.bz2``) ends the blocks with a
:class:`Cut`: every complete line before the cut was delivered, the partial line after the last
newline is dropped and said so.

>>> import io
>>> blocks = list(text_blocks(io.BytesIO(b"a\\nb\\nc"), block_bytes=3))
>>> [(b.data, b.first_line, b.start, b.end) for b in blocks]
[(b'a\\n', 1, 0, 2), (b'b\\n', 2, 2, 4), (b'c', 3, 4, 5)]
"""
from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np
import zstandard

BLOCK_BYTES = 4 << 20
SKIP_BYTES = 1 << 20
WHITESPACE = np.zeros(256, bool)
WHITESPACE[[9, 10, 11, 12, 13, 32]] = True


@dataclass(frozen=True)
class TextBlock:
    """Complete lines: ``data`` spans bytes [start, end) of the decompressed stream and
    begins with line ``first_line`` (1-based)."""

    data: bytes
    first_line: int
    start: int
    end: int

    @property
    def lines(self) -> int:
        """Lines in the block (a last line without a newline counts)."""
        return self.data.count(b"\n") + (0 if self.data.endswith(b"\n") or not self.data else 1)


@dataclass(frozen=True)
class Cut:
    """Where a stream stopped early: after ``line`` complete lines, at byte ``offset``."""

    line: int
    offset: int
    reason: str
    dropped: int   # bytes of a partial last line that were dropped


class ReadCut(Exception):
    """A read stopped by a cut or corrupt stream (the error's text), after ``data`` came."""

    def __init__(self, data: bytes, cause: BaseException) -> None:
        super().__init__(str(cause) or type(cause).__name__)
        self.data = data


class CutStream(Exception):
    """Raised by :func:`text_blocks` after the last complete line before a cut."""

    def __init__(self, cut: Cut) -> None:
        super().__init__(cut.reason)
        self.cut = cut


def skip_to(stream: BinaryIO, offset: int) -> None:
    """Move ``stream`` to decompressed byte ``offset``: seek when it can, else read and drop."""
    if offset <= 0:
        return
    if isinstance(stream, io.BufferedReader | io.BytesIO) and stream.seekable():
        stream.seek(offset)   # a plain file (an archive's reader is not seekable)
        return
    left = offset
    while left:
        dropped = stream.read(min(left, SKIP_BYTES))
        if not dropped:
            raise EOFError(f"stream ends at byte {offset - left}, before the resume point "
                           f"{offset}")
        left -= len(dropped)


def text_blocks(stream: BinaryIO, start: int = 0, first_line: int = 1,
                block_bytes: int = BLOCK_BYTES) -> Iterator[TextBlock]:
    """Blocks of complete lines of ``stream`` from byte ``start`` (line ``first_line``);
    :class:`CutStream` after the last complete line when the stream is cut."""
    skip_to(stream, start)
    carry, offset, line = b"", start, first_line
    while True:
        try:
            raw = read_some(stream, block_bytes)
        except ReadCut as exc:  # a cut or corrupt archive: the lines before it are kept
            carry += exc.data
            if carry.rfind(b"\n") >= 0:
                block, carry = split_complete(carry)
                yield TextBlock(block, line, offset, offset + len(block))
                offset, line = offset + len(block), line + block.count(b"\n")
            raise CutStream(Cut(line - 1, offset, str(exc), len(carry))) from None
        if not raw:
            break
        data = carry + raw
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            carry = data
            continue
        block, carry = data[:cut], data[cut:]
        yield TextBlock(block, line, offset, offset + len(block))
        offset, line = offset + len(block), line + block.count(b"\n")
    if carry:
        yield TextBlock(carry, line, offset, offset + len(carry))


def read_some(stream: BinaryIO, size: int) -> bytes:
    """Up to ``size`` bytes (fewer only at the end); :class:`ReadCut` with the bytes that
    came before it when the stream is cut or corrupt (a decompressor's error: those bytes
    are good, and the caller keeps what they complete)."""
    read1 = getattr(stream, "read1", None)
    parts: list[bytes] = []
    got = 0
    while got < size:
        try:
            part = read1(size - got) if read1 else stream.read(size - got)
        except (EOFError, OSError, zstandard.ZstdError) as exc:
            raise ReadCut(b"".join(parts), exc) from exc
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def split_complete(data: bytes) -> tuple[bytes, bytes]:
    cut = data.rfind(b"\n") + 1
    return data[:cut], data[cut:]


def line_spans(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) byte offsets of each line of ``data`` (without its newline).

    >>> starts, ends = line_spans(b"ab\\n\\ncd")
    >>> starts.tolist(), ends.tolist()
    ([0, 3, 4], [2, 3, 6])
    """
    newlines = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
    starts = np.concatenate([[0], newlines + 1])
    ends = np.concatenate([newlines, [len(data)]])
    if len(data) and data.endswith(b"\n"):
        starts, ends = starts[:-1], ends[:-1]
    return starts, ends


def blank_lines(data: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """A mask of the lines that hold only whitespace.

    >>> data = b"x\\n \\t\\n\\ny"
    >>> blank_lines(data, *line_spans(data)).tolist()
    [False, True, True, False]
    """
    raw = np.frombuffer(data, np.uint8)
    empty = ends == starts
    first = raw[np.minimum(starts, max(len(raw) - 1, 0))] if len(raw) else np.zeros(0, np.uint8)
    blank = empty.copy()
    # only a line that starts with whitespace can be blank: look at those one by one
    for index in np.flatnonzero(~empty & WHITESPACE[first]).tolist():
        blank[index] = not data[starts[index]:ends[index]].strip()
    return blank
