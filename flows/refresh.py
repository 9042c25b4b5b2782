"""The ``refresh`` composition: ingest a folder's new files, then label every position still
missing a requested depth (new positions, and any a previous run did not finish)."""
from __future__ import annotations

from flows.ingest import INGEST, IngestJob
from flows.label import LABEL
from flows.step import Runner
from pipelines.ingest import IngestConfig, IngestSummary
from pipelines.label import LabelConfig
from pipelines.label.run import LabelSummary
from warehouse import Lake


def refresh(runner: Runner, folder: str, config: LabelConfig, lake: Lake,
            ingest_config: IngestConfig | None = None
            ) -> tuple[list[IngestSummary], LabelSummary]:
    """Ingest ``folder`` (files already ingested are skipped by content hash), then label."""
    job = IngestJob((folder,), ingest_config or IngestConfig())
    return runner.compose("refresh", lambda: (runner.run(INGEST, job, lake),
                                              runner.run(LABEL, config, lake)))
