"""Training configuration every kind shares: :class:`TrainConfig` (a kind's config dataclass,
in its folder ``pipelines/kinds/<kind>/``, subclasses it; the CLI options of ``chesslab train
KIND`` come from it) and the named presets (tiny, small, full), which a kind's config may
adjust through its own ``PRESETS``."""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeVar

from engines.config_choices import choice_problem, literal_choices

Optimizer = Literal["adam", "sgd"]
Accelerator = Literal["auto", "cpu", "gpu"]
OPTIMIZERS = literal_choices(Optimizer)
C = TypeVar("C", bound="TrainConfig")


class TrainConfigError(ValueError):
    """A training option is out of range: names the option and the bad value."""


@dataclass(frozen=True)
class TrainConfig:
    """What every model kind's training shares: epochs, batches, optimiser, seed, device."""

    #: A kind's adjustments of the shared presets, ``{preset: {option: value}}``
    #: (:func:`preset`); none here.
    PRESET_VALUES: ClassVar[dict[str, dict[str, Any]]] = {}

    name: str | None = field(default=None, metadata={
        "help": "a label for the model (default: KIND-PRESET)"})
    epochs: int = field(default=20, metadata={"help": "passes over the training split"})
    batch_size: int = field(default=8192, metadata={"help": "positions per optimiser step"})
    learning_rate: float = field(default=1e-3, metadata={"help": "the optimiser's step size"})
    optimizer: Optimizer = field(default="adam", metadata={"help": "adam or sgd (momentum 0.9)"})
    lr_decay: float = field(default=1.0, metadata={
        "help": "the learning rate is multiplied by this after every epoch (1: constant)"})
    seed: int = field(default=42, metadata={
        "help": "seed of weights and of the per-epoch shuffle: the same seed trains the same net"})
    validation_percent: float = field(default=5.0, metadata={
        "help": "share of games (not positions) held out for validation, percent"})
    max_positions: int | None = field(default=None, metadata={
        "help": "read at most this many positions per split and epoch (default: all)"})
    read_batch: int = field(default=65536, metadata={
        "help": "rows per Arrow record batch streamed from DuckDB"})
    accelerator: Accelerator = field(default="auto", metadata={
        "help": "auto (a GPU when present, else the CPU), cpu or gpu"})
    progress: bool = field(default=True, metadata={"help": "show a progress bar"})
    mlflow: str | None = field(default=None, metadata={
        "help": "also log the run to MLflow at this tracking URI, a local store: "
                "file:./mlruns or sqlite:///mlflow.db (offline; needs pip install mlflow-skinny)"})

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "read_batch", "max_positions"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise TrainConfigError(f"{name}: must be at least 1, got {value!r}")
        if not self.learning_rate > 0:
            raise TrainConfigError(f"learning_rate: must be positive, got {self.learning_rate!r}")
        if not 0 < self.lr_decay <= 1:
            raise TrainConfigError(f"lr_decay: must be in (0, 1], got {self.lr_decay!r}")
        if not 0 < self.validation_percent < 100:
            raise TrainConfigError(
                f"validation_percent: must be between 0 and 100, got {self.validation_percent!r}")
        if (problem := choice_problem(self)) is not None:     # every Literal field, subclasses'
            raise TrainConfigError(problem)

    @property
    def validation_permille(self) -> int:
        return round(self.validation_percent * 10)

    def to_json(self) -> str:
        """The config as canonical JSON (what identifies a run for resuming)."""
        return json.dumps(dataclasses.asdict(self), sort_keys=True, separators=(",", ":"))

    def run_identity(self) -> str:
        """The JSON of the fields that change the trained net (not the progress bar, the
        loader's threads nor where MLflow logs)."""
        values = dataclasses.asdict(self)
        values.pop("progress")
        values.pop("mlflow")
        values.pop("loader_threads", None)
        return json.dumps(values, sort_keys=True, separators=(",", ":"))


# Presets: tiny runs in the tests in seconds on a CPU; small is a quick look on a laptop;
# full is paper 002's 20 epochs with Adam and nnue-pytorch-sized batches. A kind's config
# adjusts them in its own ``PRESET_VALUES`` (``{preset: {option: value}}``).
PRESETS: dict[str, dict[str, Any]] = {
    "tiny": dict(epochs=4, batch_size=64, learning_rate=3e-3, read_batch=256,
                 validation_percent=20.0, progress=False),
    "small": dict(epochs=5, batch_size=1024, learning_rate=1e-3, max_positions=200_000),
    "full": dict(epochs=20, batch_size=8192, learning_rate=1e-3),
}


def preset(config_cls: type[C], preset_name: str, /, **overrides: Any) -> C:
    """``config_cls`` with the preset's values (the shared :data:`PRESETS`, then the config
    class's own ``PRESET_VALUES``), then ``overrides``; a preset's options the config
    does not have are left out.

    >>> preset(TrainConfig, "tiny", epochs=2).batch_size
    64
    >>> preset(TrainConfig, "small").max_positions
    200000
    """
    if preset_name not in PRESETS:
        raise TrainConfigError(
            f"preset: must be one of {', '.join(PRESETS)}, got {preset_name!r}")
    known = {f.name for f in dataclasses.fields(config_cls)}
    own = config_cls.PRESET_VALUES.get(preset_name, {})
    values = {**{k: v for k, v in PRESETS[preset_name].items() if k in known}, **own,
              **overrides}
    return config_cls(**values)
