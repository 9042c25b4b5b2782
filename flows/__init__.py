"""Orchestration only: the steps as plan / units / summary (``flows.step``), their two runners
(local and Prefect), and the ``chesslab`` command line; the work is in ``pipelines``."""
