"""AlphaZero-style PUCT over a policy-value network (papers 002 and 004).

:class:`PuctConfig` holds the search's switches (no torch import here: the UCI program's
start stays fast); :mod:`engines.puct.search` is the search, :mod:`engines.puct.network` the
net, :mod:`engines.puct.encoding` the input planes and the 8x8x73 move encoding.

Selection rules (``formula``), values in [-1, 1] from the mover's view at every node (negamax:
this is paper 004's "White maximises, Black minimises" with the sign fixed, i.e. Black takes
``argmin(Q - c P / (1 + N))``, not ``argmin(Q + c P / (1 + N))``):

- ``alphazero``: ``Q + (log((Np + C1 + 1) / C1) + C2) * P * sqrt(Np) / (1 + N)``, C1 = 19652,
  C2 = 1.25 (paper 002's constants, AlphaZero's pseudocode);
- ``tjack``: paper 002's formula as printed, ``(log((Np + C1 + 1) / C1) + C2 * sqrt(Np) /
  (N + 1)) * P + Q``;
- ``chessbreaker``: paper 004's ``Q + c(n) * P / (1 + N)``, c annealed linearly from
  ``c_start`` (1) to ``c_end`` (0.2) over the simulations of one search; with ``max_depth`` 4
  and ``temperature`` 0.2 it is the paper's search.

First-play urgency, the Q an unvisited child is selected by: ``fpu`` (absolute; AlphaZero's
0, a draw), or with ``fpu_reduction`` r > 0 Lc0's reduction strategy, the node's own Q (its
net value and the values backed up through it) minus ``r * sqrt(sum of visited priors)``: a
move the net thinks little of is tried once the ones it likes have shown their worth, in
won and lost positions alike, where an absolute draw value over- or under-rates every
unvisited move.
"""
from __future__ import annotations

from dataclasses import dataclass

FORMULAS = ("alphazero", "tjack", "chessbreaker")
#: Paper 002's PUCT constants (AlphaZero's pb_c_base and pb_c_init).
C1, C2 = 19652.0, 1.25


class PuctConfigError(ValueError):
    """A PUCT switch out of range: names it and the bad value."""


@dataclass(frozen=True)
class PuctConfig:
    """The search's switches."""

    formula: str = "alphazero"      # see the module docstring
    c1: float = C1                   # AlphaZero / Tjack: log term base
    c2: float = C2                   # AlphaZero / Tjack: exploration constant
    c_start: float = 1.0             # ChessBreaker: c at the first simulation
    c_end: float = 0.2               # ChessBreaker: c at the last simulation
    max_depth: int = 0               # plies below the root where the net's value ends a
                                     # simulation without expanding (0 = no cap; 004: 4)
    batch: int = 8                   # leaves evaluated per network call (virtual loss)
    fpu: float = 0.0                 # Q of an unvisited child (first-play urgency)
    fpu_reduction: float = 0.0       # > 0: an unvisited child's Q is the node's Q minus this
                                     # times sqrt(prior mass already visited) (Lc0), not fpu
    temperature: float = 0.0         # move choice: 0 = most visited, else N ** (1 / t)
    noise_alpha: float = 0.0         # Dirichlet noise on the root priors (0 = none, 004)
    noise_share: float = 0.25
    seed: int = 0                    # temperature and noise draws

    def __post_init__(self) -> None:
        if self.formula not in FORMULAS:
            raise PuctConfigError(
                f"formula: must be one of {', '.join(FORMULAS)}, got {self.formula!r}")
        for name in ("c1", "c2", "c_start", "c_end", "temperature", "noise_alpha",
                     "fpu_reduction"):
            if getattr(self, name) < 0:
                raise PuctConfigError(f"{name}: must not be negative, got {getattr(self, name)!r}")
        if self.max_depth < 0 or self.batch < 1:
            raise PuctConfigError(f"max_depth >= 0 and batch >= 1, got {self.max_depth!r}, "
                                  f"{self.batch!r}")
        if not 0 <= self.noise_share <= 1 or not -1 <= self.fpu <= 1:
            raise PuctConfigError(f"noise_share in [0, 1] and fpu in [-1, 1], got "
                                  f"{self.noise_share!r}, {self.fpu!r}")

    @classmethod
    def chessbreaker(cls, **overrides: object) -> PuctConfig:
        """Paper 004's search: annealed c, depth cap 4, temperature 0.2, no noise."""
        values: dict[str, object] = dict(formula="chessbreaker", max_depth=4, temperature=0.2)
        return cls(**{**values, **overrides})  # type: ignore[arg-type]


__all__ = ["C1", "C2", "FORMULAS", "PuctConfig", "PuctConfigError"]
