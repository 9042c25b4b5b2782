"""Finding the files to ingest and reading them as streams of text lines.

Paths may be files, folders (searched recursively) or globs. The format comes from the suffix:

>>> describe(Path("games/lichess_2013-01.pgn.zst"))
('pgn', 'zst')
>>> describe(Path("suites/wac.epd"))
('epd', 'none')

Compressed files are decompressed as they are read, never whole. A truncated archive raises
:class:`TruncatedInput` at the cut, after every line before it has been delivered.

Text is UTF-8 (with or without a BOM) until the first byte that is not UTF-8; from that byte on
the file is read as Latin-1, the encoding the PGN standard specifies, with the bytes 0x80-0x9F
that Windows-1252 prints read as cp1252 does (:class:`TextDecoder` records which). Nothing is
read twice, so streaming stays streaming; when everything before that byte is ASCII (the usual
case) this equals reading the whole file in the 8-bit encoding, and when it is not (a file
that mixes encodings) each part is read in its own.
"""
from __future__ import annotations

import bz2
import codecs
import glob
import gzip
import io
import logging
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import BinaryIO

import zstandard

from pipelines.ingest.config import IngestError

log = logging.getLogger(__name__)

FORMATS = {".pgn": "pgn", ".epd": "epd", ".fen": "fen", ".txt": "fen", ".jsonl": "lichess-eval",
           ".binpack": "binpack", ".parquet": "parquet"}
# Formats read as bytes, not text lines: no binary sniffing, a magic number instead.
MAGIC = {"binpack": b"BINP", "parquet": b"PAR1"}
# A .txt file whose first line has a '|' or a bracketed result is training data, not FENs.
TEXT_DATA = re.compile(r"\||\s\[[0-9./-]+\]")
COMPRESSIONS = {".zst": "zst", ".zstd": "zst", ".gz": "gz", ".bz2": "bz2"}
# Text bytes per compressed byte of a typical PGN file (the sample corpus: zst 6.9, gz 4.6,
# bz2 6.1), for the size estimate that decides whether a file is worth the ingest pool.
TEXT_RATIO = {"zst": 7, "gz": 5, "bz2": 6}
GLOB_CHARS = frozenset("*?[")
READ_BYTES = 1 << 20
# Text is decoded and split in blocks small enough to stay in the CPU cache (1 MiB blocks
# measured twice as slow as 64 KiB ones).
TEXT_BLOCK_BYTES = 1 << 16
# Binary detection on a file's first decompressed bytes: a NUL byte, or more than this share of
# control characters other than tab, line feed, carriage return, form feed and vertical tab.
SNIFF_BYTES = 4096
CONTROL_SHARE = 0.05
CONTROL_BYTES = bytes(b for b in range(32) if b not in b"\t\n\r\f\v") + b"\x7f"
# Latin-1, except the bytes 0x80-0x9F that cp1252 prints (quotes, dashes, the euro sign...),
# which are read as cp1252 does; the five cp1252 leaves undefined stay Latin-1's C1 controls.
EIGHT_BIT_TABLE = "".join(bytes([b]).decode("cp1252", errors="ignore") or chr(b)
                          for b in range(256))
CP1252_PRINTABLE = re.compile(rb"[\x80\x82-\x8c\x8e\x91-\x9c\x9e\x9f]")


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

    @property
    def text_bytes(self) -> int:
        """The file's text size: its size, times a typical ratio for PGN when compressed (an
        estimate: enough to tell a file of a few thousand games from one of millions)."""
        return self.size_bytes * TEXT_RATIO.get(self.compression, 1)


def describe(path: Path) -> tuple[str, str] | None:
    """(format, compression) from the suffixes, or None when the suffix is not ingestible."""
    suffixes = [s.lower() for s in path.suffixes[-2:]]
    compression = COMPRESSIONS.get(suffixes[-1]) if suffixes else None
    if compression:
        suffixes = suffixes[:-1]
    fmt = FORMATS.get(suffixes[-1]) if suffixes else None
    return (fmt, compression or "none") if fmt else None


