"""``policy_value``'s training options (kept apart from the kind: no torch import)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from engines.config_choices import literal_choices
from pipelines.train.config import TrainConfig, TrainConfigError

PolicyTarget = Literal["visits", "played"]
ValueTarget = Literal["outcome", "material"]
POLICY_TARGETS = literal_choices(PolicyTarget)
VALUE_TARGETS = literal_choices(ValueTarget)


@dataclass(frozen=True)
class PolicyValueConfig(TrainConfig):
    """The policy-value ResNet of the PUCT engine, trained on a self-play run's replay window
    (``selfplay_samples`` of rounds ``round - window + 1 .. round``); one version per round."""

    run_id: str = field(default="", metadata={"help": "the selfplay-train run"})
    round: int = field(default=1, metadata={"help": "the last round of the window"})
    window: int = field(default=4, metadata={"help": "rounds in the replay window"})
    updates: int = field(default=100, metadata={
        "help": "optimiser steps per version, batches drawn uniformly from the window (004: "
                "100 of 64 per 80 games)"})
    blocks: int = field(default=2, metadata={"help": "residual blocks (004: 8, 002: 10)"})
    channels: int = field(default=32, metadata={"help": "channels (002: 128)"})
    value_hidden: int = field(default=64, metadata={"help": "value head width (002: 256)"})
    policy_target: PolicyTarget = field(default="visits", metadata={
        "help": "visits (AlphaZero, 002) or played (the move played, 004)"})
    value_target: ValueTarget = field(default="outcome", metadata={
        "help": "outcome (the game's result) or material (002's material-shaped reward)"})
    search_weight: float = field(default=0.0, metadata={
        "help": "share of the search's root Q in the value target: (1 - w) * value_target + "
                "w * Q (the z and q average of 'Lessons from AlphaZero'; 0: the target alone)"})
    weight_decay: float = field(default=1e-4, metadata={"help": "L2 (AlphaZero: 1e-4)"})
    init_from: str = field(default="", metadata={
        "help": "artifact the weights start from (the run's previous version)"})

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("round", "window", "updates", "channels", "value_hidden"):
            if getattr(self, name) < 1:
                raise TrainConfigError(f"{name}: must be at least 1, got {getattr(self, name)!r}")
        if self.blocks < 0 or self.weight_decay < 0:
            raise TrainConfigError(f"blocks and weight_decay must not be negative, got "
                                   f"{self.blocks!r}, {self.weight_decay!r}")
        if not 0.0 <= self.search_weight <= 1.0:
            raise TrainConfigError(f"search_weight: must be in [0, 1], got "
                                   f"{self.search_weight!r}")
