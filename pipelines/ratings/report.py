"""Rating reports: a tournament's or a PGN file's BayesElo table, recorded in the warehouse,
as the text ``chesslab ratings`` and ``chesslab tournament`` print.

>>> from pipelines.ratings.report import parse_anchors
>>> parse_anchors(["stockfish@1350=1350", "a=1000.5"])
{'stockfish@1350': 1350.0, 'a': 1000.5}
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from pipelines.ratings.bayeselo import (
    Game,
    RatingsConfig,
    RatingsError,
    RatingTable,
    fit,
    format_los,
    format_ratings,
    intervals_line,
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
                   pair: str | None = None, output: str = "table") -> str:
    """The ratings of a tournament or a PGN file (recorded), with the LOS matrix and one
    pair's trinomial Elo when asked: as text (``output`` "table"), or as one JSON document
    ("json")."""
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
    paired = pair_result(games, pair, config.confidence) if pair else None
    record_ratings(lake, table, games, config, str(tournament or pgn), tournament)
    if output == "json":
        return json.dumps(ratings_document(table, los, paired), indent=2)
    parts = [format_ratings(table), intervals_line(table)]
    if los:
        parts += ["", format_los(table)]
    if paired:
        parts += ["", pair_text(paired)]
    return "\n".join(parts)


def ratings_document(table: RatingTable, los: bool = False,
                     pair: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ratings as one JSON-ready document: the model's constants, the interval mode, a
    row per player (best first), the LOS matrix when asked (``los[A][B]``: A better than B)
    and one pair's trinomial result."""
    document: dict[str, Any] = {
        "intervals": table.intervals, "confidence": table.confidence,
        "advantage": table.advantage, "drawelo": table.drawelo, "scale": table.scale,
        "ratings": [{"rank": r.rank, "name": r.name, "elo": r.elo, "plus": r.plus,
                     "minus": r.minus, "games": r.games, "score": r.score, "oppo": r.oppo,
                     "draws": r.draws} for r in table.rows]}
    if los:
        names = [row.name for row in table.rows]
        document["los"] = {a: {b: table.los[i][j] for j, b in enumerate(names) if i != j}
                           for i, a in enumerate(names)}
    if pair is not None:
        document["pair"] = pair
    return document


def pair_result(games: Sequence[Game], pair: str, confidence: float) -> dict[str, Any]:
    """A's wins, draws and losses against B, the trinomial Elo, interval and LOS."""
    first, _, second = pair.partition(",")
    key = tuple(sorted((first, second)))
    counts = pair_counts(games).get(key)  # type: ignore[arg-type]
    if counts is None:
        raise LookupError(f"no games between {first!r} and {second!r}")
    wins, draws, losses = counts if key[0] == first else counts[::-1]
    result = pair_elo(wins, draws, losses, confidence)
    return {"first": first, "second": second, "wins": wins, "draws": draws,
            "losses": losses, "elo": result.elo, "lower": result.lower,
            "upper": result.upper, "los": result.los}


def pair_text(pair: dict[str, Any]) -> str:
    """``A vs B: +W =D -L, Elo ... [lo, hi], LOS ...%`` from A's side."""
    p = pair
    return (f"{p['first']} vs {p['second']}: +{p['wins']} ={p['draws']} -{p['losses']}, "
            f"Elo {p['elo']:+.1f} [{p['lower']:+.1f}, {p['upper']:+.1f}], "
            f"LOS {100 * p['los']:.1f}%")
