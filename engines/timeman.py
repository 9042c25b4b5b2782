"""Time management: from UCI ``go`` parameters to a search budget, and when to stop deepening.

Two pieces, each replaceable:

- :func:`plan` turns the ``go`` limits (``depth``, ``nodes``, ``movetime``, or a clock with
  ``wtime/btime/winc/binc/movestogo``) and the side to move into a :class:`Budget`: a maximum
  depth, a node limit, a *soft* time (do not start another iteration after it) and a *hard*
  time (abort the running iteration). A move never uses more than the clock allows: a move
  overhead (GUI and pipe lag) is always kept back, and the hard limit is a fraction of what is
  left, so a run of moves on a tiny clock still leaves time for the next one.
- An :class:`IterationPolicy` is asked after every completed depth whether to start the next.
  :class:`ClockPolicy` (the default) stops at the soft limit, or earlier when the next
  iteration, predicted from the growth of the previous ones, could not finish before the hard
  limit. :class:`StableStopPolicy` is the hook for paper 003's algorithm 2 ("iterative
  deepening with max iteration management"): on the iteration before the last one, a
  stability predictor (the volatility model, trained elsewhere) may stop one ply early.

>>> go = GoLimits(wtime=60_000, btime=60_000, winc=1_000, binc=1_000)
>>> budget = plan(go, chess.WHITE)
>>> round(budget.soft_s, 3), round(budget.hard_s, 3)
(2.999, 8.997)
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import chess

from engines.mate import mate_value

log = logging.getLogger(__name__)

#: Depth used when a ``go`` sets no depth limit (the search ends on time, nodes or stop).
MAX_DEPTH = 100


class TimeManagementError(ValueError):
    """A ``go`` limit that cannot be searched (negative time, zero depth, ...)."""


@dataclass(frozen=True)
class GoLimits:
    """The limits of one UCI ``go`` command; times in milliseconds, ``None`` when not given."""

    depth: int | None = None
    nodes: int | None = None
    movetime: int | None = None
    wtime: int | None = None
    btime: int | None = None
    winc: int | None = None
    binc: int | None = None
    movestogo: int | None = None
    mate: int | None = None  # look for a mate in this many moves
    infinite: bool = False
    searchmoves: tuple[str, ...] = ()  # UCI moves the root is restricted to; () = every move

    def __post_init__(self) -> None:
        for name in ("depth", "nodes", "movestogo", "mate"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise TimeManagementError(f"go {name} must be at least 1, got {value!r}")
        for name in ("movetime", "winc", "binc"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise TimeManagementError(f"go {name} must not be negative, got {value!r}")

    @property
    def has_clock(self) -> bool:
        return self.wtime is not None or self.btime is not None


@dataclass(frozen=True)
class Budget:
    """What one search may spend. Times are seconds from the start of the search."""

    max_depth: int = MAX_DEPTH
    max_nodes: int | None = None
    soft_s: float | None = None  # do not start a new iteration after this
    hard_s: float | None = None  # abort the running iteration at this
    infinite: bool = False  # search until told to stop; bestmove only after "stop"
    mate: int | None = None  # stop as soon as a mate in this many moves (or fewer) is found

    def hard_deadline(self, start: float) -> float | None:
        """The hard limit as a ``time.monotonic()`` instant, for the searcher."""
        return None if self.hard_s is None else start + self.hard_s


@dataclass(frozen=True)
class TimeConfig:
    """How a clock is divided between moves."""

    move_overhead_ms: int = field(default=30, metadata={
        "help": "milliseconds kept back on every move for GUI and pipe lag"})
    moves_to_go: int = field(default=30, metadata={
        "help": "moves the rest of the clock is spread over when the GUI sends no movestogo"})
    hard_factor: float = field(default=3.0, metadata={
        "help": "hard limit = this many times the per-move target (capped by hard_fraction)"})
    hard_fraction: float = field(default=0.4, metadata={
        "help": "never plan to use more than this fraction of the clock left on one move"})
    last_move_fraction: float = field(default=0.8, metadata={
        "help": "fraction of the clock left the last move before the time control may use"})
    min_think_ms: int = field(default=5, metadata={
        "help": "smallest hard limit; depth 1 is always completed anyway"})

    def __post_init__(self) -> None:
        if self.move_overhead_ms < 0:
            raise TimeManagementError(
                f"move_overhead_ms must be >= 0, got {self.move_overhead_ms!r}")
        if self.moves_to_go < 1:
            raise TimeManagementError(f"moves_to_go must be >= 1, got {self.moves_to_go!r}")
        if self.hard_factor < 1.0:
            raise TimeManagementError(f"hard_factor must be >= 1, got {self.hard_factor!r}")
        if not 0.0 < self.hard_fraction <= 1.0:
            raise TimeManagementError(
                f"hard_fraction must be in (0, 1], got {self.hard_fraction!r}")
        if not 0.0 < self.last_move_fraction <= 1.0:
            raise TimeManagementError(
                f"last_move_fraction must be in (0, 1], got {self.last_move_fraction!r}")
        if self.min_think_ms < 1:
            raise TimeManagementError(f"min_think_ms must be >= 1, got {self.min_think_ms!r}")

    @classmethod
    def tiny(cls) -> TimeConfig:
        """The preset used by tests: a small overhead so short clocks are exercised."""
        return cls(move_overhead_ms=10)


def plan(go: GoLimits, turn: chess.Color, config: TimeConfig = TimeConfig()) -> Budget:
    """The budget of one search; every limit given applies, the tightest one wins.

    >>> plan(GoLimits(depth=6), chess.BLACK)
    Budget(max_depth=6, max_nodes=None, soft_s=None, hard_s=None, infinite=False, mate=None)
    >>> plan(GoLimits(movetime=500), chess.WHITE).hard_s
    0.47
    """
    times = [t for t in (_movetime_limits(go, config), _clock_limits(go, turn, config)) if t]
    soft = min((s for s, _ in times), default=None)
    hard = min((h for _, h in times), default=None)
    if go.infinite:
        soft = hard = None
    max_depth = go.depth or MAX_DEPTH
    if go.mate is not None:  # a mate in n moves lies 2n - 1 plies deep; keep 2 plies of slack
        max_depth = min(max_depth, 2 * go.mate + 1)
    return Budget(max_depth=max_depth, max_nodes=go.nodes, soft_s=soft, hard_s=hard,
                  infinite=go.infinite, mate=go.mate)


def _movetime_limits(go: GoLimits, config: TimeConfig) -> tuple[float, float] | None:
    """``go movetime``: all of it but the overhead, as both soft and hard limit."""
    if go.movetime is None:
        return None
    seconds = max(go.movetime - config.move_overhead_ms, config.min_think_ms) / 1000
    return seconds, seconds


def _clock_limits(go: GoLimits, turn: chess.Color,
                  config: TimeConfig) -> tuple[float, float] | None:
    """A clock: the time left (less the overhead) over the moves to go, plus the increment.

    The soft limit is that per-move target; the hard limit is ``hard_factor`` targets, but
    never more than ``hard_fraction`` of the time left (``last_move_fraction`` when this is
    the last move before the time control, ``movestogo 1``). The increment is only
    credited after the move, so it never lets a move use time the clock does not have.
    """
    if not go.has_clock:
        return None
    clock = go.wtime if turn == chess.WHITE else go.btime
    increment = (go.winc if turn == chess.WHITE else go.binc) or 0
    if clock is None:  # only the opponent's clock was sent: think as if ours were the same
        clock = go.btime if turn == chess.WHITE else go.wtime
    assert clock is not None
    left_ms = max(clock - config.move_overhead_ms, 0)
    moves = go.movestogo or config.moves_to_go
    cap_ms = left_ms * (config.last_move_fraction if moves == 1 else config.hard_fraction)
    target_ms = min(left_ms / moves + increment, cap_ms)
    hard_ms = min(target_ms * config.hard_factor, cap_ms)
    soft_ms = max(target_ms, config.min_think_ms)
    hard_ms = max(hard_ms, config.min_think_ms)
    return soft_ms / 1000, hard_ms / 1000


# --------------------------------------------------------------------------------------------
# Iteration policies: asked after every completed depth whether to search the next one.
# --------------------------------------------------------------------------------------------

class Iteration(Protocol):
    """What a policy reads from a completed depth (a :class:`engines.search_report.
    SearchReport` fits)."""

    depth: int
    score_cp: int | None
    score_mate: int | None
    time_s: float
    pv: list[chess.Move]


class IterationPolicy(Protocol):
    """Decides between iterations; ``completed`` is every depth finished so far, in order."""

    def should_continue(self, board: chess.Board, completed: Sequence[Iteration],
                        budget: Budget, elapsed_s: float) -> bool: ...


#: Bounds on the predicted time ratio of one iteration to the previous one.
MIN_BRANCHING, MAX_BRANCHING = 1.5, 6.0
#: Below this an iteration's time says nothing about the next (timer and thread noise).
MEASURABLE_S = 0.002


def predicted_next_s(completed: Sequence[Iteration]) -> float:
    """The time the next iteration will probably take: the last one times the observed growth.

    ``time_s`` of a result is the time since the search started, so one iteration's own time
    is the difference between consecutive results.

    >>> from types import SimpleNamespace as It
    >>> round(predicted_next_s([It(time_s=0.1), It(time_s=0.4)]), 6)  # 0.1 s, 0.3 s: growth 3
    0.9
    """
    if not completed:
        return 0.0
    times = [r.time_s for r in completed]
    spans = [b - a for a, b in zip([0.0, *times[:-1]], times, strict=True)]
    last = spans[-1]
    if len(spans) >= 2 and spans[-2] >= MEASURABLE_S:
        growth = min(max(last / spans[-2], MIN_BRANCHING), MAX_BRANCHING)
    else:
        growth = MAX_BRANCHING / 2
    return last * growth


@dataclass
class ClockPolicy:
    """Stop deepening at the soft limit, or when the next iteration would not end in time.

    When the last iteration changed the best move or lost ``score_drop_cp`` or more, the
    position is not settled: the soft limit is stretched by ``unstable_factor`` (still
    bounded by the hard limit), the "invest in searching slightly deeper" rule paper 003
    describes for fluctuating evaluations. On a clock it also stops once a forced mate was
    found and searched a few plies beyond its length, and at once when only one legal move
    exists (thinking cannot change that move). ``go depth``/``go nodes`` searches without a
    clock run to their limit; ``go movetime`` deepens until its time is up (time saved on a
    movetime is lost, so no prediction cuts it short).
    """

    mate_extra_plies: int = 4
    unstable_factor: float = 2.0
    score_drop_cp: int = 30

    def should_continue(self, board: chess.Board, completed: Sequence[Iteration],
                        budget: Budget, elapsed_s: float) -> bool:
        if not completed or budget.infinite:
            return True
        last = completed[-1]
        if budget.mate is not None and last.score_mate is not None \
                and 0 < last.score_mate <= budget.mate:
            return False
        if budget.soft_s is None or budget.hard_s is None:
            return True
        if last.score_mate is not None \
                and last.depth >= 2 * abs(last.score_mate) + self.mate_extra_plies:
            return False
        if board.legal_moves.count() == 1:
            return False
        if budget.soft_s >= budget.hard_s:  # go movetime: the time is given, not banked
            return elapsed_s < budget.hard_s
        soft = budget.soft_s * (self.unstable_factor if self.unstable(completed) else 1.0)
        if elapsed_s >= soft:
            return False
        return elapsed_s + predicted_next_s(completed) < budget.hard_s

    def unstable(self, completed: Sequence[Iteration]) -> bool:
        """The last iteration changed the best move or dropped the score."""
        if len(completed) < 2:
            return False
        previous, last = completed[-2], completed[-1]
        return first_move(last) != first_move(previous) \
            or score_value(last) <= score_value(previous) - self.score_drop_cp


#: ``stability(board, delta_value, pv_changed, value) -> probability that the position is
#: stable``; ``value`` is the last iteration's score (V6), which only some nets read.
StabilityPredictor = Callable[[chess.Board, int, bool, int], float]


@dataclass
class StableStopPolicy:
    """Paper 003, algorithm 2: search a stable position one ply less than the maximum depth.

    After the iteration at ``max_depth - 1`` completes, the predictor gets the position, the
    change of the score between the last two iterations (``delta_value``, centipawns),
    whether their best moves differ (``pv_changed``) and the last score (``value``, for nets
    that read it); when it returns more than
    ``threshold`` the search stops there. The paper's threshold is 0.76 (its Table 4.1).
    Every other decision is left to ``fallback`` (the clock).
    """

    stability: StabilityPredictor
    threshold: float = 0.76
    fallback: IterationPolicy = field(default_factory=ClockPolicy)

    def __post_init__(self) -> None:
        if not 0.0 <= self.threshold <= 1.0:
            raise TimeManagementError(f"threshold must be in [0, 1], got {self.threshold!r}")

    def should_continue(self, board: chess.Board, completed: Sequence[Iteration],
                        budget: Budget, elapsed_s: float) -> bool:
        if not self.fallback.should_continue(board, completed, budget, elapsed_s):
            return False
        if len(completed) < 2 or completed[-1].depth != budget.max_depth - 1:
            return True
        previous, last = completed[-2], completed[-1]
        delta = score_value(last) - score_value(previous)
        pv_changed = first_move(last) != first_move(previous)
        stable = self.stability(board, delta, pv_changed, score_value(last))
        log.debug("depth %d: stability %.3f (delta %d, pv changed %s)",
                  last.depth, stable, delta, pv_changed)
        return not stable > self.threshold


def score_value(result: Iteration) -> int:
    """A result's score as one number: centipawns, or +-(MATE - plies) for a mate
    (:func:`engines.mate.mate_value`)."""
    if result.score_mate is not None:
        return mate_value(result.score_mate)
    return result.score_cp if result.score_cp is not None else 0


def first_move(result: Iteration) -> chess.Move | None:
    return result.pv[0] if result.pv else None


@dataclass
class TimeManager:
    """A budget planner and an iteration policy together, as the UCI front end uses them."""

    config: TimeConfig = field(default_factory=TimeConfig)
    policy: IterationPolicy = field(default_factory=ClockPolicy)

    def plan(self, go: GoLimits, turn: chess.Color) -> Budget:
        return plan(go, turn, self.config)

    def should_continue(self, board: chess.Board, completed: Sequence[Iteration],
                        budget: Budget, elapsed_s: float) -> bool:
        return self.policy.should_continue(board, completed, budget, elapsed_s)

