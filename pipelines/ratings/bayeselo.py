"""BayesElo (Rémi Coulom): Bradley-Terry ratings with a draw and a white-advantage parameter.

The model, for White ``i`` against Black ``j`` with strengths ``gamma = 10 ** (elo / 400)``,
``theta_w = 10 ** (advantage / 400)`` and ``theta_d = 10 ** (drawelo / 400)``::

    P(white wins)  = theta_w * g_i / (theta_w * g_i + theta_d * g_j)
    P(white loses) = g_j / (theta_d * theta_w * g_i + g_j)
    P(draw)        = 1 - P(white wins) - P(white loses)

Ratings are fitted by minorisation-maximisation (Hunter 2004) after adding ``prior`` virtual
draws spread over each player's opponents, exactly as bayeselo's ``mm [a] [d]`` command; the
printed ratings are multiplied by bayeselo's Elo scale ``4x / (1 + x)^2`` with
``x = 10 ** (-drawelo / 400)``, so a 100-point difference still means the usual expected
score. Intervals are by default those ``mm`` leaves (the diagonal of the Hessian of the
log-likelihood, bayeselo's ``variance``), so that the default table is bayeselo's
``readpgn; elo; mm; ratings``; the likelihood of superiority comes from the covariance (the
inverse of the Hessian, bayeselo's ``covariance`` and ``los``).

>>> games = [Game("A", "B", 1.0), Game("B", "A", 0.5), Game("A", "B", 0.5)]
>>> table = fit(games)
>>> [row.name for row in table.rows]
['A', 'B']
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

LOG10_OVER_400 = math.log(10.0) / 400.0
DEFAULT_ADVANTAGE = 32.8    # bayeselo's default white advantage, Elo
DEFAULT_DRAWELO = 97.3      # bayeselo's default draw Elo
DEFAULT_PRIOR = 2.0         # bayeselo's default number of virtual draws
MAX_ITERATIONS = 10000
INTERVALS = ("covariance", "variance", "exact")
Score = float               # White's score: 1, 0.5 or 0


class RatingsError(ValueError):
    """Bad input to a rating fit: names the player, anchor or result."""


@dataclass(frozen=True)
class Game:
    """One decisive or drawn game: who had White, who had Black, White's score."""

    white: str
    black: str
    result: Score

    def __post_init__(self) -> None:
        if self.result not in (0.0, 0.5, 1.0):
            raise RatingsError(f"game {self.white} - {self.black}: bad result {self.result!r}")
        if self.white == self.black:
            raise RatingsError(f"game of {self.white!r} against itself")


@dataclass(frozen=True)
class RatingsConfig:
    """How to fit ratings (bayeselo's commands in brackets).

    prior: virtual draws per player spread over its opponents (``prior``), >= 0.
    advantage: White's advantage in Elo when not estimated (``advantage``).
    drawelo: draw Elo when not estimated (``drawelo``), > 0.
    fit_advantage: estimate the advantage from the games (``mm 1 x``).
    fit_drawelo: estimate the draw Elo from the games (``mm x 1``).
    confidence: level of the intervals (``confidence``), in (0, 1).
    anchors: players whose printed rating is fixed; one anchor shifts the table (``offset``),
        several are held fixed while the others are fitted (a rating ladder).
    epsilon: convergence threshold of the MM iterations (bayeselo stops at 1e-5, which
        leaves its Elos up to about 0.1 short of the maximum).
    scale: factor applied to printed ratings; None is bayeselo's own (``4x / (1 + x)^2``,
        ``x = 10 ** (-drawelo / 400)``, set by ``mm``), 1.0 is the unscaled Bradley-Terry Elo
        of bayeselo versions before the scale existed (``scale 1``).
    intervals: ``variance`` (the diagonal of the Hessian, what ``mm`` leaves: bayeselo's
        default), ``covariance`` (the full Hessian, ``covariance``) or ``exact`` (each
        player's likelihood with the others fixed, ``exactdist``: asymmetric). A ladder
        (several anchors) always takes the free players' covariance, the anchors none.
    """

    prior: float = DEFAULT_PRIOR
    advantage: float = DEFAULT_ADVANTAGE
    drawelo: float = DEFAULT_DRAWELO
    fit_advantage: bool = False
    fit_drawelo: bool = False
    confidence: float = 0.95
    anchors: Mapping[str, float] = field(default_factory=dict)
    epsilon: float = 1e-10
    scale: float | None = None
    intervals: str = "variance"

    def __post_init__(self) -> None:
        if self.prior < 0:
            raise RatingsError(f"prior must be >= 0, got {self.prior!r}")
        if self.drawelo <= 0:
            raise RatingsError(f"drawelo must be > 0, got {self.drawelo!r}")
        if not 0 < self.confidence < 1:
            raise RatingsError(f"confidence must be in (0, 1), got {self.confidence!r}")
        if self.scale is not None and self.scale <= 0:
            raise RatingsError(f"scale must be > 0, got {self.scale!r}")
        if self.intervals not in INTERVALS:
            raise RatingsError(f"intervals must be one of {INTERVALS}, got {self.intervals!r}")
        if self.epsilon <= 0:
            raise RatingsError(f"epsilon must be > 0, got {self.epsilon!r}")


