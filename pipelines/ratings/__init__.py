"""Ratings: BayesElo tables with likelihood of superiority, and single-pair Elo.

>>> from pipelines.ratings import Game, RatingsConfig, fit, format_ratings
"""
from pipelines.ratings.bayeselo import (
    Game,
    PlayerRating,
    RatingsConfig,
    RatingsError,
    RatingTable,
    fit,
    format_los,
    format_ratings,
    games_from_crosstable,
    pair_counts,
)
from pipelines.ratings.pair import PairElo, pair_elo

__all__ = ["Game", "PairElo", "PlayerRating", "RatingTable", "RatingsConfig", "RatingsError",
           "fit", "format_los", "format_ratings", "games_from_crosstable", "pair_counts",
           "pair_elo"]
