"""The generic trainer: a model kind supplies its Lightning module, data and export; this
module runs Lightning with checkpoints in ``<home>/models/<kind>/<version>/``, resumes the
unfinished version of the same config after a kill, writes every epoch's metrics to the
warehouse as it goes and registers the finished model.

The metrics also go to TensorBoard event files in a run named after the model
(``<home>/tensorboard/nnue@1 (nnue-tiny)/``, :mod:`pipelines.train.tracking`, which also
passes MLflow through when asked), so ``tensorboard --logdir <home>/tensorboard`` shows every
run: Lightning's own ``train_loss`` (every ``LOG_EVERY_STEPS`` steps) and ``val_loss``, the
warehouse's epoch rows as ``epoch/...`` at step = epoch number (1 first; ``per_epoch/...``
in MLflow) and the config in the HParams tab. The warehouse stays the source of truth.
"""
from __future__ import annotations

import abc
import json
import logging
import shutil
import sys
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import lightning as L
import torch

from pipelines.models import registry  # its clock, read when stamping (tests patch it)
from pipelines.models.registry import (
    ModelVersion,
    VersionLock,
    allocate_version,
    claim_version,  # noqa: F401 (a trainer's name for it: tests and callers import it here)
    file_sha256,
    model_id,
    record_event,
    record_model,
    registered_versions,
    resolve_model,
)
from pipelines.progress import EVERY_S, Report, progress_line
from pipelines.train.config import TrainConfig
from pipelines.train.tracking import check_loggers, epoch_metrics, loggers
from warehouse import Lake

log = logging.getLogger(__name__)

RUN_FILE = "run.json"
LAST_CHECKPOINT = "last.ckpt"
LOG_EVERY_STEPS = 10
# The version folder holds run.json next to the checkpoint by design.
warnings.filterwarnings("ignore", message=r"Checkpoint directory .* exists and is not empty")
# Lightning 2.6 calls a deprecated torch pytree API internally; nothing for a user to act on.
warnings.filterwarnings("ignore", message=r"`isinstance\(treespec, LeafSpec\)` is deprecated")
# A tiny run has fewer batches than the logging interval: its epochs are logged all the same.
warnings.filterwarnings("ignore", message=r"The number of training batches .* is smaller than "
                                          r"the logging interval")


class TrainingError(RuntimeError):
    """Training could not finish: names the model."""


@dataclass
class KindData:
    """A kind's data for one run: loaders over both splits and what model_datasets records."""

    train: Any                      # an iterable of batches (DataLoader)
    validation: Any
    record: dict[str, Any] = field(default_factory=dict)   # model_datasets columns


@dataclass(frozen=True)
class Export:
    """An exported artifact and what its ``exported`` event records."""

    path: Path
    payload: dict[str, Any]


class LightningKind(Protocol):
    """What a model kind trained with Lightning gives the trainer; its declaration's
    ``lightning`` makes one (:class:`pipelines.models.kinds.ModelKind`)."""

    def data(self, lake: Lake, config: Any, folder: Path) -> KindData:
        """Both splits' loaders; ``folder`` (the version's) may hold a snapshot of the data."""

    def module(self, config: Any) -> L.LightningModule: ...

    def export(self, module: Any, folder: Path, data: KindData, config: Any) -> Export: ...


class KindModule(L.LightningModule, abc.ABC):
    """Base Lightning module: the kind gives ``loss(batch)``; optimiser from the config;
    ``after_step`` runs after each optimiser step (weight clipping)."""

    def __init__(self, config: TrainConfig) -> None:
        super().__init__()
        self.config = config

    @abc.abstractmethod
    def loss(self, batch: Any) -> torch.Tensor:
        """The batch's training loss."""

    def after_step(self) -> None:
        """Called after every optimiser step."""

    def epoch_extra(self) -> Mapping[str, float | None]:
        """Kind-specific metrics of the validation just finished (model_metrics.extra)."""
        return {}

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        loss = self.loss(batch)
        self.log("train_loss", loss, prog_bar=True, batch_size=len(batch))
        return loss

    def validation_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        loss = self.loss(batch)
        self.log("val_loss", loss, prog_bar=True, batch_size=len(batch))
        return loss

    def on_train_batch_end(self, outputs: Any, batch: Any, batch_idx: int) -> None:
        self.after_step()

    def optimizer(self) -> torch.optim.Optimizer:
        """The config's optimiser over this module's parameters (a kind may override)."""
        if self.config.optimizer == "sgd":
            return torch.optim.SGD(self.parameters(), lr=self.config.learning_rate, momentum=0.9)
        return torch.optim.Adam(self.parameters(), lr=self.config.learning_rate)

    def configure_optimizers(self) -> Any:
        """The optimiser, with a per-epoch exponential decay when ``lr_decay`` < 1."""
        optimizer = self.optimizer()
        if self.config.lr_decay == 1:
            return optimizer
        return {"optimizer": optimizer, "lr_scheduler": {
            "scheduler": torch.optim.lr_scheduler.ExponentialLR(optimizer, self.config.lr_decay),
            "interval": "epoch"}}


