"""Self-play: one engine playing both sides from varied starts, games written through the
ingest path into ``games``, ``moves`` and ``positions``; resumable, on every core.

Run by the ``selfplay`` step (``flows/selfplay.py``).

>>> from pipelines.selfplay import SelfplayConfig, plan_selfplay
"""
from pipelines.selfplay.config import SelfplayConfig, SelfplayError
from pipelines.selfplay.run import (
    Batch,
    BatchResult,
    SelfplayPlan,
    SelfplaySummary,
    ingest_batch,
    plan_selfplay,
    play_batch,
    summarize,
)

__all__ = ["Batch", "BatchResult", "SelfplayConfig", "SelfplayError", "SelfplayPlan",
           "SelfplaySummary", "ingest_batch", "plan_selfplay", "play_batch", "summarize"]
