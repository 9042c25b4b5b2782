"""``chesslab train nnue``'s options: :class:`NnueConfig`, its architecture tables and its
presets (the shared ones of :mod:`pipelines.train.config`, adjusted in
:attr:`NnueConfig.PRESET_VALUES`)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from engines.config_choices import literal_choices
from pipelines.train.config import TrainConfig, TrainConfigError

Arch = Literal["halfkp", "psq768"]
Activation = Literal["crelu", "screlu"]
KingBuckets = Literal[1, 2, 4, 8, 16, 64]   # the layouts of pipelines.kinds.nnue.model.KING_BUCKETS
KING_BUCKET_COUNTS = literal_choices(KingBuckets)


@dataclass(frozen=True)
class NnueConfig(TrainConfig):
    """``chesslab train nnue``: the HalfKP 41024 -> 256x2 -> 32 -> 32 -> 1 net of the shared
    contract, trained on Stockfish scores of the nnue_examples view; ``--arch psq768`` trains
    the perspective net 768 -> N x2 -> 1 instead."""

    #: NNUE's tiny steps at 1e-3: at 3e-3 with batches of 64, Adam moves all 512 weights into
    #: a hidden unit the same way (its inputs are all positive), the units saturate in the
    #: first epoch and the net gives every position the same score (the demo's net did: 48 cp
    #: for each of 1,000 positions).
    PRESET_VALUES: ClassVar[dict[str, dict[str, Any]]] = {
        "tiny": dict(learning_rate=1e-3, check_positions=200)}

    arch: Arch = field(default="halfkp", metadata={
        "help": "halfkp (41024 -> 256x2 -> 32 -> 32 -> 1) or psq768 (768 -> N x2 -> 1: piece, "
                "colour and square from each side's view; --hidden, --activation)"})
    hidden: int = field(default=256, metadata={
        "help": "psq768's N: accumulator width per side, a multiple of 16 in 16..1024"})
    activation: Activation = field(default="screlu", metadata={
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
    king_buckets: KingBuckets = field(default=1, metadata={
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
    sparse: bool = field(default=True, metadata={
        "help": "on the CPU, compute the feature transformer on each position's active "
                "features only, forward and backward, with the compiled kernels (about 30 of "
                "768 inputs are set; the same net as PyTorch's dense ops, several times "
                "faster); --no-sparse: the dense ops (always so on a GPU)"})
    loader_threads: int | None = field(default=None, metadata={
        "help": "threads computing the training batches' features (default: min(4, CPU "
                "cores)); the batches are the same for any number"})

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.engine_id is not None and (not self.engine_id
                                           or len(set(self.engine_id)) != len(self.engine_id)):
            raise TrainConfigError(
                f"engine_id: give one or more distinct engine ids, got {self.engine_id!r}")
        if self.depth is not None and self.depth < 0:
            raise TrainConfigError(f"depth: must be at least 0 (0: labels of a node-count "
                                   f"search or annotations without a depth), got "
                                   f"{self.depth!r}")
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
        if self.hidden % 16 or not 16 <= self.hidden <= 1024:
            raise TrainConfigError(
                f"hidden: a multiple of 16 in 16..1024, got {self.hidden!r}")
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