@dataclass(frozen=True)
class PlayerRating:
    """One row of bayeselo's ``ratings`` table (Elo values already scaled and offset)."""

    rank: int
    name: str
    elo: float
    plus: float
    minus: float
    games: int
    score: float          # points scored
    oppo: float           # games-weighted average rating of the opponents
    draws: int

    @property
    def score_pct(self) -> float:
        return 100.0 * self.score / self.games if self.games else 0.0

    @property
    def draw_pct(self) -> float:
        return 100.0 * self.draws / self.games if self.games else 0.0


@dataclass(frozen=True)
class RatingTable:
    """Ratings sorted best first, the likelihood-of-superiority matrix in the same order."""

    rows: list[PlayerRating]
    los: list[list[float]]
    advantage: float
    drawelo: float
    scale: float
    intervals: str = "variance"      # how the intervals were computed (a ladder: covariance)
    confidence: float = 0.95

    def by_name(self) -> dict[str, PlayerRating]:
        return {row.name: row for row in self.rows}

    def los_between(self, better: str, worse: str) -> float:
        names = [row.name for row in self.rows]
        return self.los[names.index(better)][names.index(worse)]


class Results:
    """Condensed results: per ordered pair (white, black) the wins, draws and losses of White,
    with the prior's virtual draws kept apart so the table can still show true counts."""

    def __init__(self, players: Sequence[str], games: Iterable[Game]) -> None:
        self.players = list(players)
        self.index = {name: i for i, name in enumerate(self.players)}
        n = len(self.players)
        self.wins = [[0.0] * n for _ in range(n)]
        self.draws = [[0.0] * n for _ in range(n)]
        self.losses = [[0.0] * n for _ in range(n)]
        self.true_games = [[0] * n for _ in range(n)]   # between i and j, either colour
        for game in games:
            self.add(game)
        self.virtual_draws = [[0.0] * n for _ in range(n)]

    def add(self, game: Game) -> None:
        w, b = self.index[game.white], self.index[game.black]
        table = {1.0: self.wins, 0.5: self.draws, 0.0: self.losses}[game.result]
        table[w][b] += 1
        self.true_games[w][b] += 1
        self.true_games[b][w] += 1

    def opponents(self, i: int) -> list[int]:
        return [j for j in range(len(self.players)) if self.true_games[i][j]]

    def add_prior(self, prior: float) -> None:
        """bayeselo's AddPrior: each player's ``prior / 4`` virtual draws per colour, spread
        over its opponents in proportion to the games played against each. bayeselo stores
        each pair twice (once per player's view) and adds the share to both views of the
        same games; this table holds each game once, so the share is added once."""
        for i in range(len(self.players)):     # every player has played (fit's players)
            share = prior * 0.25 / sum(self.true_games[i])
            for j in self.opponents(i):
                virtual = share * self.true_games[i][j]
                self.virtual_draws[i][j] += virtual
                self.virtual_draws[j][i] += virtual

    def d(self, i: int, j: int) -> float:
        return self.draws[i][j] + self.virtual_draws[i][j]


def fit(games: Sequence[Game], config: RatingsConfig | None = None) -> RatingTable:
    """BayesElo ratings of every player in ``games``."""
    config = config or RatingsConfig()
    players = sorted({g.white for g in games} | {g.black for g in games})
    if len(players) < 2:
        raise RatingsError(f"need games between at least two players, got {players}")
    unknown = sorted(set(config.anchors) - set(players))
    if unknown:
        raise RatingsError(f"anchor {unknown[0]!r} played no game (players: {players})")
    results = Results(players, games)
    results.add_prior(config.prior)
    model = Model(results, config)
    model.fit()
    return model.table()