def discover_sources(paths: Iterable[str | os.PathLike[str]],
                     fmt: str | None = None) -> list[SourceFile]:
    """Every ingestible file named by ``paths``, in order, each once; IngestError on a bad path.

    A folder contributes its ingestible files (recursively, sorted; ``.txt`` FEN lists only
    when named or globbed); a named file with an unknown suffix, a missing path, an unreadable
    file or a glob matching nothing is an error. ``fmt`` (``--format``) reads every file as
    that format, a named file of any suffix too.
    """
    found: dict[Path, SourceFile] = {}
    for raw in paths:
        for source in expand(str(raw), fmt):
            found.setdefault(source.path, source)
    sources = [sniffed(source) if fmt is None else source for source in found.values()]
    for source in sources:
        check_readable(source)
    return sources


def expand(raw: str, fmt: str | None = None) -> list[SourceFile]:
    path = Path(raw).expanduser()
    if path.is_dir():
        return [forced(s, fmt) for p in folder_files(path)
                if not is_plain_text(p) and (s := source_for(p))]
    if path.exists() or path.is_symlink():
        return [forced(named_file(path), fmt) if fmt is None or describe(path)
                else SourceFile(path.absolute(), fmt, compression_of(path))]
    if GLOB_CHARS & set(raw):
        matches = sorted(glob.glob(os.path.expanduser(raw), recursive=True))
        sources = [s for m in matches for s in expand(m, fmt) if s]
        if not sources:
            raise IngestError(f"no ingestible files match {raw!r}")
        return sources
    raise IngestError(f"cannot read {raw!r}: no such file or directory")


def folder_files(folder: Path) -> list[Path]:
    """Every file under ``folder``, sorted; IngestError naming a folder that cannot be listed
    (``rglob`` would skip it in silence)."""
    def refuse(exc: OSError) -> None:
        raise IngestError(f"cannot read folder {exc.filename!r}: {exc.strerror or exc}")

    return sorted(Path(root) / name for root, _, names in os.walk(folder, onerror=refuse)
                  for name in names)


def is_plain_text(path: Path) -> bool:
    """``.txt`` files are FEN lists only when named (a folder's notes.txt is no FEN list)."""
    return path.name.lower().endswith(".txt")


def named_file(path: Path) -> SourceFile:
    source = source_for(path)
    if source is None:
        raise IngestError(
            f"cannot ingest {str(path)!r}: unknown format (expected .pgn, .epd, .fen, .txt, "
            f".jsonl, .binpack or .parquet, optionally .zst/.gz/.bz2, or give --format)")
    return source


def forced(source: SourceFile, fmt: str | None) -> SourceFile:
    """``source`` read as ``fmt`` when one is given."""
    return source if fmt is None else SourceFile(source.path, fmt, source.compression)


def compression_of(path: Path) -> str:
    return COMPRESSIONS.get(path.suffix.lower(), "none")


def sniffed(source: SourceFile) -> SourceFile:
    """A ``.txt`` file whose first line reads as training data (``FEN | score | result``)
    is read as text training data, not as a FEN list."""
    if source.format != "fen" or not source.path.name.lower().removesuffix(
            "." + source.compression).endswith(".txt"):
        return source
    try:
        with open_binary(source) as binary:
            head = binary.read1(SNIFF_BYTES)  # type: ignore[attr-defined]
    except (OSError, EOFError, zstandard.ZstdError):
        return source     # check_readable says what is wrong
    first = next((line for line in head.decode("utf-8", "replace").splitlines()
                  if line.strip() and not line.startswith("#")), "")
    return forced(source, "text") if TEXT_DATA.search(first) else source


def source_for(path: Path) -> SourceFile | None:
    kind = describe(path)
    return SourceFile(path.absolute(), *kind) if kind else None