class EpochMetrics(L.Callback):
    """Writes one ``model_metrics`` row per epoch when its validation ends (before the
    checkpoint is saved), so a dashboard can draw a run in progress."""

    def __init__(self, lake: Lake, model: str) -> None:
        self.lake, self.model = lake, model
        self.reset()

    def reset(self) -> None:
        self.last: tuple[int, float, float | None] | None = None   # epoch, its two losses
        self.train_sum = self.train_n = self.val_sum = self.val_n = self.train_s = 0.0
        self.learning_rate = 0.0
        self.started = time.monotonic()

    def on_train_epoch_start(self, trainer: L.Trainer, module: L.LightningModule) -> None:
        self.reset()
        # The epoch's own rate: a per-epoch scheduler steps before validation ends.
        self.learning_rate = trainer.optimizers[0].param_groups[0]["lr"]
        for loader in (trainer.train_dataloader, trainer.val_dataloaders):
            set_epoch = getattr(getattr(loader, "dataset", None), "set_epoch", None)
            if set_epoch is not None:
                set_epoch(trainer.current_epoch)

    def on_train_batch_end(self, trainer: L.Trainer, module: L.LightningModule, outputs: Any,
                           batch: Any, batch_idx: int) -> None:
        self.train_sum += float(outputs["loss"]) * len(batch)
        self.train_n += len(batch)
        # The epoch's training time ends with its last step: Lightning fetches the first
        # validation batch before on_validation_start, which is validation's time.
        self.train_s = time.monotonic() - self.started

    def on_validation_batch_end(self, trainer: L.Trainer, module: L.LightningModule,
                                outputs: Any, batch: Any, batch_idx: int,
                                dataloader_idx: int = 0) -> None:
        self.val_sum += float(outputs) * len(batch)
        self.val_n += len(batch)

    def on_validation_end(self, trainer: L.Trainer, module: L.LightningModule) -> None:
        if trainer.sanity_checking or not self.train_n:
            return
        self.last = (trainer.current_epoch, self.train_sum / self.train_n,
                     self.val_sum / self.val_n if self.val_n else None)
        extra: Mapping[str, Any] = getattr(module, "epoch_extra", dict)()
        row = {"model_id": self.model, "epoch": trainer.current_epoch,
               "step": trainer.global_step,
               "train_loss": self.train_sum / self.train_n,
               "val_loss": self.val_sum / self.val_n if self.val_n else None,
               "positions_per_s": self.train_n / max(self.train_s, 1e-9),
               "learning_rate": self.learning_rate,
               "extra": json.dumps(extra, sort_keys=True), "recorded_at": registry.now()}
        self.lake.write("model_metrics", [row])
        log_epoch(trainer, row, extra)


