"""Elo of one pair from its wins, draws and losses (the trinomial model of cutechess/fastchess).

>>> result = pair_elo(60, 30, 10)
>>> round(result.elo, 1), round(result.los, 4)
(190.8, 1.0)
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist


@dataclass(frozen=True)
class PairElo:
    """Elo difference of the first player, its interval and its likelihood of superiority."""

    wins: int
    draws: int
    losses: int
    elo: float
    lower: float
    upper: float
    los: float

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        return (self.wins + self.draws / 2) / self.games


def score_to_elo(score: float) -> float:
    """Logistic Elo difference that gives an expected score (infinite at 0 and 1)."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400 * math.log10(1 / score - 1)


def pair_elo(wins: int, draws: int, losses: int, confidence: float = 0.95) -> PairElo:
    """Score, its standard error per game, mapped through the logistic curve."""
    games = wins + draws + losses
    if min(wins, draws, losses) < 0 or games == 0:
        raise ValueError(f"need non-negative counts and at least one game, got "
                         f"{wins}-{draws}-{losses}")
    score = (wins + draws / 2) / games
    variance = (wins * (1 - score) ** 2 + draws * (0.5 - score) ** 2
                + losses * score ** 2) / games
    error = math.sqrt(variance / games)
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    return PairElo(wins, draws, losses, score_to_elo(score),
                   score_to_elo(score - z * error), score_to_elo(score + z * error),
                   likelihood_of_superiority(wins, losses))


def likelihood_of_superiority(wins: int, losses: int) -> float:
    """P(the first player is stronger) from the decisive games alone."""
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1 + math.erf((wins - losses) / math.sqrt(2 * (wins + losses))))
