"""Reading a decompressed stream in blocks of complete lines (text, JSONL) or of bytes
(binpack): reads as long as asked however the stream gives them, a resume point reached by
seeking or by reading, and a stream that breaks (a cut or corrupt archive) keeping every
complete line before the break and saying where and why."""
from __future__ import annotations

import io

import pytest


class CutAfter(io.RawIOBase):
    """A decompressed stream that gives ``data`` (a few bytes a read) and then fails as a
    cut archive's decompressor does."""

    def __init__(self, data: bytes, error: BaseException) -> None:
        self.data, self.error, self.at = data, error, 0

    def readable(self) -> bool:
        return True

    def read1(self, size: int = -1) -> bytes:
        if self.at >= len(self.data):
            raise self.error
        part = self.data[self.at:self.at + min(size, 5)]
        self.at += len(part)
        return part


@pytest.mark.parametrize(("data", "block_bytes", "blocks", "cut"), [
    (b"a\nb\nc", 1 << 20, [(b"a\nb\n", 1, 0, 4)], (2, 4, 1)),
    # reads of 3: the cut read's bytes complete the line the read before began
    (b"a\nb\nc", 3, [(b"a\n", 1, 0, 2), (b"b\n", 2, 2, 4)], (2, 4, 1)),
    # the cut read's bytes begin with a newline: it ends an empty line
    (b"ab\n\nx", 3, [(b"ab\n", 1, 0, 3), (b"\n", 2, 3, 4)], (2, 4, 1))])
def test_a_text_stream_cut_keeps_its_complete_lines_and_says_why(
        data: bytes, block_bytes: int, blocks: list[tuple[bytes, int, int, int]],
        cut: tuple[int, int, int]) -> None:
    """Blocks of the complete lines before the break (bytes, first line, start, end), then
    where it broke: after which line, at which byte, why, and the partial line's bytes."""
    from pipelines.formats.blocks import Cut, CutStream, TextBlock, text_blocks

    read = text_blocks(CutAfter(data, OSError("corrupt")), block_bytes=block_bytes)
    assert [next(read) for _ in blocks] == [TextBlock(*block) for block in blocks]
    with pytest.raises(CutStream) as raised:
        next(read)
    assert raised.value.cut == Cut(cut[0], cut[1], "corrupt", cut[2])
    assert str(raised.value) == "corrupt"


def test_lines_longer_than_a_read_and_a_last_line_without_a_newline() -> None:
    from pipelines.formats.blocks import TextBlock, text_blocks

    blocks = list(text_blocks(io.BytesIO(b"abcdef\ngh"), block_bytes=3))
    assert blocks == [TextBlock(b"abcdef\n", 1, 0, 7), TextBlock(b"gh", 2, 7, 9)]
    blocks = list(text_blocks(io.BytesIO(b"abcdef\ngh"), start=4, first_line=9,
                              block_bytes=3))
    assert blocks == [TextBlock(b"ef\n", 9, 4, 7), TextBlock(b"gh", 10, 7, 9)]


class ReadOnly:
    """A stream with ``read`` only (no ``read1``), giving at most 5 bytes a call, and not
    seekable (as an archive's reader)."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def read(self, size: int = -1) -> bytes:
        part = self.data[self.at:self.at + min(size, 5)]
        self.at += len(part)
        return part

    def seekable(self) -> bool:
        return False


def test_a_read_is_as_long_as_asked_however_the_stream_gives_it() -> None:
    from pipelines.formats.blocks import read_some

    data = bytes(range(16))
    assert read_some(CutAfter(data, EOFError()), 8) == data[:8]
    assert read_some(CutAfter(data[:8], EOFError()), 8) == data[:8]   # the break: next read's
    stream = ReadOnly(data)
    assert read_some(stream, 8) == data[:8] and read_some(stream, 100) == data[8:]


@pytest.mark.parametrize("offset", [0, 1, 9, 10])
def test_a_resumed_archive_is_read_on_from_its_byte(monkeypatch: pytest.MonkeyPatch,
                                                    offset: int) -> None:
    """An archive's reader cannot seek: its bytes before the resume point are read (here 4
    at a time) and dropped; a resume point past its end says where it ended."""
    from pipelines.formats import blocks

    monkeypatch.setattr(blocks, "SKIP_BYTES", 4)
    data = bytes(range(10))
    stream = ReadOnly(data)
    blocks.skip_to(stream, offset)       # type: ignore[arg-type]
    assert b"".join(iter(lambda: stream.read(100), b"")) == data[offset:]
    with pytest.raises(EOFError) as raised:
        blocks.skip_to(ReadOnly(data), 12)       # type: ignore[arg-type]
    assert str(raised.value) == "stream ends at byte 10, before the resume point 12"