def check_readable(source: SourceFile) -> None:
    """IngestError naming the file unless it is a regular file whose first bytes read as text
    (a FIFO would block the reader forever; a binary file would become junk rows)."""
    path = str(source.path)
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            raise IngestError(f"cannot ingest {path!r}: not a regular file ({file_kind(mode)})")
        with open_binary(source) as binary:
            head = binary.read1(SNIFF_BYTES)  # type: ignore[attr-defined]
            if source.format in MAGIC:
                refuse_other_format(path, source.format, head)
            else:
                refuse_binary(path, head)
    except (OSError, EOFError, zstandard.ZstdError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise IngestError(f"cannot read {path!r}: {reason}") from None


def file_kind(mode: int) -> str:
    """What a stat mode that is not a regular file is, in words."""
    kinds = {stat.S_ISFIFO: "a FIFO", stat.S_ISSOCK: "a socket", stat.S_ISCHR: "a character device",
             stat.S_ISBLK: "a block device", stat.S_ISDIR: "a folder"}
    return next((name for test, name in kinds.items() if test(mode)), f"mode {mode:o}")


def refuse_binary(path: str, block: bytes) -> None:
    """IngestError naming ``path`` when its first bytes are binary, not text.

    >>> refuse_binary("x.pgn", b"PK\\x03\\x04\\x14\\x00\\x00")
    Traceback (most recent call last):
    ...
    pipelines.ingest.config.IngestError: cannot ingest 'x.pgn': binary data (NUL bytes) in its first 7 bytes
    """
    sample = block[:SNIFF_BYTES]
    if b"\0" in sample:
        raise IngestError(f"cannot ingest {path!r}: binary data (NUL bytes) in its first "
                          f"{len(sample)} bytes")
    controls = len(sample) - len(sample.translate(None, CONTROL_BYTES))
    if controls > CONTROL_SHARE * len(sample):
        raise IngestError(f"cannot ingest {path!r}: binary data ({controls} control characters "
                          f"in its first {len(sample)} bytes)")


def refuse_other_format(path: str, fmt: str, head: bytes) -> None:
    """IngestError naming ``path`` unless its first bytes are ``fmt``'s magic number.

    >>> refuse_other_format("x.binpack", "binpack", b"PK\\x03")
    Traceback (most recent call last):
    ...
    pipelines.ingest.config.IngestError: cannot ingest 'x.binpack': not a binpack file (it starts b'PK\\x03', not b'BINP')
    """
    if not head.startswith(MAGIC[fmt]):
        raise IngestError(f"cannot ingest {path!r}: not a {fmt} file (it starts {head[:4]!r}, "
                          f"not {MAGIC[fmt]!r})")


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
        self._offset = 0  # of the first byte of _pending not yet delivered

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while self._offset == len(self._pending):
            block = self._raw.read(READ_BYTES)
            if not block:
                if self._in_frame:
                    raise TruncatedInput("zstd stream ended in the middle of a frame")
                return 0
            self._pending, self._offset = self._decompress(block), 0
        size = min(len(buffer), len(self._pending) - self._offset)
        buffer[:size] = memoryview(self._pending)[self._offset:self._offset + size]
        self._offset += size
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


class ReadPosition:
    """How far into its file a stream has read: the bytes taken from the disk (compressed
    bytes of a compressed file), for progress; 0 before the stream opens."""

    def __init__(self) -> None:
        self.raw: BinaryIO | None = None
        self.closed_at = 0

    def bytes_read(self) -> int:
        if self.raw is None:
            return 0
        try:
            self.closed_at = self.raw.tell()
        except (ValueError, OSError):       # closed: where it stopped
            pass
        return self.closed_at


def open_binary(source: SourceFile, position: ReadPosition | None = None) -> BinaryIO:
    """The decompressed bytes of a source, as a stream (``position`` follows its file)."""
    raw = open(source.path, "rb")
    if position is not None:
        position.raw = raw
    if source.compression == "zst":
        return io.BufferedReader(ZstdReader(raw), buffer_size=READ_BYTES)
    if source.compression == "gz":
        return gzip.GzipFile(fileobj=raw)  # type: ignore[return-value]
    if source.compression == "bz2":
        return bz2.BZ2File(raw)  # type: ignore[return-value]
    return raw


class TextDecoder:
    """Bytes to text as the module doc says, block by block, remembering what it did.

    ``encoding`` says how the bytes so far were decoded: ``utf-8``, ``utf-8-sig`` (with a BOM,
    which is dropped), ``latin-1`` or ``cp1252``; ``utf-8+latin-1`` (or ``+cp1252``) when
    non-ASCII UTF-8 came before the first byte that is not UTF-8 (a mixed file).

    >>> decoder = TextDecoder()
    >>> decoder.decode(b"Capablanca, Jos\\xe9 Ra\\xfal \\x93Capa\\x94", final=True), decoder.encoding
    ('Capablanca, José Raúl “Capa”', 'cp1252')
    """

    def __init__(self) -> None:
        self.utf8: codecs.IncrementalDecoder | None = codecs.getincrementaldecoder("utf-8")()
        self.started = self.bom = self.non_ascii_utf8 = self.cp1252 = False

    @property
    def encoding(self) -> str:
        unicode = "utf-8-sig" if self.bom else "utf-8"
        if self.utf8 is not None:
            return unicode
        eight_bit = "cp1252" if self.cp1252 else "latin-1"
        return f"{unicode}+{eight_bit}" if self.non_ascii_utf8 else eight_bit

    def decode(self, block: bytes, final: bool = False) -> str:
        """The text of the next block (a BOM at the start dropped)."""
        text = self.decode_block(block, final)
        if not self.started and text:
            self.started, self.bom = True, text[0] == "\ufeff"
            return text[1:] if self.bom else text
        return text

    def decode_block(self, block: bytes, final: bool) -> str:
        """UTF-8 until it fails, then the 8-bit table from the failing byte on."""
        if self.utf8 is None:
            return self.decode_8bit(block)
        try:
            text = self.utf8.decode(block, final)
        except UnicodeDecodeError as exc:
            data, self.utf8 = exc.object, None
            head = data[:exc.start].decode("utf-8")
            self.non_ascii_utf8 = self.non_ascii_utf8 or not head.isascii()
            return head + self.decode_8bit(data[exc.start:])
        self.non_ascii_utf8 = self.non_ascii_utf8 or not text.isascii()
        return text

    def decode_8bit(self, block: bytes) -> str:
        self.cp1252 = self.cp1252 or CP1252_PRINTABLE.search(block) is not None
        return codecs.charmap_decode(block, "strict", EIGHT_BIT_TABLE)[0]


class TextLines:
    """The lines of a source (universal newlines), decoded by a :class:`TextDecoder` whose
    ``encoding`` this exposes once they have been read.

    Iterating raises :class:`TruncatedInput` at a cut, after yielding every complete line
    before it, and IngestError when the first bytes are binary.
    """

    def __init__(self, source: SourceFile, block_bytes: int | None = None,
                 position: ReadPosition | None = None) -> None:
        self.source, self.block_bytes = source, block_bytes or TEXT_BLOCK_BYTES
        self.decoder = TextDecoder()
        self.position = position or ReadPosition()

    @property
    def encoding(self) -> str:
        return self.decoder.encoding

    def __iter__(self) -> Iterator[str]:
        return self.lines_from(None)

    def lines_from(self, binary: BinaryIO | None) -> Iterator[str]:
        """The lines of ``binary`` (of the source when None), iterated in C block by block:
        no Python frame runs per line."""
        return chain.from_iterable(self.blocks() if binary is None else self.decoded(binary))

    def blocks(self) -> Iterator[Iterable[str]]:
        with open_binary(self.source, self.position) as binary:
            try:
                yield from self.decoded(binary)
            except (EOFError, zstandard.ZstdError, OSError) as exc:
                if isinstance(exc, TruncatedInput):
                    raise
                raise TruncatedInput(f"{self.source.compression} stream: {exc}") from None

    def decoded(self, binary: BinaryIO) -> Iterator[Iterable[str]]:
        """The complete lines of each block read."""
        # read1: a cut archive delivers what it decompressed before raising at the cut
        block = binary.read1(self.block_bytes)  # type: ignore[attr-defined]
        refuse_binary(str(self.source.path), block)
        carry = ""
        while block:
            lines, carry = complete_lines(carry + self.decoder.decode(block))
            yield lines
            block = binary.read1(self.block_bytes)  # type: ignore[attr-defined]
        yield io.StringIO(carry + self.decoder.decode(b"", final=True), newline=None)


def complete_lines(text: str) -> tuple[io.StringIO, str]:
    """(the complete lines of ``text``, the unfinished last line to prepend to the next block).

    A final carriage return is held back: the next block may start with its line feed.

    >>> lines, rest = complete_lines("1. e4\\r\\n1... e5\\r2. Nf3\\r")
    >>> list(lines), rest
    (['1. e4\\n', '1... e5\\n'], '2. Nf3\\r')
    """
    end = len(text) - 1 if text.endswith("\r") else len(text)
    cut = max(text.rfind("\n", 0, end), text.rfind("\r", 0, end)) + 1
    newline = None if "\r" in text else "\n"  # the same lines; no translation is faster
    return io.StringIO(text[:cut], newline=newline), text[cut:]


def read_lines(source: SourceFile, position: ReadPosition | None = None) -> TextLines:
    """The lines of a source; read ``.encoding`` after iterating."""
    return TextLines(source, position=position)
