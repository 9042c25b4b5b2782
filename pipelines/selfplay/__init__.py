"""Self-play: one engine playing both sides from varied starts, games written through the
ingest path into ``games``, ``moves`` and ``positions``; resumable, on every core.

>>> from pipelines.selfplay import SelfplayConfig, run_selfplay
"""
from pipelines.selfplay.config import SelfplayConfig, SelfplayError
from pipelines.selfplay.run import (
    Batch, BatchResult, SelfplayPlan, SelfplaySummary, ingest_batch, plan_selfplay, play_batch,
    run_selfplay, summarize,
)

__all__ = ["Batch", "BatchResult", "SelfplayConfig", "SelfplayError", "SelfplayPlan",
           "SelfplaySummary", "ingest_batch", "plan_selfplay", "play_batch", "run_selfplay",
           "summarize"]
