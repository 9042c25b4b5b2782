"""Rating reports: a tournament's or a PGN file's BayesElo table, recorded in the warehouse,
as the text ``chesslab ratings`` and ``chesslab tournament`` print.

>>> from pipelines.ratings.report import parse_anchors
>>> parse_anchors(["stockfish@1350=1350", "a=1000.5"])
{'stockfish@1350': 1350.0, 'a': 1000.5}
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from pipelines.ratings.bayeselo import (
    Game,
    RatingsConfig,
    RatingsError,
    RatingTable,
    fit,
    format_los,
    format_ratings,
    pair_counts,
)
from pipelines.ratings.pair import pair_elo
from pipelines.ratings.sources import (
    games_from_pgn,
    ladder_anchors,
    record_ratings,
    tournament_games,
)
from warehouse import Lake


def parse_anchors(items: Sequence[str]) -> dict[str, float]:
    """``NAME=ELO`` items as a dict; RatingsError quoting a malformed item."""
    anchors = {}
    for item in items:
        name, eq, value = item.rpartition("=")
        try:
            anchors[name] = float(value)
        except ValueError:
            name = ""
        if not eq or not name:
            raise RatingsError(f"--anchor wants NAME=ELO, got {item!r}")
    return anchors


def rate_tournament(lake: Lake, tournament_id: str,
                    config: RatingsConfig | None = None) -> RatingTable:
    """Fit and record a tournament's ratings, anchored on its Stockfish ladder rungs when
    ``config`` names no anchor."""
    config = config or RatingsConfig()
    if not config.anchors:
        config = dataclasses.replace(config, anchors=ladder_anchors(lake, tournament_id))
    games = tournament_games(lake, tournament_id)
    table = fit(games, config)
    record_ratings(lake, table, games, config, tournament_id, tournament_id)
    return table


def ratings_report(lake: Lake, config: RatingsConfig, tournament: str | None = None,
                   pgn: str | None = None, ladder: bool = False, los: bool = False,
                   pair: str | None = None) -> str:
    """The ratings of a tournament or a PGN file (recorded), with the LOS matrix and one
    pair's trinomial Elo when asked."""
    if tournament:
        games = tournament_games(lake, tournament)
        if ladder:
            config = dataclasses.replace(
                config, anchors={**ladder_anchors(lake, tournament), **config.anchors})
    elif ladder:
        raise RatingsError("--ladder needs --tournament (a PGN file has no UCI_Elo)")
    else:
        games = games_from_pgn(str(pgn))
    table = fit(games, config)
    parts = [format_ratings(table)]
    if los:
        parts += ["", format_los(table)]
    if pair:
        parts += ["", pair_line(games, pair, config.confidence)]
    record_ratings(lake, table, games, config, str(tournament or pgn), tournament)
    return "\n".join(parts)


def pair_line(games: Sequence[Game], pair: str, confidence: float) -> str:
    """``A vs B: +W =D -L, Elo ... [lo, hi], LOS ...%`` from A's side."""
    first, _, second = pair.partition(",")
    key = tuple(sorted((first, second)))
    counts = pair_counts(games).get(key)  # type: ignore[arg-type]
    if counts is None:
        raise LookupError(f"no games between {first!r} and {second!r}")
    wins, draws, losses = counts if key[0] == first else counts[::-1]
    result = pair_elo(wins, draws, losses, confidence)
    return (f"{first} vs {second}: +{wins} ={draws} -{losses}, Elo {result.elo:+.1f} "
            f"[{result.lower:+.1f}, {result.upper:+.1f}], LOS {100 * result.los:.1f}%")
