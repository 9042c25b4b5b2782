"""The ``label`` flow: find pending positions, then one task per batch, each running one engine
and writing its own Parquet parts (no single writer, so the same tasks run on threads or on a
Dask cluster's workers)."""
from __future__ import annotations

import time

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.runtime import task_run

from pipelines.label import LabelConfig
from pipelines.label.pending import PendingPosition, still_pending
from pipelines.label.run import (
    BatchResult,
    LabelSummary,
    close_engines,
    label_batch,
    plan_labels,
    summarize,
)
from warehouse import Lake


@task(name="label-batch", retries=2, retry_delay_seconds=1, cache_policy=NO_CACHE)
def label_batch_task(home: str, config: LabelConfig, engine_id: str,
                     batch: list[PendingPosition], run_id: str) -> BatchResult:
    """Label one batch; a retry first drops what the failed attempt already wrote."""
    lake = Lake(home)
    if task_run.run_count > 1:
        batch = still_pending(lake, config, engine_id, batch)
    return label_batch(lake, config, engine_id, batch, run_id)


@flow(name="label")
def label(config: LabelConfig, home: str | None = None) -> LabelSummary:
    """Label every position missing one of ``config.depths`` (or matching ``config.where``)."""
    started = time.monotonic()
    lake = Lake(home)
    plan = plan_labels(lake, config)
    get_run_logger().info("%d positions to label in %d batches with %s", plan.positions,
                          len(plan.batches), plan.identity.engine_id)
    try:
        futures = [label_batch_task.submit(str(lake.home), config, plan.identity.engine_id,
                                           batch, plan.run_id) for batch in plan.batches]
        results = [future.result() for future in futures]
    finally:
        close_engines()
    summary = summarize(plan, results, time.monotonic() - started)
    get_run_logger().info("%s", summary)
    return summary
