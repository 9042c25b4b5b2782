"""Data generation: annotated engine-vs-itself games (``chesslab datagen``) played on the games
runner (``pipelines.games``), written as PGN batches and ingested by the ingest step."""