class Model:
    """The fitted parameters: internal (unscaled) Elos, advantage and draw Elo."""

    def __init__(self, results: Results, config: RatingsConfig) -> None:
        self.results = results
        self.config = config
        n = len(results.players)
        self.gamma = [1.0] * n
        self.theta_w = 10 ** (config.advantage / 400)
        self.theta_d = 10 ** (config.drawelo / 400)
        self.fixed = {results.index[name] for name in config.anchors}
        self.elo = [0.0] * n

    @property
    def scale(self) -> float:
        if self.config.scale is not None:
            return self.config.scale
        x = 10 ** (-self.drawelo / 400)
        return 4 * x / (1 + x) ** 2

    @property
    def drawelo(self) -> float:
        return 400 * math.log10(self.theta_d)

    @property
    def advantage(self) -> float:
        return 400 * math.log10(self.theta_w)

    def fit(self) -> None:
        """MM iterations; with several anchors, their Elo depends on the scale (and so on the
        draw Elo), so the fit is repeated until the scale stops moving."""
        if len(self.fixed) < 2:
            self.minorize_maximize()
            self.elo = [400 * math.log10(g) for g in self.gamma]
            mean = sum(self.elo) / len(self.elo)
            self.elo = [e - mean for e in self.elo]
            return
        for _ in range(50):
            scale = self.scale
            for name, rating in self.config.anchors.items():
                self.gamma[self.results.index[name]] = 10 ** (rating / scale / 400)
            self.minorize_maximize()
            if abs(self.scale - scale) < 1e-12:
                break
        self.elo = [400 * math.log10(g) for g in self.gamma]

    def minorize_maximize(self) -> None:
        for _ in range(MAX_ITERATIONS):
            diff = self.update_gammas()
            if self.config.fit_advantage:
                new = self.next_theta_w()
                diff, self.theta_w = max(diff, abs(new - self.theta_w)), new
            if self.config.fit_drawelo:
                new = self.next_theta_d()
                diff, self.theta_d = max(diff, abs(new - self.theta_d)), new
            if diff < self.config.epsilon:
                return

    def update_gammas(self) -> float:
        """One MM step on every free player; returns the largest relative change."""
        r, tw, td, g = self.results, self.theta_w, self.theta_d, self.gamma
        diff = 0.0
        for i in reversed(range(len(g))):
            if i in self.fixed:
                continue
            a = b = 0.0
            for j in r.opponents(i):
                a += r.wins[i][j] + r.d(i, j) + r.losses[j][i] + r.d(j, i)
                b += ((r.d(i, j) + r.wins[i][j]) * tw / (tw * g[i] + td * g[j])
                      + (r.d(i, j) + r.losses[i][j]) * td * tw / (td * tw * g[i] + g[j])
                      + (r.d(j, i) + r.wins[j][i]) * td / (tw * g[j] + td * g[i])
                      + (r.d(j, i) + r.losses[j][i]) / (td * tw * g[j] + g[i]))
            new = a / b
            diff = max(diff, abs(new - g[i]) / (new + g[i]))
            g[i] = new
        return diff

    def next_theta_w(self) -> float:
        r, tw, td, g = self.results, self.theta_w, self.theta_d, self.gamma
        numerator = denominator = 0.0
        for i in range(len(g)):
            for j in r.opponents(i):
                numerator += r.wins[i][j] + r.d(i, j)
                denominator += ((r.d(i, j) + r.wins[i][j]) * g[i] / (tw * g[i] + td * g[j])
                                + (r.d(i, j) + r.losses[i][j]) * td * g[i]
                                / (td * tw * g[i] + g[j]))
        return numerator / denominator

    def next_theta_d(self) -> float:
        r, tw, td, g = self.results, self.theta_w, self.theta_d, self.gamma
        numerator = denominator = 0.0
        for i in range(len(g)):
            for j in r.opponents(i):
                numerator += r.d(i, j)
                denominator += ((r.d(i, j) + r.wins[i][j]) * g[j] / (tw * g[i] + td * g[j])
                                + (r.d(i, j) + r.losses[i][j]) * tw * g[i]
                                / (td * tw * g[i] + g[j]))
        c = numerator / denominator
        return c + math.sqrt(c * c + 1)

    def curvature(self, i: int, j: int) -> float:
        """Minus the second derivative of the log-likelihood in elo_i, elo_j (i != j)."""
        r, tw, td = self.results, self.theta_w, self.theta_d
        gi, gj = 10 ** (self.elo[i] / 400), 10 ** (self.elo[j] / 400)
        h = ((r.wins[i][j] + r.d(i, j)) / (tw * gi + td * gj) ** 2
             + (r.losses[i][j] + r.d(i, j)) / (td * tw * gi + gj) ** 2
             + (r.wins[j][i] + r.d(j, i)) / (tw * gj + td * gi) ** 2
             + (r.losses[j][i] + r.d(j, i)) / (td * tw * gj + gi) ** 2)
        return h * gi * gj * td * tw * LOG10_OVER_400 ** 2

    def information(self) -> list[list[float]]:
        """The observed information matrix (minus the Hessian) of the Elos."""
        n = len(self.elo)
        info = [[0.0] * n for _ in range(n)]
        for i in range(n):
            for j in self.results.opponents(i):
                h = self.curvature(i, j)
                info[i][j] -= h
                info[i][i] += h
        return info

    def covariance(self) -> list[list[float]]:
        """Covariance of the internal Elos. Free ratings (no or one anchor) are defined up to
        a constant, fixed by their mean being zero: bayeselo eliminates the last player and
        maps back with A = I - 1/n (its ``covariance`` command). With several anchors the
        anchors have no variance and the others get the inverse of their information."""
        n = len(self.elo)
        info = self.information()
        if len(self.fixed) >= 2:
            free = [i for i in range(n) if i not in self.fixed]
            inverse = invert([[info[i][j] for j in free] for i in free])
            cov = [[0.0] * n for _ in range(n)]
            for a, i in enumerate(free):
                for b, j in enumerate(free):
                    cov[i][j] = inverse[a][b]
            return cov
        inverse = invert([row[: n - 1] for row in info[: n - 1]])
        projection = [[(1.0 if i == k else 0.0) - 1.0 / n for k in range(n - 1)]
                      for i in range(n)]
        ac = [[sum(inverse[k][m] * projection[i][m] for m in range(n - 1)) for k in range(n - 1)]
              for i in range(n)]
        return [[sum(ac[i][k] * projection[j][k] for k in range(n - 1)) for j in range(n)]
                for i in range(n)]

    def offset(self) -> float:
        """Printed = scale * internal + offset; one anchor fixes the offset (bayeselo's
        ``offset ELO NAME``), otherwise the mean stays at zero."""
        if len(self.config.anchors) != 1:
            return 0.0
        (name, rating), = self.config.anchors.items()
        return rating - self.scale * self.elo[self.results.index[name]]

    def intervals_mode(self) -> str:
        """The intervals the table gets: the config's, but a ladder's are the covariance's."""
        return self.config.intervals if len(self.fixed) < 2 else "covariance"

    def intervals(self, cov: Sequence[Sequence[float]]) -> list[tuple[float, float]]:
        """(minus, plus) of every player, unscaled."""
        if self.intervals_mode() == "exact":
            return exact_intervals(self, self.config.confidence)
        z = normal_quantile(self.config.confidence)
        if self.intervals_mode() == "variance":
            info = self.information()
            return [(z / math.sqrt(info[i][i]),) * 2 for i in range(len(self.elo))]
        return [(z * math.sqrt(max(cov[i][i], 0.0)),) * 2 for i in range(len(self.elo))]

    def table(self) -> RatingTable:
        cov = self.covariance()
        bounds = self.intervals(cov)
        scale, offset, r = self.scale, self.offset(), self.results
        order = sorted(range(len(self.elo)), key=lambda i: -self.elo[i])
        rows = []
        for rank, i in enumerate(order, start=1):
            games = sum(r.true_games[i])
            rows.append(PlayerRating(
                rank=rank, name=r.players[i], elo=scale * self.elo[i] + offset,
                plus=scale * bounds[i][1], minus=scale * bounds[i][0], games=games,
                score=points(r, i),
                oppo=scale * average_opponent(r, self.elo, i) + offset,
                draws=int(sum(r.draws[i][j] + r.draws[j][i] for j in range(len(self.elo))))))
        los = [[0.0 if i == j else superiority(self.elo, cov, i, j) for j in order]
               for i in order]
        return RatingTable(rows=rows, los=los, advantage=self.advantage,
                           drawelo=self.drawelo, scale=scale, intervals=self.intervals_mode(),
                           confidence=self.config.confidence)


