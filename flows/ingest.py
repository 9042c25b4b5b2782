"""The ``ingest`` flow: one task per file (retried twice), each calling ``pipelines.ingest``.

On the local thread runner files go one at a time, each using a pool of ``config.workers``
processes; on a Dask cluster the files spread over the workers and each task runs in-process
(``workers=1``: a Dask task cannot fork a pool).
"""
from __future__ import annotations

import dataclasses

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from pipelines.ingest import IngestConfig, IngestSummary, SourceFile, discover_sources, ingest_file
from pipelines.ingest.run import worker_pool
from warehouse import Lake


@task(name="ingest-file", retries=2, retry_delay_seconds=1, cache_policy=NO_CACHE)
def ingest_file_task(home: str, source: SourceFile, config: IngestConfig) -> IngestSummary:
    """Ingest one file; a retry re-reads it (it is committed only by its sources row)."""
    with worker_pool(config.workers if source.format == "pgn" else 1) as pool:
        summary = ingest_file(Lake(home), source, config, pool)
    get_run_logger().info("%s", summary)
    return summary


@flow(name="ingest")
def ingest(paths: list[str], config: IngestConfig, home: str | None = None,
           on_cluster: bool = False) -> list[IngestSummary]:
    """Ingest every file named by ``paths`` (files, folders, globs)."""
    lake = Lake(home)
    sources = discover_sources(paths)
    if on_cluster:
        config = dataclasses.replace(config, workers=1)
    get_run_logger().info("%d files to ingest into %s", len(sources), lake.home)
    futures = [ingest_file_task.submit(str(lake.home), source, config) for source in sources]
    return [future.result() for future in futures]
