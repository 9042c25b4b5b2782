"""``chesslab train volatility``'s options (kept apart from the kind: no torch import)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pipelines.train.config import TrainConfig, TrainConfigError

Arch = Literal["dense", "conv"]
#: The input sets (engines.volatility.features.INPUT_SETS, named here without numpy).
InputSet = Literal["paper", "value"]
#: Paper 003's widths: dense 2 x 50 (section 4.2), convolutional 100 filters (section 4.3).
DEFAULT_WIDTH = {"dense": 50, "conv": 100}


@dataclass(frozen=True)
class VolatilityConfig(TrainConfig):
    """``chesslab train volatility``: paper 003's stability classifier (will one more ply
    change the evaluation?) on the volatility_examples view, split by game."""

    arch: Arch = field(default="dense", metadata={
        "help": "dense (774 -> 50 -> 50 -> 1) or conv (12x8x8 planes, 2 conv layers, and the "
                "6 side inputs, concatenated)"})
    width: int | None = field(default=None, metadata={
        "help": "neurons/filters per layer (default: the paper's, dense 50, conv 100)"})
    beta: float = field(default=18.0, metadata={
        "help": "stable when |V7 - V6| < beta centipawns (formula 3.1; the paper's 18)"})
    engine_id: str | None = field(default=None, metadata={
        "help": "label engine id (default: the engine with the most positions at 5, 6, 7)"})
    inputs: InputSet = field(default="paper", metadata={
        "help": "paper (its 774 inputs) or value (those and V6, the depth-6 score: the size of "
                "the score says how far it can still move)"})
    target_fpr: float = field(default=0.005, metadata={
        "help": "false-positive rate the deployed threshold is chosen at (the paper: 0.005)"})

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.width is not None and self.width < 1:
            raise TrainConfigError(f"width: must be at least 1, got {self.width!r}")
        if not self.beta > 0:
            raise TrainConfigError(f"beta: must be positive, got {self.beta!r}")
        if not 0 < self.target_fpr < 1:
            raise TrainConfigError(f"target_fpr: must be in (0, 1), got {self.target_fpr!r}")

    @property
    def hidden(self) -> int:
        return self.width or DEFAULT_WIDTH[self.arch]