class EpochProgress(L.Callback):
    """Training's progress in the one style of long work (:mod:`pipelines.progress`): a line
    at the end of every epoch, after its validation, and one every ``every_s`` seconds within
    an epoch when Lightning's bar is off (the bar shows the epoch's steps itself)::

        train nnue@1: 2,048/8,192 positions (25%), 1,234 positions/s, ETA 5 s; epoch 1/4, train loss 0.012300, validation loss 0.013400

    Positions count the training split over all epochs; until the first epoch ends their total
    comes from the loader's batches (none for a loader without a length). A resumed run's
    earlier epochs count as done, not in its rate. With the bar on, the line goes through the
    bar (whole, not glued to it); else to ``report``."""

    def __init__(self, model: str, epochs: int, metrics: EpochMetrics, report: Report,
                 every_s: float | None = None) -> None:
        self.model, self.epochs, self.metrics, self.report = model, epochs, metrics, report
        self.every_s = EVERY_S if every_s is None else every_s
        self.per_epoch: int | None = None      # training positions of one epoch, once known
        self.first_epoch = 0
        self.positions = self.epoch_positions = self.batches = 0
        self.started = self.last_line = time.monotonic()

    def on_train_start(self, trainer: L.Trainer, module: L.LightningModule) -> None:
        self.first_epoch = trainer.current_epoch          # a resumed run's epochs before it
        self.started = self.last_line = time.monotonic()

    def on_train_epoch_start(self, trainer: L.Trainer, module: L.LightningModule) -> None:
        self.epoch_positions = self.batches = 0

    def on_train_batch_end(self, trainer: L.Trainer, module: L.LightningModule, outputs: Any,
                           batch: Any, batch_idx: int) -> None:
        self.positions += len(batch)
        self.epoch_positions += len(batch)
        self.batches += 1
        now = time.monotonic()
        if trainer.progress_bar_callback is None and now - self.last_line >= self.every_s:
            self.last_line = now
            self.show(trainer, f"epoch {trainer.current_epoch + 1}/{self.epochs}")

    def on_train_epoch_end(self, trainer: L.Trainer, module: L.LightningModule) -> None:
        if self.per_epoch is None:
            self.per_epoch = self.epoch_positions
        details = f"epoch {trainer.current_epoch + 1}/{self.epochs}"
        if self.metrics.last is not None and self.metrics.last[0] == trainer.current_epoch:
            _, train_loss, val_loss = self.metrics.last
            details += f", train loss {train_loss:.6f}, validation loss " + \
                ("none" if val_loss is None else f"{val_loss:.6f}")
        self.last_line = time.monotonic()
        self.show(trainer, details)

    def show(self, trainer: L.Trainer, details: str) -> None:
        per_epoch = self.per_epoch
        batches = trainer.num_training_batches
        if per_epoch is None and self.batches and batches != float("inf"):
            per_epoch = round(self.epoch_positions / self.batches * batches)
        earlier = self.first_epoch * (per_epoch or 0)
        total = None if per_epoch is None else per_epoch * self.epochs
        line = progress_line(f"train {self.model}", earlier + self.positions, total,
                             "positions", time.monotonic() - self.started, details, earlier)
        bar = trainer.progress_bar_callback
        if bar is not None:
            bar.print(line, file=sys.stderr)
        else:
            self.report(line)


def log_epoch(trainer: L.Trainer, row: Mapping[str, Any],
                      extra: Mapping[str, Any]) -> None:
    """The epoch's warehouse row as scalars at step = epoch + 1 for every logger
    (``epoch/<metric>`` in TensorBoard, ``per_epoch/<metric>`` in MLflow:
    :func:`pipelines.train.tracking.epoch_metrics`), flushed (a killed run keeps the epochs
    it finished)."""
    numbers = {k: float(v) for k, v in {**row, **extra}.items()
               if k not in ("epoch", "step") and isinstance(v, int | float)
               and not isinstance(v, bool)}
    for logger in trainer.loggers:
        logger.log_metrics(epoch_metrics(logger, numbers), step=row["epoch"] + 1)
        logger.save()


@dataclass(frozen=True)
class Run:
    """A training run's version and folder; ``resumed`` when it continues a killed run.
    ``lock`` holds the version for this run until :meth:`release` (or the process ends)."""

    kind: str
    version: int
    folder: Path
    resumed: bool
    lock: VersionLock | None = field(default=None, compare=False, repr=False)

    def release(self) -> None:
        if self.lock is not None:
            self.lock.release()

    @property
    def model_id(self) -> str:
        return model_id(self.kind, self.version)

    @property
    def last_checkpoint(self) -> Path | None:
        path = self.folder / LAST_CHECKPOINT
        return path if path.is_file() else None


def models_dir(lake: Lake, kind: str) -> Path:
    return lake.home / "models" / kind


