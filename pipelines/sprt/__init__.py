"""Fishtest's generalised SPRT (GSPRT) on game-pair (pentanomial) or game (trinomial) counts.

The log-likelihood ratio compares the maximum-likelihood result distribution constrained to
Elo ``elo1`` with the one constrained to ``elo0`` (M. Van den Bergh's "GSPRT" notes). Two Elo
models as on fishtest: ``normalized`` (the default: the constraint is on the t-value
``(mu - 1/2) / sigma``, normalised Elo ``nelo = t * 800 / ln 10`` per game pair scaled by
sqrt(2)) and ``logistic`` (the constraint is on the expected score ``1 / (1 + 10^(-elo/400))``).

Pentanomial counts are ``[LL, LD+DL, LW+DD+WL, DW+WD, WW]`` (from the first player's side),
trinomial ones ``[L, D, W]``; empty cells get 1e-3 so every MLE exists.

>>> result = sprt([0, 10, 20, 10, 0], elo0=0, elo1=2)
>>> result.decision
'continue'
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from engines.config_choices import choice_problem

NELO_PER_T = 800 / math.log(10)   # normalised Elo per unit of t-value (per game pair)
#: The normalised-Elo MLE (fishtest's fixed point, started from the uniform distribution)
#: exists for t-values below 2 sqrt(2) / 3 on game pairs and sqrt(24) / 5 on single games:
#: bounds of |Elo| below these (about 231.6 and 340.4 normalised Elo).
NORMALIZED_LIMITS = {5: 2 / 3 * NELO_PER_T, 3: math.sqrt(24) / 5 * NELO_PER_T}
EMPTY_CELL = 1e-3                  # fishtest's regularisation of empty cells
SprtModel = Literal["normalized", "logistic"]

Pdf = list[tuple[float, float]]   # (outcome value in [0, 1], probability)


class SprtError(ValueError):
    """Bad SPRT input: quotes the bad counts or parameter."""


@dataclass(frozen=True)
class SprtConfig:
    """A GSPRT of H0: Elo = elo0 against H1: Elo = elo1.

    elo0: Elo under H0 (normalised or logistic, see ``model``).
    elo1: Elo under H1, > elo0.
    alpha: probability of accepting H1 when H0 holds, in (0, 1).
    beta: probability of accepting H0 when H1 holds, in (0, 1).
    model: ``normalized`` (fishtest's default) or ``logistic``.
    """

    elo0: float = field(default=0.0, metadata={
        "help": "Elo under H0. 0,2 are fishtest's bounds for a small change of an engine; "
                "'chesslab evaluate' defaults to 0,10 because it tests a new model for a large "
                "gain within its 400-game cap"})
    elo1: float = field(default=2.0, metadata={"help": "Elo under H1, above elo0"})
    alpha: float = field(default=0.05, metadata={
        "help": "probability of accepting H1 when H0 holds"})
    beta: float = field(default=0.05, metadata={
        "help": "probability of accepting H0 when H1 holds"})
    model: SprtModel = field(default="normalized", metadata={
        "help": "Elo model of the bounds: normalized (fishtest's) or logistic"})

    def __post_init__(self) -> None:
        if not self.elo1 > self.elo0:
            raise SprtError(f"elo1 must exceed elo0, got elo0={self.elo0!r} elo1={self.elo1!r}")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0 < value < 1:
                raise SprtError(f"{name} must be in (0, 1), got {value!r}")
        if problem := choice_problem(self):
            raise SprtError(problem)

    def check_cells(self, cells: int) -> None:
        """SprtError naming the bounds when the normalized model cannot test them on counts
        of ``cells`` cells (5: game pairs, 3: games)."""
        limit = NORMALIZED_LIMITS.get(cells)
        if self.model != "normalized" or limit is None:
            return
        if max(abs(self.elo0), abs(self.elo1)) >= limit:
            unit = "game pairs" if cells == 5 else "single games"
            raise SprtError(
                f"SPRT bounds elo0={self.elo0:g}, elo1={self.elo1:g}: the normalized Elo "
                f"model tests bounds within ±{limit:.1f} on {unit} (such as fishtest's 0,2 "
                f"or chesslab evaluate's 0,10)")

    def describe(self) -> str:
        """The test's parameters, as every SPRT output shows them.

        >>> SprtConfig().describe()
        'SPRT elo0=0 elo1=2 alpha=0.05 beta=0.05 (normalized Elo)'
        """
        return (f"SPRT elo0={self.elo0:g} elo1={self.elo1:g} alpha={self.alpha:g} "
                f"beta={self.beta:g} ({self.model} Elo)")

    @property
    def lower_bound(self) -> float:
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper_bound(self) -> float:
        return math.log((1 - self.beta) / self.alpha)


@dataclass(frozen=True)
class SprtResult:
    """The LLR of the counts, the bounds and the decision (``H1``, ``H0`` or ``continue``)."""

    counts: tuple[int, ...]
    llr: float
    lower_bound: float
    upper_bound: float
    config: SprtConfig | None = None      # the test's parameters, shown by describe()
    swept: str | None = None              # H1 or H0 when a sweep stopped it (see sweep())

    @property
    def decision(self) -> str:
        if self.swept is not None:
            return self.swept
        if self.llr >= self.upper_bound:
            return "H1"
        if self.llr <= self.lower_bound:
            return "H0"
        return "continue"

    def describe(self) -> str:
        verdict = {"H1": "accept H1", "H0": "reject H1 (accept H0)", "continue": "continue"}
        head = f"{self.config.describe()}: " if self.config is not None else ""
        how = (f" (a sweep: the first {sum(self.counts)} game pairs all "
               f"{'won' if self.swept == 'H1' else 'lost'})" if self.swept else "")
        return (f"{head}LLR {self.llr:.3f} ({self.lower_bound:.3f}, {self.upper_bound:.3f}) "
                f"-> {verdict[self.decision]}{how}")

    def as_dict(self) -> dict[str, object]:
        """The result as a JSON-ready document (``--format json``).

        >>> sprt([10, 100, 200, 110, 20]).as_dict()["decision"]
        'continue'
        """
        test = dataclasses.asdict(self.config) if self.config is not None else {}
        return {**test, "counts": list(self.counts), "llr": self.llr,
                "lower_bound": self.lower_bound, "upper_bound": self.upper_bound,
                "decision": self.decision}

    def short(self) -> str:
        """``LLR 0.27 (-2.94, 2.94)``: for a line per game."""
        return f"LLR {self.llr:.2f} ({self.lower_bound:.2f}, {self.upper_bound:.2f})"


def sprt(counts: Sequence[int], elo0: float = 0.0, elo1: float = 2.0, alpha: float = 0.05,
         beta: float = 0.05, model: SprtModel = "normalized") -> SprtResult:
    """Run the test on ``counts`` (5 pentanomial or 3 trinomial cells)."""
    config = SprtConfig(elo0, elo1, alpha, beta, model)
    return SprtResult(tuple(counts), llr(counts, config), config.lower_bound,
                      config.upper_bound, config)


def llr(counts: Sequence[int], config: SprtConfig) -> float:
    """The generalised log-likelihood ratio of H1 against H0."""
    check_counts(counts)
    config.check_cells(len(counts))
    n, pdf = counts_to_pdf(counts)
    return n * sum(p * step for (_, p), step in zip(pdf, llr_steps(pdf, config), strict=True))


def llr_steps(pdf: Pdf, config: SprtConfig) -> list[float]:
    """log(q1 / q0) per outcome: what one more game (pair) with that outcome adds to the LLR,
    q0 and q1 the distributions nearest ``pdf`` under H0 and H1."""
    if config.model == "logistic":
        s0, s1 = expected_score(config.elo0), expected_score(config.elo1)
        p0, p1 = mle_expectation(pdf, s0), mle_expectation(pdf, s1)
    else:
        per_pair = math.sqrt(2) if len(pdf) == 5 else 1.0
        t0, t1 = (elo / NELO_PER_T * per_pair for elo in (config.elo0, config.elo1))
        p0, p1 = mle_t_value(pdf, 0.5, t0), mle_t_value(pdf, 0.5, t1)
    return [math.log(q1 / q0) for (_, q0), (_, q1) in zip(p0, p1, strict=True)]


@dataclass(frozen=True)
class SprtForecast:
    """How a GSPRT goes when the true strength difference is ``elo`` (logistic Elo) at
    ``draw_ratio``: the LLR's drift and variance per game pair, the probability that it
    accepts H1, and the expected number of game pairs until it stops (Wald's
    approximations for a random walk between the bounds, overshoot ignored)."""

    elo: float
    draw_ratio: float
    drift: float
    variance: float
    p_h1: float
    pairs: float
    config: SprtConfig | None = None

    @property
    def games(self) -> float:
        return 2 * self.pairs

    def describe(self) -> str:
        head = f"{self.config.describe()}: " if self.config is not None else ""
        return (f"{head}true Elo {self.elo:+g} with {self.draw_ratio:.0%} draws: LLR "
                f"{self.drift:+.5f} a game pair (sd {math.sqrt(self.variance):.3f}); "
                f"accepts H1 with probability {self.p_h1:.2f} after about "
                f"{self.pairs:,.0f} game pairs ({self.games:,.0f} games) on average")


def forecast(config: SprtConfig, elo: float, draw_ratio: float) -> SprtForecast:
    """The test's expected course at a true ``elo`` and ``draw_ratio``. The two games of a
    pair are taken as independent; openings that favour one side make pairs less variable,
    so real tests of that kind stop somewhat sooner.

    >>> f = forecast(SprtConfig(0, 10), elo=38.4, draw_ratio=0.21)
    >>> f.p_h1 > 0.999, round(f.games, -1)
    (True, 940.0)
    """
    config.check_cells(5)
    pdf = pair_pdf(elo, draw_ratio)
    steps = llr_steps(pdf, config)
    drift = sum(p * step for (_, p), step in zip(pdf, steps, strict=True))
    variance = sum(p * step * step for (_, p), step in zip(pdf, steps, strict=True)) - drift ** 2
    a, b = config.lower_bound, config.upper_bound
    if abs(drift) * (b - a) < 1e-9 * variance:     # no drift: a symmetric walk
        p_h1, pairs = -a / (b - a), -a * b / variance
    else:
        # P(upper first) of a walk with this drift and variance; exponents shifted to stay
        # finite when the drift is large
        k = -2 * drift / variance
        top = max(k * a, k * b, 0.0)
        p_h1 = (math.exp(-top) - math.exp(k * a - top)) / \
            (math.exp(k * b - top) - math.exp(k * a - top))
        pairs = (p_h1 * b + (1 - p_h1) * a) / drift
    return SprtForecast(elo, draw_ratio, drift, variance, p_h1, pairs, config)


def pair_pdf(elo: float, draw_ratio: float) -> Pdf:
    """The pentanomial distribution of a game pair: two independent games scoring
    ``expected_score(elo)`` each with ``draw_ratio`` draws."""
    score = expected_score(elo)
    win, loss = score - draw_ratio / 2, 1 - score - draw_ratio / 2
    if not 0 <= draw_ratio < 1 or win < 0 or loss < 0:
        raise SprtError(f"{draw_ratio:.0%} draws cannot score {score:.1%} (Elo {elo:+g}): "
                        f"need draws <= {2 * min(score, 1 - score):.0%}")
    game = (loss, draw_ratio, win)
    cells = [0.0] * 5
    for i, p in enumerate(game):
        for j, q in enumerate(game):
            cells[i + j] += p * q
    return [(i / 4, max(c, 1e-12)) for i, c in enumerate(cells)]


def check_counts(counts: Sequence[int]) -> None:
    if len(counts) not in (3, 5) or any(c < 0 for c in counts) or sum(counts) == 0:
        raise SprtError(f"need 5 pentanomial or 3 trinomial non-negative counts, got "
                        f"{list(counts)!r}")


def counts_to_pdf(counts: Sequence[int]) -> tuple[float, Pdf]:
    cells = [c if c else EMPTY_CELL for c in counts]
    n = sum(cells)
    last = len(cells) - 1
    return n, [(i / last, c / n) for i, c in enumerate(cells)]


def expected_score(elo: float) -> float:
    return 1 / (1 + 10 ** (-elo / 400))


def mean_variance(pdf: Pdf) -> tuple[float, float]:
    mean = sum(p * a for a, p in pdf)
    return mean, sum(p * (a - mean) ** 2 for a, p in pdf)


def solve_secular(pdf: Pdf) -> float:
    """The root x of sum_i p_i a_i / (1 + x a_i) = 0 between the poles -1/max a, -1/min a
    (the Lagrange multiplier of the constrained MLE); bisection to machine precision."""
    values = [a for a, _ in pdf]
    if not min(values) < 0 < max(values):  # SprtConfig.check_cells keeps bounds from this
        raise SprtError("the SPRT's likelihood has no maximum at these bounds: narrow them")
    lo, hi = -1 / max(values), -1 / min(values)
    span = hi - lo
    lo, hi = lo + span * 1e-12, hi - span * 1e-12

    def f(x: float) -> float:
        return sum(p * a / (1 + x * a) for a, p in pdf)

    # f decreases from +inf at the lower pole to -inf at the upper one
    for _ in range(200):
        mid = (lo + hi) / 2
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-16 * max(1.0, abs(mid)):
            break
    return (lo + hi) / 2


def mle_expectation(pdf: Pdf, score: float) -> Pdf:
    """The distribution closest (in likelihood) to ``pdf`` whose mean is ``score``."""
    shifted = [(a - score, p) for a, p in pdf]
    x = solve_secular(shifted)
    return [(a, p / (1 + x * (a - score))) for a, p in pdf]


def mle_t_value(pdf: Pdf, reference: float, t: float) -> Pdf:
    """The distribution closest to ``pdf`` whose t-value ``(mu - reference) / sigma`` is ``t``:
    a fixed point of the expectation-constrained MLE with the constraint linearised around
    the current sigma (fishtest's normalised-Elo notes, section 4.1)."""
    current = [(a, 1 / len(pdf)) for a, _ in pdf]
    for _ in range(100):
        mu, var = mean_variance(current)
        sigma = math.sqrt(var)
        shifted = [(a - reference - t * sigma * (1 + ((mu - a) / sigma) ** 2) / 2, p)
                   for a, p in pdf]
        x = solve_secular(shifted)
        new = [(a, p / (1 + x * s)) for (a, p), (s, _) in zip(pdf, shifted, strict=False)]
        change = max(abs(q - r) for (_, q), (_, r) in zip(new, current, strict=False))
        current = new
        if change < 1e-12:
            break
    return current


def sweep(counts: Sequence[int], pairs: int) -> str | None:
    """The stop rule for a broken engine: ``H1`` once at least ``pairs`` complete game pairs
    were played and the first player won every game of them, ``H0`` once it lost every one;
    None otherwise, and always with ``pairs`` 0 (off) or trinomial counts.

    The GSPRT gains little on a one-sided sample: its maximum-likelihood distributions under
    both hypotheses sit next to the observed one, so each won pair adds only about the Elo
    gap's worth (0.020 at normalized 0, 5: 147 won pairs, 294 games, to accept H1; 80-0
    gives LLR 0.806, as fishtest computes it). Between engines no stronger than Elo 0 a pair
    is won twice with probability at most 1/4 (no draws), so a sweep of ``pairs`` pairs
    happens by chance with probability at most 4**-pairs (10 pairs: below 1e-6).

    >>> sweep([0, 0, 0, 0, 10], 10), sweep([10, 0, 0, 0, 0], 10), sweep([0, 0, 1, 0, 9], 10)
    ('H1', 'H0', None)
    >>> sweep([0, 0, 0, 0, 9], 10), sweep([0, 0, 0, 0, 40], 0)
    (None, None)
    """
    played = sum(counts)
    if pairs <= 0 or len(counts) != 5 or played < pairs:
        return None
    return "H1" if counts[4] == played else "H0" if counts[0] == played else None


def pentanomial(pair_scores: Sequence[float]) -> list[int]:
    """Counts [LL, LD+DL, LW+DD+WL, DW+WD, WW] from each game pair's total score (0..2)."""
    counts = [0] * 5
    for total in pair_scores:
        index = round(total * 2)
        if not 0 <= index <= 4 or abs(index - total * 2) > 1e-9:
            raise SprtError(f"a game pair scores 0, 0.5, ..., 2 points, got {total!r}")
        counts[index] += 1
    return counts
