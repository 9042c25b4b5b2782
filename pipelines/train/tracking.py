"""Where a training run's metrics go besides the warehouse (which stays the source of truth):
the tracking tools people already run.

- TensorBoard: event files in a run folder named after the model,
  ``<home>/tensorboard/nnue@1 (nnue-tiny)/``, so ``tensorboard --logdir <home>/tensorboard``
  lists runs as ``nnue@1 (nnue-tiny)``; the config's hyper-parameters go to its HParams tab
  with the epoch metrics (``epoch/val_loss``, ``epoch/train_loss``) as the columns to compare.
  A resumed run adds an event file to the same folder.
- MLflow, when asked (``--mlflow URI``: a local store, ``sqlite:///mlflow.db`` or a file store
  ``file:./mlruns``): Lightning's ``MLFlowLogger``, offline, with the same hyper-parameters
  and metrics (the warehouse's epoch rows as ``per_epoch/...`` at step = epoch + 1: in
  MLflow's file store a metric is a file, and Lightning's own ``epoch`` metric leaves no
  ``epoch/`` folder for them). MLflow is not a dependency of chesslab: ``pip install
  mlflow-skinny`` (the client, all Lightning needs) first; the test extra installs it.
"""
from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import lightning as L

from pipelines.train.config import TrainConfig, TrainConfigError
from warehouse import Lake

TENSORBOARD_ROOT = "tensorboard"
#: The metrics the HParams tab compares runs by (written each epoch by the trainer).
HPARAM_METRICS = ("epoch/val_loss", "epoch/train_loss")
HParam = str | int | float | bool
#: MLflow 3.7+ refuses its file store (``file:`` URIs, plain folders) unless this is true.
ALLOW_FILE_STORE = "MLFLOW_ALLOW_FILE_STORE"


def run_name(model_id: str, name: str) -> str:
    """A run's name in TensorBoard and MLflow.

    >>> run_name("nnue@1", "nnue-demo")
    'nnue@1 (nnue-demo)'
    """
    return f"{model_id} ({name})"


def hyper_parameters(config: TrainConfig) -> dict[str, HParam]:
    """The config's fields that change the trained net (its run identity: not the progress
    bar nor where MLflow logs) as TensorBoard's HParams and MLflow take them: numbers, text
    and booleans; none as ``none``, anything else as its text.

    >>> found = hyper_parameters(TrainConfig(epochs=3))
    >>> found["epochs"], found["name"], "progress" in found
    (3, 'none', False)
    """
    return {k: v if isinstance(v, HParam) else "none" if v is None else str(v)
            for k, v in json.loads(config.run_identity()).items()}


def epoch_metrics(logger: Any, numbers: dict[str, float]) -> dict[str, float]:
    """An epoch's warehouse metrics as ``logger`` names them: ``epoch/<metric>`` in
    TensorBoard (the HParams tab's columns), ``per_epoch/<metric>`` in MLflow, whose file
    store keeps a metric as a file named after it (``epoch/val_loss`` would need a folder
    ``epoch``, the file of Lightning's own ``epoch`` metric).

    >>> epoch_metrics(object(), {"val_loss": 0.5})
    {'epoch/val_loss': 0.5}
    """
    prefix = "per_epoch" if isinstance(logger, L.pytorch.loggers.MLFlowLogger) else "epoch"
    return {f"{prefix}/{k}": v for k, v in numbers.items()}


def loggers(lake: Lake, model_id: str, config: TrainConfig) -> list[Any]:
    """The run's Lightning loggers: TensorBoard always, MLflow when ``config.mlflow`` names
    a tracking URI."""
    name = run_name(model_id, config.name or model_id.split("@")[0])
    found: list[Any] = [tensorboard_logger(lake.home / TENSORBOARD_ROOT, name, config)]
    if config.mlflow:
        found.append(mlflow_logger(config.mlflow, model_id.split("@")[0], name, config))
    return found


def tensorboard_logger(root: Path, name: str, config: TrainConfig
                       ) -> L.pytorch.loggers.TensorBoardLogger:
    """Event files in ``root/<name>`` (no version subfolder, no hp_metric), the
    hyper-parameters written for the HParams tab."""
    logger = L.pytorch.loggers.TensorBoardLogger(save_dir=root, name=name, version="",
                                                 default_hp_metric=False)
    write_hparams(logger, hyper_parameters(config))
    return logger


def write_hparams(logger: L.pytorch.loggers.TensorBoardLogger,
                  params: dict[str, HParam]) -> None:
    """The HParams plugin's summaries: the hyper-parameters and the metric tags to show
    beside them (their values are the epochs' scalars; none is logged here). Lightning's
    ``log_hyperparams`` would log a placeholder value for each metric at step 0."""
    try:
        from torch.utils.tensorboard.summary import hparams
    except ImportError:         # the writer Lightning uses without the tensorboard package
        from tensorboardX.summary import hparams  # type: ignore[no-redef]
    writer = logger.experiment._get_file_writer()
    for summary in hparams(params, dict.fromkeys(HPARAM_METRICS, 0.0)):
        writer.add_summary(summary)
    writer.flush()


def check_loggers(config: TrainConfig) -> None:
    """TrainConfigError when ``config.mlflow`` asks for MLflow and it is not installed (the
    trainer checks before it opens a run, so no empty version is left behind)."""
    if config.mlflow and importlib.util.find_spec("mlflow") is None:
        raise TrainConfigError(f"mlflow: logging to {config.mlflow!r} needs MLflow, which "
                               f"chesslab does not install: pip install mlflow-skinny")


def is_file_store(uri: str) -> bool:
    """Whether MLflow keeps a tracking URI's runs in its file store (a ``file:`` URI or a
    plain folder) rather than a database or a server.

    >>> [is_file_store(u) for u in ("file:./mlruns", "file:///tmp/m", "mlruns", "sqlite:///m.db")]
    [True, True, True, False]
    """
    return urlparse(uri).scheme in ("", "file")


def allow_file_store(uri: str) -> None:
    """A file store asked for by name is used: MLflow 3.7+ put it in maintenance mode and
    refuses it unless ``MLFLOW_ALLOW_FILE_STORE`` is true, so chesslab sets it for its own
    process when unset (a value the user set stays)."""
    if is_file_store(uri):
        os.environ.setdefault(ALLOW_FILE_STORE, "true")


def mlflow_logger(uri: str, kind: str, name: str, config: TrainConfig) -> Any:
    """Lightning's MLFlowLogger at ``uri`` (experiment ``chesslab <kind>``, run ``name``)
    with the hyper-parameters logged; TrainConfigError when MLflow is not installed."""
    check_loggers(config)
    allow_file_store(uri)
    from lightning.pytorch.loggers import MLFlowLogger

    logger = MLFlowLogger(experiment_name=f"chesslab {kind}", run_name=name, tracking_uri=uri)
    logger.log_hyperparams(hyper_parameters(config))
    return logger
