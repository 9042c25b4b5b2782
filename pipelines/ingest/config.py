"""The ingest step's configuration and errors."""
from __future__ import annotations

import os
import re
import typing
from dataclasses import dataclass, field
from typing import Literal

from engines.config_choices import choice_problem
from pipelines.formats.depth import MAX_DEPTH, depth_problem

# An ingest_errors message quotes at most this much of the input, and is at most
# MESSAGE_CHARS long: a 20 MB junk line must not become a 20 MB row.
QUOTE_CHARS = 200
MESSAGE_CHARS = 1000
# Formats --format accepts (the suffix gives the rest: pipelines.ingest.sources.FORMATS).
IngestFormat = Literal["pgn", "epd", "fen", "text", "lichess-eval", "binpack", "parquet"]
FORMAT_NAMES: tuple[IngestFormat, ...] = typing.get_args(IngestFormat)
# An engine identity given for imported labels: a partition value of the labels table.
ENGINE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,99}$")


class IngestError(ValueError):
    """A path cannot be ingested (missing, unreadable, unknown format): names the path."""


def quoted(text: str, limit: int = QUOTE_CHARS) -> str:
    """``text`` as a Python literal, its start only when it is long (its length said).

    >>> quoted("[Event x")
    "'[Event x'"
    >>> quoted("x" * 5000, limit=5)
    "'xxxxx'... (5,000 characters)"
    """
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text):,} characters)"


def capped(message: str, limit: int = MESSAGE_CHARS) -> str:
    """A message cut to ``limit`` characters, saying so.

    >>> capped("y" * 30, limit=10)
    'yyyyyyyyyy... (30 characters in all)'
    """
    if len(message) <= limit:
        return message
    return f"{message[:limit]}... ({len(message):,} characters in all)"


#: The PGN text size from which the ingest pool pays for its start (see IngestConfig): on a
#: loaded 2-core machine (load 6-8) two workers lost up to 16 MB (0.15-0.85x one worker's
#: speed from 0.5 to 16 MB) and won 1.43x at 24 MB of moves-only text; text with a comment on
#: every move still lost at 24 MB (0.67x), so the threshold is where dense text pays
#: (``benchmarks/ingest.py --crossover``, docs/experiments/ingest.md).
POOL_FROM_MB = 24


def default_workers() -> int:
    return os.cpu_count() or 1


@dataclass(frozen=True)
class IngestConfig:
    """How ``chesslab ingest`` reads files.

    Memory is bounded by ``chunk_games`` per chunk in flight (two per worker at most) and
    ``flush_games`` (errors) in the main process, which numbers identical records in file order
    in bounded memory too (:class:`pipelines.ingest.keys.Occurrences`).
    """

    workers: int | None = field(default=None, metadata={
        "help": "processes parsing and replaying games, for every PGN file; 1 runs in-process "
                "(needed inside Dask tasks, which cannot fork pools); default: one per CPU "
                "for a PGN file of at least --pool-from-mb, this process alone below it "
                "(ingest says which it chose)"})
    pool_from_mb: int = field(default=POOL_FROM_MB, metadata={
        "help": "megabytes of PGN text (a compressed file's estimated) from which the default "
                "--workers parses a file with one process per CPU; a smaller one is parsed in "
                "this process, where starting the workers costs more than they save (0: "
                "always the workers)"})
    chunk_games: int = field(default=2000, metadata={
        "help": "games per work unit (a unit also closes at 8 MB of PGN text); each unit "
                "writes one moves, positions and games part"})
    flush_games: int = field(default=10000, metadata={
        "help": "games between two flushes of errors to the warehouse (EPD/FEN lists: of "
                "new positions too)"})
    epd_chunk: int = field(default=50000, metadata={
        "help": "EPD/FEN lines per part of position_records"})
    format: IngestFormat | None = field(default=None, metadata={
        "help": f"read every file as this format ({', '.join(FORMAT_NAMES)}) whatever its "
                f"suffix; default: from the suffix"})
    engine_id: str | None = field(default=None, metadata={
        "help": "engine identity the labels of text, binpack, Lichess evaluation, EPD (ce) and "
                "Parquet files are stored under (text needs it; defaults: lichess-eval, "
                "binpack, epd, and a Parquet file's engine_id column)"})
    depth: int = field(default=0, metadata={
        "help": "depth recorded for labels whose format gives none (text, binpack, EPD "
                "without acd, Parquet without depth)"})
    flush_records: int = field(default=500_000, metadata={
        "help": "text/JSONL/binpack/Parquet records per commit (and resume point)"})
    block_bytes: int = field(default=4 << 20, metadata={
        "help": "decompressed bytes of text/JSONL parsed at a time"})

    def __post_init__(self) -> None:
        if not isinstance(self.pool_from_mb, int) or isinstance(self.pool_from_mb, bool) or \
                self.pool_from_mb < 0:
            raise IngestError(f"ingest config: pool_from_mb must be a non-negative integer, "
                              f"got {self.pool_from_mb!r}")
        if self.workers is not None and (not isinstance(self.workers, int) or
                                         isinstance(self.workers, bool) or self.workers < 1):
            raise IngestError(f"ingest config: workers must be a positive integer, "
                              f"got {self.workers!r}")
        for name in ("chunk_games", "flush_games", "epd_chunk", "flush_records",
                     "block_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise IngestError(
                    f"ingest config: {name} must be a positive integer, got {value!r}")
        if problem := choice_problem(self):
            raise IngestError(f"ingest config: {problem}")
        if self.engine_id is not None and not ENGINE_ID.match(self.engine_id):
            raise IngestError(f"ingest config: engine_id must be letters, digits and . _ : @ + - "
                              f"(at most 100, no '/'), got {self.engine_id!r}")
        if depth_problem(self.depth):
            raise IngestError(f"ingest config: --depth {self.depth!r} is not a depth from 0 "
                              f"to {MAX_DEPTH}")
        if self.flush_games < self.chunk_games:
            raise IngestError(
                f"ingest config: flush_games ({self.flush_games}) must be at least "
                f"chunk_games ({self.chunk_games})")

    @classmethod
    def tiny(cls) -> IngestConfig:
        """In-process, small chunks: several chunks and flushes even on test fixtures."""
        return cls(workers=1, chunk_games=3, flush_games=6, epd_chunk=5, flush_records=4,
                   block_bytes=256)
