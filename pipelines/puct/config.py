"""``chesslab selfplay-train``'s options: one typed config, presets ``tiny`` and ``small``."""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from engines.config_choices import choice_problem
from engines.puct import FORMULAS
from engines.stamps import content_id
from pipelines.games.config import GamesOptions
from pipelines.kinds.policy_value.config import PolicyTarget, ValueTarget

Starts = Literal["endgames", "startpos", "mixed"]
#: Fields that do not change what a run computes (left out of its id).
NOT_IDENTITY = ("rounds", "workers", "progress", "preset", "runner")
#: Fields added after runs existed, left out of the id at these values, so a run started
#: before a field existed keeps its id (and resumes) under the new code.
ADDED_DEFAULTS: dict[str, Any] = {"search_weight": 0.0, "tablebases": ""}
#: The Debian package gaviotatb's 3-piece tables (``--tablebases gaviota``).
GAVIOTA_DIR = "/usr/share/gaviotatb/gtb4"


class SelfplayTrainError(ValueError):
    """A selfplay-train option out of range: names it and the bad value."""


@dataclass(frozen=True)
class SelfplayTrainConfig:
    """Rounds of PUCT self-play with the run's latest net, each followed by a Lightning update
    on the replay window that registers a new ``policy_value`` version (papers 004, 002)."""

    preset: str = field(default="tiny", metadata={"help": "tiny or small (sets the defaults)"})
    rounds: int = field(default=2, metadata={"help": "rounds to reach (a rerun continues)"})
    games: int = field(default=4, metadata={"help": "self-play games per round (004: 80)"})
    simulations: int = field(default=16, metadata={"help": "PUCT simulations per move (004: "
                                                           "100, 002: 600)"})
    formula: str = field(default="alphazero", metadata={
        "help": "selection rule: " + ", ".join(FORMULAS), "choices": FORMULAS})
    max_depth: int = field(default=0, metadata={"help": "tree depth cap, 0 none (004: 4)"})
    temperature: float = field(default=1.0, metadata={
        "help": "move choice over the first --temperature-plies plies (visits ** (1/t))"})
    temperature_plies: int = field(default=8, metadata={"help": "plies played with it"})
    late_temperature: float = field(default=0.2, metadata={
        "help": "temperature afterwards (004: 0.2 throughout; 0 = most visited)"})
    fast_share: float = field(default=0.0, metadata={
        "help": "share of moves searched with --fast-simulations and not recorded (002's "
                "playout cap randomisation: 0.75)"})
    fast_simulations: int = field(default=8, metadata={"help": "simulations of a fast move"})
    max_plies: int = field(default=60, metadata={"help": "a game longer than this is a draw"})
    tablebases: str = field(default="", metadata={
        "help": "tablebase folders whose won, lost or drawn endings end a game at once, as the "
                "checkpoints' adjudication ('gaviota': the gaviotatb package's 3-piece tables; "
                "'': none)"})
    starts: Starts = field(default="endgames", metadata={
        "help": "endgames (004's random 3-7 piece starts), startpos, or mixed (every other)"})
    policy_target: PolicyTarget = field(default="visits", metadata={
        "help": "visits (AlphaZero) or played (004)"})
    value_target: ValueTarget = field(default="outcome", metadata={
        "help": "outcome or material (002's material-shaped target)"})
    material_scale: float = field(default=10.0, metadata={
        "help": "material target = clip((own - opponent) / scale, -1, 1), pawn 1, knight and "
                "bishop 3, rook 5, queen 9"})
    search_weight: float = field(default=0.0, metadata={
        "help": "share of the search's root Q in the value target: (1 - w) * target + w * Q "
                "(0: the target alone)"})
    window: int = field(default=4, metadata={"help": "rounds in the replay window"})
    updates: int = field(default=20, metadata={"help": "optimiser steps per round"})
    batch_size: int = field(default=32, metadata={"help": "positions per step (004: 64)"})
    learning_rate: float = field(default=2e-3, metadata={"help": "AdamW step size"})
    blocks: int = field(default=1, metadata={"help": "residual blocks"})
    channels: int = field(default=16, metadata={"help": "channels"})
    value_hidden: int = field(default=32, metadata={"help": "value head width"})
    seed: int = field(default=1, metadata={"help": "seed of starts, moves and weights"})
    workers: int = field(default=1, metadata={
        "help": "games played at once (a local Dask cluster of N worker processes; with "
                "--cluster: games at once on the cluster)"})
    progress: bool = field(default=False, metadata={"help": "Lightning's progress bar"})
    runner: GamesOptions = field(default_factory=GamesOptions, metadata={
        "help": "where the games are played (--cluster, ...)"})

    def __post_init__(self) -> None:
        for name in ("rounds", "games", "simulations", "fast_simulations", "max_plies",
                     "window", "updates", "batch_size", "channels", "value_hidden", "workers"):
            if getattr(self, name) < 1:
                raise SelfplayTrainError(
                    f"{name}: must be at least 1, got {getattr(self, name)!r}")
        if self.preset not in PRESETS:
            raise SelfplayTrainError(f"preset: one of {', '.join(PRESETS)}, got {self.preset!r}")
        if self.formula not in FORMULAS:
            raise SelfplayTrainError(
                f"formula: one of {', '.join(FORMULAS)}, got {self.formula!r}")
        if (problem := choice_problem(self)) is not None:
            raise SelfplayTrainError(problem)
        if not 0 <= self.fast_share < 1 or self.material_scale <= 0 or self.blocks < 0:
            raise SelfplayTrainError("fast_share in [0, 1), material_scale > 0, blocks >= 0")
        for folder in filter(None, (self.tablebase_folders() or "").split(os.pathsep)):
            if not Path(folder).is_dir():
                raise SelfplayTrainError(f"tablebases: folder {folder!r} not found")
        if not 0 <= self.search_weight <= 1:
            raise SelfplayTrainError(f"search_weight: must be in [0, 1], got "
                                     f"{self.search_weight!r}")

    def games_options(self) -> GamesOptions:
        """The games runner, as ``selfplay``'s: ``workers`` processes of one game each (one:
        in this process), or the ``--cluster``."""
        if self.runner.cluster:
            return self.runner
        return dataclasses.replace(self.runner, workers=self.workers if self.workers > 1 else 0,
                                   games_per_worker=self.runner.games_per_worker or 1)

    def tablebase_folders(self) -> str | None:
        """The folders of ``tablebases`` ('gaviota' resolved), None for none."""
        if not self.tablebases:
            return None
        return GAVIOTA_DIR if self.tablebases.lower() == "gaviota" else self.tablebases

    @property
    def run_id(self) -> str:
        """``pv-<hash>`` of everything that changes what the run computes."""
        values = {k: v for k, v in dataclasses.asdict(self).items() if k not in NOT_IDENTITY
                  and not (k in ADDED_DEFAULTS and ADDED_DEFAULTS[k] == v)}
        return f"pv-{content_id(values, n=10)}"   # 10 digits: the run ids already stored


PRESETS: dict[str, dict[str, Any]] = {
    "tiny": {},
    "small": dict(rounds=6, games=24, simulations=48, max_plies=100, updates=100,
                  batch_size=64, blocks=2, channels=32, value_hidden=64, window=3,
                  learning_rate=2e-3, workers=2),
}


def preset_config(name: str, **overrides: Any) -> SelfplayTrainConfig:
    """The preset's values, then ``overrides`` (None values are ignored).

    >>> preset_config("small", rounds=2).games
    24
    """
    if name not in PRESETS:
        raise SelfplayTrainError(f"preset: one of {', '.join(PRESETS)}, got {name!r}")
    given = {k: v for k, v in overrides.items() if v is not None}
    return SelfplayTrainConfig(**{**PRESETS[name], **given, "preset": name})
