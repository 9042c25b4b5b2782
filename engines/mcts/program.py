"""The Monte-Carlo engine as a UCI program (``chesslab engine mcts --variant combined``,
``python -m engines.uci mcts``); tournaments name it ``mcts:variant=combined`` (friends:
``mcts:variant=hp-see,epsilon=0.2``).

The command line picks a variant and overrides single switches; the resolved switches become
the defaults of UCI options of the same meaning, so a GUI can change any of them. ``go
nodes N`` means N iterations; ``info`` lines carry the principal variation, the iterations
(``nodes``), a centipawn score from the win rate of the best move and ``score mate N`` once
the solver has proved one.

>>> [o.name for o in PROGRAM.spec(MctsOptions(variant="combined")).options][:4]
['HeavyPlayouts', 'Epsilon', 'TieBreak', 'DecisiveMoves']
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engines.mcts import HEAVY_PLAYOUTS, TIE_BREAKS, VARIANTS, MctsConfig, MctsConfigError
from engines.uci import AUTHOR, EngineSpec, Program, Searcher, UciError, UciOption

#: A float switch left at this value keeps the variant's setting.
UNSET = -1.0


@dataclass
class MctsOptions:
    """Monte-Carlo tree search (UCT) of paper 001 with every MCC modification as a switch."""

    variant: str = field(default="mcc", metadata={
        "help": "the thesis' engine: " + ", ".join(VARIANTS), "choices": tuple(VARIANTS)})
    hp: str = field(default="", metadata={
        "help": "heavy playouts none|see|eval (empty: the variant's)",
        "choices": ("", *HEAVY_PLAYOUTS)})
    epsilon: float = field(default=UNSET, metadata={
        "help": "heavy playouts: probability of a random move (-1: the variant's)"})
    tie_break: str = field(default="", metadata={
        "help": "greedy ties: first|random (empty: the variant's)", "choices": ("", *TIE_BREAKS)})
    decisive: str = field(default="", metadata={
        "help": "decisive moves on|off (empty: the variant's)", "choices": ("", "on", "off")})
    tb_pieces: int = field(default=-1, metadata={
        "help": "tablebase cut-off at this many pieces, 0 off, 3 (-1: the variant's)"})
    k_bias: float = field(default=UNSET, metadata={
        "help": "progressive bias weight, 0 off (-1: the variant's)"})
    solver: str = field(default="", metadata={
        "help": "Monte-Carlo solver on|off (empty: the variant's)", "choices": ("", "on", "off")})
    repetition: int = field(default=0, metadata={
        "help": "a repetition is a draw at the 2nd or 3rd occurrence (0: the variant's, 2)"})
    draw_retries: int = field(default=0, metadata={
        "help": "playouts tried before a draw counts (0: the variant's; 6: draw-discarding)"})
    seed: int = field(default=0, metadata={"help": "playout seed, 0 = from the clock"})

    def __post_init__(self) -> None:
        self.config()      # every bad value is reported at start

    def config(self) -> MctsConfig:
        """The variant with the switches given on the command line applied."""
        overrides: dict[str, Any] = {"seed": self.seed}
        for name in ("hp", "tie_break"):
            if getattr(self, name):
                overrides[name] = getattr(self, name)
        for name in ("decisive", "solver"):
            if getattr(self, name):
                overrides[name] = getattr(self, name) == "on"
        for name in ("epsilon", "k_bias"):
            if getattr(self, name) != UNSET:
                overrides[name] = getattr(self, name)
        for name in ("tb_pieces",):
            if getattr(self, name) >= 0:
                overrides[name] = getattr(self, name)
        for name in ("repetition", "draw_retries"):
            if getattr(self, name):
                overrides[name] = getattr(self, name)
        try:
            return MctsConfig.variant(self.variant, **overrides)
        except MctsConfigError as exc:
            raise ValueError(f"mcts --variant {self.variant}: {exc}") from None

    @classmethod
    def tiny(cls) -> MctsOptions:
        return cls(seed=1)


def mcts_spec(options: MctsOptions | None = None) -> EngineSpec:
    """The engine the front end runs; the resolved switches are the UCI defaults."""
    options = options or MctsOptions()
    config = options.config()
    on_off = ("on", "off")
    uci_options = (
        UciOption("HeavyPlayouts", "combo", config.hp, choices=HEAVY_PLAYOUTS),
        UciOption("Epsilon", "string", str(config.epsilon)),
        UciOption("TieBreak", "combo", config.tie_break, choices=TIE_BREAKS),
        UciOption("DecisiveMoves", "combo", "on" if config.decisive else "off", choices=on_off),
        UciOption("TablebasePieces", "spin", config.tb_pieces, 0, 3),
        UciOption("ProgressiveBias", "string", str(config.k_bias)),
        UciOption("Solver", "combo", "on" if config.solver else "off", choices=on_off),
        UciOption("Repetition", "spin", config.repetition, 2, 3),
        UciOption("DrawRetries", "spin", config.draw_retries, 1, 100),
        UciOption("Seed", "spin", config.seed, 0, 2**31 - 1),
        UciOption("Hash", "spin", config.hash_mb, 1, 1 << 20),
    )
    # Hash only matters once a tree fills (hundreds of thousands of iterations): not part of
    # a player's identity, so tournaments keep their players.
    return EngineSpec(f"chesslab mcts ({options.variant})", AUTHOR, uci_options, make_searcher,
                      identity_excludes=("Seed", "Hash"))


def config_from_values(values: Mapping[str, Any]) -> MctsConfig:
    """The engine's switches from UCI option values; UciError naming a bad one."""
    try:
        return MctsConfig(
            hp=values["HeavyPlayouts"], epsilon=_number(values, "Epsilon"),
            tie_break=values["TieBreak"], decisive=values["DecisiveMoves"] == "on",
            tb_pieces=values["TablebasePieces"], k_bias=_number(values, "ProgressiveBias"),
            solver=values["Solver"] == "on", repetition=values["Repetition"],
            draw_retries=values["DrawRetries"], seed=values["Seed"], hash_mb=values["Hash"])
    except MctsConfigError as exc:
        raise UciError(str(exc)) from None


def _number(values: Mapping[str, Any], name: str) -> float:
    try:
        return float(values[name])
    except ValueError:
        raise UciError(f"option {name!r} takes a number, got {values[name]!r}") from None


def make_searcher(values: Mapping[str, Any]) -> Searcher:
    """A :class:`engines.mcts.MonteCarlo` for the UCI option values."""
    from engines.mcts import MonteCarlo

    return MonteCarlo(config_from_values(values))


PROGRAM = Program("mcts", MctsOptions, mcts_spec)

__all__ = ["PROGRAM", "MctsOptions", "config_from_values", "mcts_spec"]