def points(results: Results, i: int) -> float:
    n = len(results.players)
    return sum(results.wins[i][j] + results.losses[j][i]
               + 0.5 * (results.draws[i][j] + results.draws[j][i]) for j in range(n))


def average_opponent(results: Results, elo: Sequence[float], i: int) -> float:
    games = results.true_games[i]       # a player in the table has played
    return sum(games[j] * elo[j] for j in range(len(elo))) / sum(games)


def superiority(elo: Sequence[float], cov: Sequence[Sequence[float]], i: int, j: int) -> float:
    """P(player i is stronger than player j) under the normal approximation."""
    variance = cov[i][i] + cov[j][j] - cov[i][j] - cov[j][i]
    if variance <= 0:
        return 1.0 if elo[i] > elo[j] else 0.0 if elo[i] < elo[j] else 0.5
    return math.erfc((elo[j] - elo[i]) / math.sqrt(2 * variance)) / 2


def invert(matrix: Sequence[Sequence[float]]) -> list[list[float]]:
    """Gauss-Jordan inverse with partial pivoting (the matrices here are players x players)."""
    n = len(matrix)
    work = [list(row) + [1.0 if i == j else 0.0 for j in range(n)] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(work[r][col]))
        if abs(work[pivot][col]) < 1e-300:
            raise RatingsError("the games do not connect every player: ratings are undefined")
        work[col], work[pivot] = work[pivot], work[col]
        scale = work[col][col]
        work[col] = [v / scale for v in work[col]]
        for r in range(n):
            if r != col and work[r][col]:
                factor = work[r][col]
                work[r] = [a - factor * b for a, b in zip(work[r], work[col], strict=False)]
    return [row[n:] for row in work]


