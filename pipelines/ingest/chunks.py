"""A PGN source as chunks of games, for the workers.

The text is read in blocks, decoded as :mod:`pipelines.ingest.sources` says (UTF-8, else
Latin-1/cp1252 from the first byte that is not UTF-8; a BOM dropped), its line ends translated
as universal newlines do (``\\r\\n`` and ``\\r`` become ``\\n``), and cut into games by the
compiled :class:`pipelines.ingest._pgn.Splitter`, which applies
:func:`pipelines.ingest.pgn.split_games`' rules to bytes: a chunk is three bytes objects (the
games' text and their records), so nothing is built per line or per game in the main process,
and a line of any length is held once. Without the compiled module, the Python reader's
:class:`RawGame` lists are the chunks.

>>> raw = raw_games(chunk_of('[Event "x"]\\n\\n1. e4 e5 1-0\\n'))
>>> raw[0].tag_lines, raw[0].movetext
([(1, '[Event "x"]\\n')], '1. e4 e5 1-0\\n')
"""
from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import zstandard

from pipelines.ingest.pgn import CutStream, Problem, RawGame, split_games, unclosed_comment
from pipelines.ingest.sources import (
    ReadPosition,
    SourceFile,
    TextDecoder,
    TruncatedInput,
    open_binary,
    read_lines,
    refuse_binary,
)

log = logging.getLogger(__name__)

_pgn: Any
try:
    from pipelines.ingest import _pgn
except ImportError as exc:  # not built: the Python reader reads every game
    log.debug("pipelines.ingest._pgn unavailable (%s); using the Python PGN reader", exc)
    _pgn = None

# Decoded text is fed to the splitter in blocks of this many bytes.
BLOCK_BYTES = 1 << 18
# A chunk holds at most this much text (unless one game is bigger): memory per chunk in flight.
CHUNK_BYTES = 8 << 20

Chunk = tuple[bytes, bytes, bytes]


def compiled() -> bool:
    """Whether the compiled reader is built."""
    return _pgn is not None


class TextBlocks:
    """The decoded text of a source in blocks, line ends translated; ``encoding`` says how it
    was decoded once read. A cut or corrupt archive raises :class:`TruncatedInput` after the
    text before it."""

    def __init__(self, source: SourceFile, block_bytes: int = BLOCK_BYTES,
                 position: ReadPosition | None = None) -> None:
        self.source, self.block_bytes = source, block_bytes
        self.decoder = TextDecoder()
        self.position = position

    @property
    def encoding(self) -> str:
        return self.decoder.encoding

    def __iter__(self) -> Iterator[str]:
        with open_binary(self.source, self.position) as binary:
            try:
                yield from self.decoded(binary)
            except (EOFError, zstandard.ZstdError, OSError) as exc:
                if isinstance(exc, TruncatedInput):
                    raise
                raise TruncatedInput(f"{self.source.compression} stream: {exc}") from None

    def decoded(self, binary: Any) -> Iterator[str]:
        block = binary.read1(self.block_bytes)
        refuse_binary(str(self.source.path), block)
        held = ""   # a last carriage return: the next block may start with its line feed
        while True:
            final = not block
            text = held + self.decoder.decode(block, final=final)
            held = ""
            if text.endswith("\r") and not final:
                text, held = text[:-1], "\r"
            if "\r" in text:
                text = text.replace("\r\n", "\n").replace("\r", "\n")
            if text:
                yield text
            if final:
                return
            block = binary.read1(self.block_bytes)


class PgnChunks:
    """The games of a PGN source in chunks of ``chunk_games`` (compiled chunks or RawGame
    lists). A stream that fails stops the chunks after the complete games before the failure
    (the game being read is dropped) and leaves :class:`CutStream` in ``cut``."""

    def __init__(self, source: SourceFile, chunk_games: int,
                 chunk_bytes: int = CHUNK_BYTES) -> None:
        self.source, self.chunk_games, self.chunk_bytes = source, chunk_games, chunk_bytes
        self.cut: CutStream | None = None
        self.encoding = ""
        self.position = ReadPosition()     # how far into the file: the progress

    def __iter__(self) -> Iterator[Chunk | list[RawGame]]:
        if _pgn is None:
            return self.python_chunks()
        return self.compiled_chunks()

    def compiled_chunks(self) -> Iterator[Chunk]:
        splitter = _pgn.Splitter(self.chunk_games, self.chunk_bytes)
        blocks = TextBlocks(self.source, position=self.position)
        try:
            for block in blocks:
                splitter.feed(block)
                yield from splitter.chunks()
            splitter.finish()
        except OSError as exc:  # the text source failed: a cut or corrupt archive
            self.cut = CutStream(splitter.line, splitter.games, exc)
            splitter.abandon()
        self.encoding = blocks.encoding
        yield from splitter.chunks()

    def python_chunks(self) -> Iterator[list[RawGame]]:
        chunk: list[RawGame] = []
        lines = read_lines(self.source, self.position)
        try:
            for game in split_games(lines):
                chunk.append(game)
                if len(chunk) == self.chunk_games:
                    yield chunk
                    chunk = []
        except CutStream as exc:
            self.cut = exc
        self.encoding = lines.encoding
        if chunk:
            yield chunk


def chunk_of(text: str, chunk_games: int = 1 << 30) -> Chunk | list[RawGame]:
    """The games of ``text`` as one chunk (for tests and small inputs)."""
    if _pgn is None:
        return list(split_games(text.splitlines(keepends=True)))
    splitter = _pgn.Splitter(chunk_games)
    splitter.feed(text.replace("\r\n", "\n").replace("\r", "\n"))
    splitter.finish()
    chunks = splitter.chunks()
    return chunks[0] if chunks else (b"", b"", b"")


def raw_games(chunk: Chunk | list[RawGame]) -> list[RawGame]:
    """A chunk's games as the Python reader's :class:`RawGame` (the same games it cuts)."""
    if isinstance(chunk, list):
        return chunk
    reader = _pgn.ChunkReader(chunk)
    games = []
    for i in range(reader.count):
        index, line, _, _, _, _, body_line, ended_by_tags, opened, next_game = reader.record(i)
        problems: list[Problem] = [unclosed_comment(opened, next_game)] if opened else []
        games.append(RawGame(index, line, reader.tag_lines_of(i, newline=True),
                             reader.movetext(i), body_line, problems, bool(ended_by_tags)))
    return games
