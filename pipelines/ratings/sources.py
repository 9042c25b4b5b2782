"""Where rated games come from (a PGN file or a tournament in the warehouse) and where the
ratings go (the ``ratings`` table)."""
from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import chess.pgn

from engines.stamps import content_id, utc_now
from pipelines.ratings.bayeselo import Game, RatingsConfig, RatingsError, RatingTable
from warehouse import Lake, connect
from warehouse.catalog import named_query, query

RESULTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


def games_from_pgn(path: str | os.PathLike[str]) -> list[Game]:
    """Every finished game of a PGN file (headers only; unfinished games are skipped)."""
    source = Path(path)
    if not source.is_file():
        raise RatingsError(f"PGN file {str(source)!r} not found")
    games = []
    with source.open(encoding="utf-8", errors="replace") as handle:
        while (headers := chess.pgn.read_headers(handle)) is not None:
            result = RESULTS.get(headers.get("Result", "*"))
            white, black = headers.get("White", "?"), headers.get("Black", "?")
            if result is not None and white != black:
                games.append(Game(white, black, result))
    if not games:
        raise RatingsError(f"PGN file {str(source)!r} holds no finished game")
    return games


def games_from_rows(rows: Iterable[Mapping[str, Any]]) -> list[Game]:
    return [Game(row["white"], row["black"], row["white_score"]) for row in rows
            if row["white_score"] is not None]


def tournament_games(lake: Lake, tournament_id: str) -> list[Game]:
    con = connect(lake)
    try:
        rows = query(con, named_query("tournament_games"), [tournament_id]).to_pylist()
    finally:
        con.close()
    if not rows:
        raise RatingsError(f"no games of tournament {tournament_id!r} in {lake.home}")
    return games_from_rows(rows)


def ladder_anchors(lake: Lake, tournament_id: str) -> dict[str, float]:
    """The known ratings (``UCI_Elo`` of Stockfish ladder rungs) of a tournament's players."""
    con = connect(lake)
    try:
        rows = query(con, named_query("tournament_players"), [tournament_id]).to_pylist()
    finally:
        con.close()
    return {row["player"]: float(row["anchor_elo"]) for row in rows
            if row["anchor_elo"] is not None}


def rating_id(games: Iterable[Game], config: RatingsConfig) -> str:
    return content_id([[[g.white, g.black, g.result] for g in games],
                       [config.prior, config.advantage, config.drawelo, config.fit_advantage,
                        config.fit_drawelo, config.confidence, sorted(config.anchors.items()),
                        config.scale]])


def record_ratings(lake: Lake, table: RatingTable, games: list[Game], config: RatingsConfig,
                   source: str, tournament_id: str | None = None) -> str:
    """Write a rating table; returns its rating id."""
    rid = rating_id(games, config)
    names = [row.name for row in table.rows]
    now = utc_now()
    lake.write("ratings", [{
        "rating_id": rid, "tournament_id": tournament_id, "source": source,
        "player": row.name, "rank": row.rank, "elo": row.elo, "plus": row.plus,
        "minus": row.minus, "games": row.games, "score": row.score, "oppo": row.oppo,
        "draws": row.draws, "advantage": table.advantage, "drawelo": table.drawelo,
        "scale": table.scale, "anchors": json.dumps(dict(config.anchors)),
        "los": json.dumps({other: table.los[i][j] for j, other in enumerate(names) if j != i}),
        "computed_at": now,
    } for i, row in enumerate(table.rows)])
    return rid
