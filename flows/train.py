"""The ``train`` flow: one task that trains (or resumes) a model, exports and registers it.
The work is ``pipelines.train``; a retry resumes from the last checkpoint."""
from __future__ import annotations

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from pipelines.train import ModelVersion, TrainConfig, train
from warehouse import Lake


@task(name="train-model", retries=1, cache_policy=NO_CACHE)
def train_task(home: str, kind: str, config: TrainConfig) -> ModelVersion:
    return train(Lake(home), kind, config)


@flow(name="train")
def train_flow(kind: str, config: TrainConfig, home: str | None = None) -> ModelVersion:
    """Train a model of ``kind`` with ``config`` into the warehouse at ``home``."""
    model = train_task(str(Lake(home).home), kind, config)
    get_run_logger().info("trained %s: %s", model.model_id, model.artifact_path)
    return model
