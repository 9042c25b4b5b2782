"""The ingest step's configuration and errors."""
from __future__ import annotations

import os
from dataclasses import dataclass, field


class IngestError(ValueError):
    """A path cannot be ingested (missing, unreadable, unknown format): names the path."""


def default_workers() -> int:
    return os.cpu_count() or 1


@dataclass(frozen=True)
class IngestConfig:
    """How ``chesslab ingest`` reads files.

    Memory is bounded by ``chunk_games`` per worker and ``flush_games`` in the main process,
    never by the size of a file.
    """

    workers: int = field(default_factory=default_workers, metadata={
        "help": "processes parsing and replaying games; 1 runs in-process (needed inside Dask "
                "tasks, which cannot fork pools)"})
    chunk_games: int = field(default=500, metadata={
        "help": "games per work unit; each unit writes one games part and one moves part"})
    flush_games: int = field(default=2000, metadata={
        "help": "games between two flushes of new positions and errors to the warehouse"})
    epd_chunk: int = field(default=50000, metadata={
        "help": "EPD/FEN lines per part of position_records"})

    def __post_init__(self) -> None:
        for name in ("workers", "chunk_games", "flush_games", "epd_chunk"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise IngestError(
                    f"ingest config: {name} must be a positive integer, got {value!r}")
        if self.flush_games < self.chunk_games:
            raise IngestError(
                f"ingest config: flush_games ({self.flush_games}) must be at least "
                f"chunk_games ({self.chunk_games})")

    @classmethod
    def tiny(cls) -> IngestConfig:
        """In-process, small chunks: several chunks and flushes even on test fixtures."""
        return cls(workers=1, chunk_games=3, flush_games=6, epd_chunk=5)
