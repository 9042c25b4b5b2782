"""Ingest: PGN (plain, .zst, .gz, .bz2), EPD suites and FEN lists into the warehouse, and the
field's training data (Lichess evaluation JSONL, bullet/marlinflow text, Stockfish binpack,
Parquet) as positions and labels (:mod:`pipelines.ingest.training_data`, docs/formats.md).

``ingest_file(lake, source, config, pool)`` streams a file once, writes its ``games``, ``moves``,
``positions`` (one row per distinct Polyglot key, collisions recorded), ``position_records``
and ``ingest_errors`` rows, and commits it with its ``sources`` row. Ingesting the same bytes
again adds nothing. Every game record of a file is a game, identical records included; the same
game (same tags, moves and occurrence in its file) in another file is counted as a duplicate
and stored once. Text is UTF-8, else Latin-1/cp1252 (recorded per file); binary
files, FIFOs and folders that cannot be listed are refused with an :class:`IngestError`. The
``ingest`` step (``flows/ingest.py``) runs it on every file a set of paths names, with one
process pool for the step: ``run_step(INGEST, IngestJob(paths, config), lake)``.
"""
from pipelines.ingest.config import IngestConfig, IngestError
from pipelines.ingest.run import IngestSummary, ingest_file
from pipelines.ingest.sources import SourceFile, TruncatedInput, discover_sources

__all__ = ["IngestConfig", "IngestError", "IngestSummary", "SourceFile", "TruncatedInput",
           "discover_sources", "ingest_file"]
