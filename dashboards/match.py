"""A two-player match's course, game by game, for its page: the pentanomial counts and the
SPRT's log-likelihood ratio after each completed game pair, and the first player's Elo with
its interval after each game. The statistics are the project's own (``pipelines.sprt``,
``pipelines.ratings.pair``: pure functions, no I/O); the games come from the match's query.

The first player is the white player of the schedule's first game, as ``chesslab sprt
--tournament`` counts it.
"""
from __future__ import annotations

import math
from typing import Any

from dashboards.data import Row, Rows
from pipelines.ratings.pair import pair_elo
from pipelines.sprt import SprtConfig, SprtError, llr, pentanomial


def players(games: Rows) -> tuple[str, str] | None:
    """(first, second) of a two-player match, or None."""
    names = sorted({g["white"] for g in games} | {g["black"] for g in games})
    if len(names) != 2:
        return None
    opening = min(games, key=lambda g: (g["round"], g["pairing"], g["game_in_pair"]))
    first = opening["white"] if opening["game_in_pair"] == 0 else opening["black"]
    return first, names[1] if first == names[0] else names[0]


def first_score(game: Row, first: str) -> float:
    score: float = game["white_score"]
    return score if game["white"] == first else 1 - score


def sprt_config(match: Row) -> SprtConfig | None:
    if match.get("sprt_elo0") is None or match.get("sprt_elo1") is None:
        return None
    try:
        return SprtConfig(match["sprt_elo0"], match["sprt_elo1"], match["sprt_alpha"],
                          match["sprt_beta"], match["sprt_model"] or "normalized")
    except SprtError:
        return None


def sprt_series(match: Row, games: Rows, need_sprt: bool = True) -> list[dict[str, Any]]:
    """After each completed game pair: games so far, pentanomial counts and (when the match
    is an SPRT) the LLR and the bounds. Games in the order they finished."""
    scored = [g for g in games if g["white_score"] is not None]
    pair = players(scored)
    config = sprt_config(match)
    if pair is None or (need_sprt and config is None):
        return []
    halves: dict[tuple[int, int], list[float]] = {}
    done: list[float] = []
    points: list[dict[str, Any]] = []
    for played, game in enumerate(scored, 1):
        scores = halves.setdefault((game["pairing"], game["round"]), [])
        scores.append(first_score(game, pair[0]))
        if len(scores) != 2:
            continue
        done.append(sum(scores))
        counts = pentanomial(done)
        point: dict[str, Any] = {"games": played, "pairs": len(done), "counts": counts,
                                 "player": pair[0]}
        if config is not None:
            point.update(llr=round(llr(counts, config), 4),
                         lower_bound=round(config.lower_bound, 4),
                         upper_bound=round(config.upper_bound, 4))
        points.append(point)
    return points


def finite(value: float) -> float | None:
    return round(value, 1) if math.isfinite(value) else None


def elo_series(games: Rows) -> list[dict[str, Any]]:
    """The first player's W/D/L, Elo, 95% interval and LOS after each game (Elo and bounds
    None while undefined: a 0% or 100% score)."""
    scored = [g for g in games if g["white_score"] is not None]
    pair = players(scored)
    if pair is None:
        return []
    wins = draws = losses = 0
    points = []
    for played, game in enumerate(scored, 1):
        score = first_score(game, pair[0])
        wins, draws, losses = wins + (score == 1), draws + (score == 0.5), losses + (score == 0)
        elo = pair_elo(wins, draws, losses)
        points.append({"games": played, "player": pair[0], "opponent": pair[1],
                       "wins": wins, "draws": draws, "losses": losses,
                       "elo": finite(elo.elo), "lower": finite(elo.lower),
                       "upper": finite(elo.upper), "los": round(elo.los, 4)})
    return points
