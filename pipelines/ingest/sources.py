"""Finding the files to ingest and reading them as streams of text lines.

Paths may be files, folders (searched recursively) or globs. The format comes from the suffix:

>>> describe(Path("games/lichess_2013-01.pgn.zst"))
('pgn', 'zst')
>>> describe(Path("suites/wac.epd"))
('epd', 'none')

Compressed files are decompressed as they are read, never whole. A truncated archive raises
:class:`TruncatedInput` at the cut, after every line before it has been delivered.
"""
from __future__ import annotations

import bz2
import glob
import gzip
import hashlib
import io
import logging
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import zstandard

from pipelines.ingest.config import IngestError

log = logging.getLogger(__name__)

FORMATS = {".pgn": "pgn", ".epd": "epd", ".fen": "fen", ".txt": "fen"}
COMPRESSIONS = {".zst": "zst", ".zstd": "zst", ".gz": "gz", ".bz2": "bz2"}
GLOB_CHARS = frozenset("*?[")
READ_BYTES = 1 << 20


class TruncatedInput(OSError):
    """A compressed stream ended before its end marker (a cut or corrupt archive)."""


@dataclass(frozen=True)
class SourceFile:
    """One file to ingest: its path, format (pgn, epd, fen) and compression."""

    path: Path
    format: str
    compression: str

    @property
    def size_bytes(self) -> int:
        return self.path.stat().st_size


def describe(path: Path) -> tuple[str, str] | None:
    """(format, compression) from the suffixes, or None when the suffix is not ingestible."""
    suffixes = [s.lower() for s in path.suffixes[-2:]]
    compression = COMPRESSIONS.get(suffixes[-1]) if suffixes else None
    if compression:
        suffixes = suffixes[:-1]
    fmt = FORMATS.get(suffixes[-1]) if suffixes else None
    return (fmt, compression or "none") if fmt else None


def discover_sources(paths: Iterable[str | os.PathLike[str]]) -> list[SourceFile]:
    """Every ingestible file named by ``paths``, in order, each once; IngestError on a bad path.

    A folder contributes its ingestible files (recursively, sorted; ``.txt`` FEN lists only
    when named or globbed); a named file with an unknown suffix, a missing path, an unreadable
    file or a glob matching nothing is an error.
    """
    found: dict[Path, SourceFile] = {}
    for raw in paths:
        for source in expand(str(raw)):
            found.setdefault(source.path, source)
    for source in found.values():
        check_readable(source.path)
    return list(found.values())


def expand(raw: str) -> list[SourceFile]:
    path = Path(raw).expanduser()
    if path.is_dir():
        return [s for p in sorted(path.rglob("*"))
                if p.is_file() and not is_plain_text(p) and (s := source_for(p))]
    if path.exists():
        return [named_file(path)]
    if GLOB_CHARS & set(raw):
        matches = sorted(glob.glob(os.path.expanduser(raw), recursive=True))
        sources = [s for m in matches for s in expand(m) if s]
        if not sources:
            raise IngestError(f"no ingestible files match {raw!r}")
        return sources
    raise IngestError(f"cannot read {raw!r}: no such file or directory")


def is_plain_text(path: Path) -> bool:
    """``.txt`` files are FEN lists only when named (a folder's notes.txt is no FEN list)."""
    return path.name.lower().endswith(".txt")


def named_file(path: Path) -> SourceFile:
    source = source_for(path)
    if source is None:
        raise IngestError(
            f"cannot ingest {str(path)!r}: unknown format (expected .pgn, .epd, .fen or .txt, "
            f"optionally .zst/.gz/.bz2)")
    return source


def source_for(path: Path) -> SourceFile | None:
    kind = describe(path)
    return SourceFile(path.absolute(), *kind) if kind else None


def check_readable(path: Path) -> None:
    try:
        with open(path, "rb") as handle:
            handle.read(1)
    except OSError as exc:
        raise IngestError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from None


def sha256_of(path: Path) -> str:
    """The hex SHA-256 of the file's bytes (its source_id)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(READ_BYTES):
            digest.update(block)
    return digest.hexdigest()


class ZstdReader(io.RawIOBase):
    """Streaming zstd decompression across frames that notices a cut archive.

    ``zstandard``'s own stream reader returns a silent short read when the input stops in
    the middle of a frame; this one raises :class:`TruncatedInput` there instead.
    """

    def __init__(self, raw: BinaryIO) -> None:
        super().__init__()
        self._raw = raw
        self._dctx = zstandard.ZstdDecompressor()
        self._frame = self._dctx.decompressobj()
        self._in_frame = False
        self._pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while not self._pending:
            block = self._raw.read(READ_BYTES)
            if not block:
                if self._in_frame:
                    raise TruncatedInput("zstd stream ended in the middle of a frame")
                return 0
            self._pending = self._decompress(block)
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size

    def _decompress(self, block: bytes) -> bytes:
        out = []
        while block:
            try:
                out.append(self._frame.decompress(block))
            except zstandard.ZstdError as exc:
                raise TruncatedInput(f"corrupt zstd data: {exc}") from None
            self._in_frame = not self._frame.eof
            block = self._frame.unused_data if self._frame.eof else b""
            if self._frame.eof:
                self._frame = self._dctx.decompressobj()
        return b"".join(out)


def open_binary(source: SourceFile) -> BinaryIO:
    """The decompressed bytes of a source, as a stream."""
    raw = open(source.path, "rb")
    if source.compression == "zst":
        reader = io.BufferedReader(ZstdReader(raw), buffer_size=READ_BYTES)
        return reader  # type: ignore[return-value]
    if source.compression == "gz":
        return gzip.GzipFile(fileobj=raw)  # type: ignore[return-value]
    if source.compression == "bz2":
        return bz2.BZ2File(raw)  # type: ignore[return-value]
    return raw


def read_lines(source: SourceFile) -> Iterator[str]:
    """The lines of a source (universal newlines, UTF-8 with bad bytes replaced).

    Raises :class:`TruncatedInput` at a cut, after yielding every complete line before it.
    """
    with open_binary(source) as binary:
        text = io.TextIOWrapper(binary, encoding="utf-8", errors="replace", newline=None)
        try:
            yield from text
        except (EOFError, zstandard.ZstdError, OSError) as exc:
            if isinstance(exc, TruncatedInput):
                raise
            raise TruncatedInput(f"{source.compression} stream: {exc}") from None