def round_half_away(x: float) -> int:
    """bayeselo rounds halves away from zero."""
    return int(x + 0.5) if x > 0 else int(x - 0.5)


def format_ratings(table: RatingTable) -> str:
    """bayeselo's ``ratings`` output."""
    width = max([4] + [len(row.name) for row in table.rows])
    lines = [f"Rank {'Name':<{width}}   Elo    +    - games score oppo. draws "]
    for row in table.rows:
        lines.append(
            f"{row.rank:>4} {row.name:<{width}} {round_half_away(row.elo):>5} "
            f"{round_half_away(row.plus):>4} {round_half_away(row.minus):>4} {row.games:>5} "
            f"{round_half_away(row.score_pct):>4}% {round_half_away(row.oppo):>5} "
            f"{round_half_away(row.draw_pct):>4}% ")
    return "\n".join(lines)


#: What each interval mode is, for the line under a ratings table.
INTERVAL_NAMES = {
    "variance": "each rating's variance with the others fixed, bayeselo's default after mm",
    "covariance": "the covariance matrix, bayeselo's covariance",
    "exact": "each player's likelihood with the others fixed, bayeselo's exactdist",
}


def intervals_line(table: RatingTable) -> str:
    """Which intervals the + and - columns hold, for the line under a ratings table.

    >>> print(intervals_line(RatingTable([], [], 32.8, 97.3, 1.0)))
    + and -: 95% intervals from each rating's variance with the others fixed, bayeselo's default after mm (--intervals variance; or covariance, exact)
    """
    others = ", ".join(mode for mode in INTERVALS if mode != table.intervals)
    return (f"+ and -: {100 * table.confidence:g}% intervals from "
            f"{INTERVAL_NAMES[table.intervals]} (--intervals {table.intervals}; or {others})")


def format_los(table: RatingTable, width: int = 3) -> str:
    """bayeselo's ``los`` matrix: percentages truncated, columns headed by name prefixes."""
    names = [row.name for row in table.rows]
    name_width = max(len(n) for n in names)
    mult = 10 ** (min(width, 8) - 1)
    header = " " * name_width + " " + "".join(f"{n[: width - 1]:>{width}}" for n in names)
    lines = [header]
    for i, name in enumerate(names):
        cells = "".join(" " * width if i == j else f"{int(table.los[i][j] * mult):>{width}}"
                        for j in range(len(names)))
        lines.append(f"{name:<{name_width}} {cells}")
    return "\n".join(lines)


def games_from_crosstable(rows: Mapping[tuple[str, str], tuple[int, int, int]]) -> list[Game]:
    """Games from per-pair (wins, draws, losses) of the first player, colours alternating
    (first player White in the even games), as a tournament of game pairs would give."""
    games: list[Game] = []
    for (first, second), (wins, draws, losses) in rows.items():
        outcomes = [1.0] * wins + [0.5] * draws + [0.0] * losses
        for k, score in enumerate(outcomes):
            games.append(Game(first, second, score) if k % 2 == 0
                         else Game(second, first, 1.0 - score))
    return games


