"""Prefect flows and the ``chesslab`` command line: orchestration only, the work is elsewhere."""
