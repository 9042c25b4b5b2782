"""Iteration policies that stop deepening when the volatility net says "stable".

- Fixed depth (``go depth D``): paper 003's algorithm 2 exactly, :class:`StableStopPolicy`:
  after depth D - 1 the net gets (position, V(D-1) - V(D-2), best move changed) and a
  probability above the threshold plays the depth D - 1 move.
- A clock (``go wtime ...``): the clock variant. After each completed depth from
  ``min_depth`` on, once at least ``min_soft_fraction`` of the soft time is spent, the net is
  asked with the last two iterations; "stable" stops deepening and banks the rest of the
  move's time. Everything else is the plain :class:`ClockPolicy`.

A random chooser with a given stop rate (the paper's control player) is the same policy with
:class:`RandomStability` in place of the net.
"""
from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

import chess

from engines.timeman import (
    Budget,
    ClockPolicy,
    Iteration,
    IterationPolicy,
    StabilityPredictor,
    StableStopPolicy,
    TimeManagementError,
    first_move,
    score_value,
)

log = logging.getLogger(__name__)


@dataclass
class RandomStability:
    """Says "stable" (1.0) with probability ``rate``, else 0.0: the random 6/7 chooser."""

    rate: float
    seed: int | None = None
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise TimeManagementError(f"random stop rate must be in [0, 1], got {self.rate!r}")
        self.rng = random.Random(self.seed)

    def __call__(self, board: chess.Board, delta_value: int, pv_changed: bool,
                 value: int) -> float:
        return 1.0 if self.rng.random() < self.rate else 0.0


@dataclass
class VolatilityPolicy:
    """Algorithm 2 under a fixed depth, the clock variant under a clock (see the module)."""

    stability: StabilityPredictor
    threshold: float
    min_depth: int = 5
    min_soft_fraction: float = 0.25
    fallback: IterationPolicy = field(default_factory=ClockPolicy)
    stops: int = 0      # searches the net ended early (for the info line and tests)
    asked: int = 0

    def __post_init__(self) -> None:
        self.fixed = StableStopPolicy(self.stability, self.threshold, self.fallback)
        if self.min_depth < 2:
            raise TimeManagementError(f"min_depth must be >= 2, got {self.min_depth!r}")
        if not 0.0 <= self.min_soft_fraction <= 1.0:
            raise TimeManagementError(
                f"min_soft_fraction must be in [0, 1], got {self.min_soft_fraction!r}")

    def should_continue(self, board: chess.Board, completed: Sequence[Iteration],
                        budget: Budget, elapsed_s: float) -> bool:
        if not self.fallback.should_continue(board, completed, budget, elapsed_s):
            return False
        if not self.asks(completed, budget, elapsed_s):
            return True
        self.asked += 1
        going_on = self.fixed.should_continue(board, completed, budget, elapsed_s) \
            if budget.soft_s is None else not self.stable(board, completed)
        self.stops += not going_on
        return going_on

    def asks(self, completed: Sequence[Iteration], budget: Budget, elapsed_s: float) -> bool:
        """Whether the net is consulted after the last completed depth."""
        if len(completed) < 2 or budget.infinite:
            return False
        if budget.soft_s is None:  # fixed depth: only after depth max - 1 (algorithm 2)
            return completed[-1].depth == budget.max_depth - 1
        if budget.hard_s is None or budget.soft_s >= budget.hard_s:  # movetime: no banking
            return False
        return completed[-1].depth >= self.min_depth \
            and elapsed_s >= self.min_soft_fraction * budget.soft_s

    def stable(self, board: chess.Board, completed: Sequence[Iteration]) -> bool:
        previous, last = completed[-2], completed[-1]
        delta = score_value(last) - score_value(previous)
        probability = self.stability(board, delta, first_move(last) != first_move(previous),
                                     score_value(last))
        return probability > self.threshold