def pair_counts(games: Iterable[Game]) -> dict[tuple[str, str], list[int]]:
    """Per unordered pair (names sorted): wins, draws, losses of the first name."""
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for g in games:
        first, second = sorted((g.white, g.black))
        score = g.result if g.white == first else 1.0 - g.result
        counts[(first, second)][{1.0: 0, 0.5: 1, 0.0: 2}[score]] += 1
    return dict(counts)


def exact_intervals(model: Model, confidence: float, elo_min: float = -1500.0,
                    elo_max: float = 1500.0, resolution: int = 1001) -> list[tuple[float, float]]:
    """bayeselo's ``exactdist``: each player's likelihood on a grid of Elos, the others held at
    their fitted Elos (shifted to keep the mean); returns (minus, plus) per player."""

    def value(k: int) -> float:
        return grid_value(k, elo_min, elo_max, resolution)

    n = len(model.elo)
    intervals = []
    for i in range(n):
        logs = []
        for k in range(resolution):
            delta = (value(k) - model.elo[i]) / (n - 1)
            shifted = [value(k) if j == i else model.elo[j] - delta for j in range(n)]
            logs.append(player_log_likelihood(model, shifted, i))
        top = max(logs)
        density = [math.exp(v - top) for v in logs]
        total = sum(density)
        density = [d / total for d in density]
        lower = bound_value(density, value, confidence, upward=True)
        upper = bound_value(density, value, confidence, upward=False)
        intervals.append((model.elo[i] - lower, upper - model.elo[i]))
    return intervals


def grid_value(k: int, low: float, high: float, size: int) -> float:
    """bayeselo's CDiscretization: the centre of cell ``k`` of ``size`` cells over [low, high]
    (``k`` may be -1 or ``size``, just outside)."""
    return low + (k + 0.5) * (high - low) / size


@lru_cache(maxsize=8)
def normal_quantile(confidence: float) -> float:
    """bayeselo's NormInv: the upper ``confidence`` bound of a standard normal discretised on
    1000 cells over [-10, 10] (cell 0 left empty, as bayeselo's SetNormal leaves it), read
    with the same trapezoid rule as every other bayeselo interval; 1.96013 at 0.95."""
    cells = 1000

    def value(k: int) -> float:
        return grid_value(k, -10.0, 10.0, cells)

    density = [0.0] + [math.exp(-value(k) ** 2 / 2) for k in range(1, cells)]
    total = sum(density)
    return bound_value([d / total for d in density], value, confidence, upward=False)


def bound_value(density: Sequence[float], value: Callable[[int], float], confidence: float,
                upward: bool) -> float:
    """bayeselo's GetBoundValue: the value leaving (1 - confidence) / 2 of the mass beyond
    it, from below (``upward``) or above; trapezoid rule between cell centres ``value(k)``."""
    threshold = (1 - confidence) / 2
    indices = range(len(density)) if upward else range(len(density) - 1, -1, -1)
    direction = 1 if upward else -1
    mass = previous = 0.0
    for k in indices:
        new_mass = mass + (previous + density[k]) / 2
        if new_mass >= threshold:
            low, high = value(k - direction), value(k)
            return low + (high - low) * (threshold - mass) / (new_mass - mass)
        mass, previous = new_mass, density[k]
    return value(indices[-1])


def player_log_likelihood(model: Model, elo: Sequence[float], i: int) -> float:
    """Log-likelihood of player i's games (virtual draws included) at the given Elos."""
    r, total = model.results, 0.0
    for j in r.opponents(i):
        for white, black in ((i, j), (j, i)):
            p_win, p_loss = outcome_probabilities(model, elo[white] - elo[black])
            counts = (r.wins[white][black], r.d(white, black), r.losses[white][black])
            for count, p in zip(counts, (p_win, 1 - p_win - p_loss, p_loss), strict=False):
                if count:
                    total += count * math.log(p)
    return total


def outcome_probabilities(model: Model, delta: float) -> tuple[float, float]:
    """(P(White wins), P(White loses)) for White rated ``delta`` above Black."""
    win = 1 / (1 + 10 ** ((-delta - model.advantage + model.drawelo) / 400))
    loss = 1 / (1 + 10 ** ((delta + model.advantage + model.drawelo) / 400))
    return win, loss