def open_run(lake: Lake, kind: str, config: TrainConfig) -> Run:
    """The unfinished version trained with the same config by no live trainer (to resume),
    else a new one (:func:`pipelines.models.registry.allocate_version`)."""
    folder = models_dir(lake, kind)
    identity = config.run_identity()

    def resumable(path: Path) -> bool:
        marker = path / RUN_FILE
        return marker.is_file() and json.loads(marker.read_text())["identity"] == identity

    version, resumed, lock = allocate_version(folder, registered_versions(lake, kind), resumable)
    if not resumed:
        (folder / str(version) / RUN_FILE).write_text(json.dumps(
            {"identity": identity, "config": json.loads(config.to_json())}))
    return Run(kind, version, folder / str(version), resumed=resumed, lock=lock)


def lightning_trainer(config: TrainConfig, run: Run, lake: Lake,
                      callbacks: Sequence[L.Callback], report: Report = log.info) -> L.Trainer:
    # One checkpoint, last.ckpt, replaced (atomically, by Lightning) at the end of every epoch,
    # after its validation: a rerun resumes at the next epoch. (save_last alone saves nothing
    # when save_top_k=0, and save_last with top-k would keep two copies of the optimiser.)
    checkpoint = L.pytorch.callbacks.ModelCheckpoint(
        dirpath=run.folder, filename=LAST_CHECKPOINT.removesuffix(".ckpt"), save_top_k=1,
        enable_version_counter=False, save_on_train_epoch_end=True)
    metrics = EpochMetrics(lake, run.model_id)
    return L.Trainer(
        max_epochs=config.epochs, accelerator=config.accelerator, devices=1,
        callbacks=[metrics, EpochProgress(run.model_id, config.epochs, metrics, report),
                   *callbacks, checkpoint],
        logger=loggers(lake, run.model_id, config), log_every_n_steps=LOG_EVERY_STEPS,
        enable_progress_bar=config.progress, enable_model_summary=False,
        num_sanity_val_steps=0, default_root_dir=run.folder)


def train_model(lake: Lake, kind_name: str, kind: LightningKind, config: TrainConfig,
                callbacks: Sequence[L.Callback] = (), report: Report = log.info
                ) -> ModelVersion:
    """Train (or resume) a model of the kind named ``kind_name`` (its declaration's name: a
    copied kind folder trains under its own name) with ``kind``'s data, module and export,
    export it and register it; returns the version. ``report`` gets the progress lines
    (:class:`EpochProgress`)."""
    check_loggers(config)
    L.seed_everything(config.seed, workers=True, verbose=False)
    run = open_run(lake, kind_name, config)
    try:
        return run_training(lake, kind, config, run, callbacks, report)
    finally:
        run.release()


def run_training(lake: Lake, kind: LightningKind, config: TrainConfig, run: Run,
                 callbacks: Sequence[L.Callback], report: Report = log.info) -> ModelVersion:
    try:
        data = kind.data(lake, config, run.folder)
    except Exception:
        if not run.resumed:  # bad input: leave no empty version behind
            shutil.rmtree(run.folder, ignore_errors=True)
        raise
    if not run.resumed:
        lake.write("model_datasets", [{"model_id": run.model_id, **data.record,
                                       "recorded_at": registry.now()}])
        record_event(lake, run.model_id, "started", {"folder": str(run.folder)})
    log.info("%s %s in %s", "resuming" if run.resumed else "training", run.model_id, run.folder)
    module = kind.module(config)
    trainer = lightning_trainer(config, run, lake, callbacks, report)
    trainer.fit(module, data.train, data.validation, ckpt_path=run.last_checkpoint)
    if trainer.interrupted or trainer.current_epoch < config.epochs:
        raise TrainingError(f"{run.model_id}: training stopped at epoch {trainer.current_epoch}"
                            f" of {config.epochs}; rerun the same command to resume")
    return finish(lake, kind, config, run, module, data)


def finish(lake: Lake, kind: LightningKind, config: TrainConfig, run: Run, module: Any,
           data: KindData) -> ModelVersion:
    """Export and register: the models row marks the version finished (until then a rerun
    resumes it), the exported event records the artifact's hash and cross-check."""
    record_event(lake, run.model_id, "trained", {"epochs": config.epochs})
    exported = kind.export(module, run.folder, data, config)
    digest = sha256(exported.path)
    name = config.name or run.kind
    record_model(lake, run.kind, run.version, name, config.to_json(), exported.path, digest)
    record_event(lake, run.model_id, "exported",
                 {"path": str(exported.path), "sha256": digest, **exported.payload})
    return resolve_model(lake, run.model_id)


def sha256(path: Path) -> str:
    return file_sha256(path)
