"""The ``refresh`` flow: ingest a folder's new files, then label every position still missing a
requested depth (new positions, and any a previous run did not finish)."""
from __future__ import annotations

from prefect import flow

from flows.ingest import ingest
from flows.label import label
from flows.runtime import task_runner
from pipelines.ingest import IngestConfig, IngestSummary
from pipelines.label import LabelConfig
from pipelines.label.run import LabelSummary
from warehouse import Lake


@flow(name="refresh")
def refresh(folder: str, config: LabelConfig, home: str | None = None,
            dask_address: str | None = None,
            ingest_config: IngestConfig | None = None
            ) -> tuple[list[IngestSummary], LabelSummary]:
    """Ingest ``folder`` (files already ingested are skipped by content hash), then label.

    ``dask_address``: the cluster the subflows' tasks run on (their runners are not inherited).
    """
    home = str(Lake(home).home)
    ingest_flow = ingest.with_options(task_runner=task_runner(dask_address, 1))
    ingested = ingest_flow([folder], ingest_config or IngestConfig(), home=home,
                           on_cluster=bool(dask_address))
    label_flow = label.with_options(task_runner=task_runner(dask_address, config.workers))
    return ingested, label_flow(config, home=home)


def refresh_without_prefect(folder: str, config: LabelConfig,
                            ingest_config: IngestConfig | None = None, home: str | None = None
                            ) -> tuple[list[IngestSummary], LabelSummary]:
    """The same two steps in this process, without Prefect."""
    from pipelines.ingest import ingest_paths
    from pipelines.label import label_positions

    lake = Lake(home)
    return ingest_paths(lake, [folder], ingest_config), label_positions(lake, config)
