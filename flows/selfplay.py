"""The ``selfplay`` flow: plan the missing batches, play each in a task (on the pipeline's
process pool), ingest each as it finishes. The work is ``pipelines.selfplay``."""
from __future__ import annotations

import time

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed

from pipelines.ingest import IngestSummary
from pipelines.selfplay import (
    Batch, BatchResult, SelfplayConfig, SelfplayPlan, SelfplaySummary, ingest_batch,
    plan_selfplay, summarize,
)
from pipelines.selfplay.run import close_pool, play_in_pool, run_lock
from warehouse import Lake


@task(name="selfplay-batch", retries=1, retry_delay_seconds=1, cache_policy=NO_CACHE)
def play_batch_task(plan: SelfplayPlan, batch: Batch) -> BatchResult:
    """Play one batch into its PGN file (a retry plays it again: the file is written whole)."""
    return play_in_pool(plan, batch)


@task(name="selfplay-ingest", retries=2, retry_delay_seconds=1, cache_policy=NO_CACHE)
def ingest_batch_task(home: str, path: str) -> IngestSummary:
    return ingest_batch(Lake(home), path)


@flow(name="selfplay")
def selfplay(config: SelfplayConfig, home: str | None = None) -> SelfplaySummary:
    """Play and ingest every game of the run that the warehouse lacks."""
    started = time.perf_counter()
    lake = Lake(home)
    plan = plan_selfplay(lake, config)
    get_run_logger().info("selfplay run %s: %d games done, %d batches to play", plan.run_id,
                          plan.games_done, len(plan.batches))
    with run_lock(lake, plan):
        ingested = [ingest_batch_task(str(lake.home), path) for path in plan.to_ingest]
        try:
            futures = [play_batch_task.submit(plan, batch) for batch in plan.batches]
            played = []
            for future in as_completed(futures):
                played.append(future.result())
                ingested.append(ingest_batch_task(str(lake.home), played[-1].path))
        finally:
            close_pool()
    summary = summarize(plan, played, ingested, time.perf_counter() - started)
    get_run_logger().info("%s", summary)
    return summary
