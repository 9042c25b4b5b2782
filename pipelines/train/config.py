"""Training configuration: one typed, validated dataclass per model kind (the CLI options of
``chesslab train KIND`` come from it) and named presets (tiny, small, full)."""
from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from typing import Any, TypeVar

OPTIMIZERS = ("adam", "sgd")
ACCELERATORS = ("auto", "cpu", "gpu")
KING_BUCKET_COUNTS = (1, 2, 4, 8, 16, 64)   # the layouts of pipelines.train.nnue.KING_BUCKETS
NNUE_ARCHS = ("halfkp", "psq768")
PSQ_ACTIVATIONS = ("crelu", "screlu")
C = TypeVar("C", bound="TrainConfig")


class TrainConfigError(ValueError):
    """A training option is out of range: names the option and the bad value."""


@dataclass(frozen=True)
class TrainConfig:
    """What every model kind's training shares: epochs, batches, optimiser, seed, device."""

    name: str | None = field(default=None, metadata={
        "help": "a label for the model (default: KIND-PRESET)"})
    epochs: int = field(default=20, metadata={"help": "passes over the training split"})
    batch_size: int = field(default=8192, metadata={"help": "positions per optimiser step"})
    learning_rate: float = field(default=1e-3, metadata={"help": "the optimiser's step size"})
    optimizer: str = field(default="adam", metadata={"help": "adam or sgd (momentum 0.9)"})
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
    accelerator: str = field(default="auto", metadata={
        "help": "auto (a GPU when present, else the CPU), cpu or gpu"})
    progress: bool = field(default=True, metadata={"help": "show a progress bar"})

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
        for name, allowed in (("optimizer", OPTIMIZERS), ("accelerator", ACCELERATORS)):
            if getattr(self, name) not in allowed:
                raise TrainConfigError(
                    f"{name}: must be one of {', '.join(allowed)}, got {getattr(self, name)!r}")

    @property
    def validation_permille(self) -> int:
        return round(self.validation_percent * 10)

    def to_json(self) -> str:
        """The config as canonical JSON (what identifies a run for resuming)."""
        return json.dumps(dataclasses.asdict(self), sort_keys=True, separators=(",", ":"))

    def run_identity(self) -> str:
        """The JSON of the fields that change the trained net (not the progress bar, nor the
        loader's threads)."""
        values = dataclasses.asdict(self)
        values.pop("progress")
        values.pop("loader_threads", None)
        return json.dumps(values, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class NnueConfig(TrainConfig):
    """``chesslab train nnue``: the HalfKP 41024 -> 256x2 -> 32 -> 32 -> 1 net of the shared
    contract, trained on Stockfish scores of the nnue_examples view; ``--arch psq768`` trains
    the perspective net 768 -> N x2 -> 1 instead."""

    arch: str = field(default="halfkp", metadata={
        "help": "halfkp (41024 -> 256x2 -> 32 -> 32 -> 1) or psq768 (768 -> N x2 -> 1: piece, "
                "colour and square from each side's view; --hidden, --activation)"})
    hidden: int = field(default=256, metadata={
        "help": "psq768's N: accumulator width per side, a multiple of 16 in 16..1024"})
    activation: str = field(default="screlu", metadata={
        "help": "psq768's activation: crelu (clipped ReLU) or screlu (its square)"})

    engine_id: tuple[str, ...] | None = field(default=None, metadata={
        "help": "label engine ids, comma-separated (default: the engine with the most "
                "labels); with several the data set is their union at --depth, and a position "
                "labelled by more than one keeps the label of the first listed"})
    depth: int | None = field(default=None, metadata={
        "help": "label depth (default: the deepest of the label engine's depths)"})
    score_scale: float = field(default=410.0, metadata={
        "help": "centipawns per unit of the sigmoid of the loss (paper 002: 410)"})
    eval_lambda: float = field(default=1.0, metadata={
        "help": "target = lambda * sigmoid(score) + (1 - lambda) * game result (nnue-pytorch's "
                "lambda; 1 = paper 002's pure score loss; positions without a result use 1)"})
    quiet_only: bool = field(default=True, metadata={
        "help": "train on quiet positions only: none whose label's best move is a capture or "
                "promotion (the engine evaluates at the end of quiescence)"})
    factorize: bool = field(default=True, metadata={
        "help": "train with nnue-pytorch's HalfKP factoriser: 641 extra piece-square columns "
                "shared by every king square, folded into the 41024 real ones at export (the "
                "exported net is unchanged in form; it learns from far fewer positions)"})
    king_features: bool = field(default=False, metadata={
        "help": "learn the king-relative HalfKP columns (Stockfish 12's net); without them "
                "(the default) the factoriser's piece-square table, shared by every king "
                "square, is the whole feature transformer, exported in the same HalfKP form: "
                "at a million positions it generalises far better (validation loss 0.0050 "
                "against 0.0060)"})
    king_buckets: int = field(default=1, metadata={
        "help": "1, 2, 4, 8, 16 or 64: a piece-square table per bucket of the own king's square "
                "(2: its wing; 4: wing, and back rank or not; 8: pairs of files, back rank or "
                "not; 16: pairs of files, ranks 1, 2, 3 and beyond; 64: every square), added to "
                "the shared one and exported in the same HalfKP form; 1 (the default) is the "
                "piece-square net, which cannot see where the kings stand"})
    train_percent: float = field(default=100.0, metadata={
        "help": "share of the training games kept, percent, chosen by a hash of the game "
                "independent of the validation split (which stays whole): the data-size knob "
                "of an Elo-against-positions curve; smaller shares are subsets of larger ones"})
    check_positions: int = field(default=10_000, metadata={
        "help": "positions of the validation split on which the exported net is cross-checked "
                "against the float model"})
    loader_threads: int | None = field(default=None, metadata={
        "help": "threads computing the training batches' features (default: min(4, CPU "
                "cores)); the batches are the same for any number"})

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.engine_id is not None and (not self.engine_id
                                           or len(set(self.engine_id)) != len(self.engine_id)):
            raise TrainConfigError(
                f"engine_id: give one or more distinct engine ids, got {self.engine_id!r}")
        if self.depth is not None and self.depth < 1:
            raise TrainConfigError(f"depth: must be at least 1, got {self.depth!r}")
        if not self.score_scale > 0:
            raise TrainConfigError(f"score_scale: must be positive, got {self.score_scale!r}")
        if not 0 < self.train_percent <= 100:
            raise TrainConfigError(
                f"train_percent: must be in (0, 100], got {self.train_percent!r}")
        if not 0 <= self.eval_lambda <= 1:
            raise TrainConfigError(
                f"eval_lambda: must be between 0 and 1, got {self.eval_lambda!r}")
        if not (self.factorize or self.king_features):
            raise TrainConfigError("king_features: false needs factorize: true (the net would "
                                   "have no feature columns to learn)")
        if self.king_buckets not in KING_BUCKET_COUNTS:
            raise TrainConfigError(f"king_buckets: one of {', '.join(map(str, KING_BUCKET_COUNTS))}"
                                   f", got {self.king_buckets!r}")
        if self.arch not in NNUE_ARCHS:
            raise TrainConfigError(f"arch: one of {', '.join(NNUE_ARCHS)}, got {self.arch!r}")
        if self.hidden % 16 or not 16 <= self.hidden <= 1024:
            raise TrainConfigError(
                f"hidden: a multiple of 16 in 16..1024, got {self.hidden!r}")
        if self.activation not in PSQ_ACTIVATIONS:
            raise TrainConfigError(f"activation: one of {', '.join(PSQ_ACTIVATIONS)}, got "
                                   f"{self.activation!r}")
        if self.check_positions < 1:
            raise TrainConfigError(
                f"check_positions: must be at least 1, got {self.check_positions!r}")
        if self.loader_threads is not None and self.loader_threads < 1:
            raise TrainConfigError(
                f"loader_threads: must be at least 1, got {self.loader_threads!r}")

    @property
    def encode_threads(self) -> int:
        """The loader's threads: ``loader_threads``, else min(4, CPU cores)."""
        return self.loader_threads or min(4, os.cpu_count() or 1)


# Presets: tiny runs in the tests in seconds on a CPU; small is a quick look on a laptop;
# full is paper 002's 20 epochs with Adam and nnue-pytorch-sized batches.
PRESETS: dict[str, dict[str, Any]] = {
    "tiny": dict(epochs=4, batch_size=64, learning_rate=3e-3, read_batch=256,
                 validation_percent=20.0, check_positions=200, progress=False),
    "small": dict(epochs=5, batch_size=1024, learning_rate=1e-3, max_positions=200_000),
    "full": dict(epochs=20, batch_size=8192, learning_rate=1e-3),
}
# Where a kind's preset differs. NNUE's tiny steps at 1e-3: at 3e-3 with batches of 64, Adam
# moves all 512 weights into a hidden unit the same way (its inputs are all positive), the
# units saturate in the first epoch and the net gives every position the same score (the
# demo's net did: 48 cp for each of 1,000 positions).
KIND_PRESETS: dict[type, dict[str, dict[str, Any]]] = {
    NnueConfig: {"tiny": dict(learning_rate=1e-3)},
}


def preset(config_cls: type[C], preset_name: str, /, **overrides: Any) -> C:
    """``config_cls`` with the preset's values, then ``overrides``.

    >>> preset(NnueConfig, "tiny", epochs=2).batch_size
    64
    >>> preset(NnueConfig, "tiny").learning_rate, preset(TrainConfig, "tiny").learning_rate
    (0.001, 0.003)
    """
    if preset_name not in PRESETS:
        raise TrainConfigError(
            f"preset: must be one of {', '.join(PRESETS)}, got {preset_name!r}")
    known = {f.name for f in dataclasses.fields(config_cls)}
    values = {**{k: v for k, v in PRESETS[preset_name].items() if k in known},
              **KIND_PRESETS.get(config_cls, {}).get(preset_name, {}), **overrides}
    return config_cls(**values)
