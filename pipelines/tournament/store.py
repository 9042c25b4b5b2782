"""Tournament facts in the warehouse: what was planned, each finished game, progress events."""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from engines.registry import EngineSpec, player_identity
from engines.stamps import utc_now
from pipelines.engines import register_engine
from pipelines.games.game import GameRecord
from pipelines.tournament.config import TournamentConfig
from warehouse import Lake, connect
from warehouse.catalog import named_query, query


def record_tournament(lake: Lake, tournament_id: str, config: TournamentConfig,
                      players: Sequence[EngineSpec], planned: int,
                      openings_digest: str | None) -> None:
    """The tournament and its players (rewritten on each run: the views keep one row).

    Every player's identity is registered in the ``engines`` table first, so
    ``tournament_players.engine_id`` joins it, and joins the labels of the same engine."""
    engine_ids = [register_engine(lake, player_identity(p)) for p in players]
    settings = {k: v for k, v in dataclasses.asdict(config).items()
                if k not in ("progress", "concurrency", "rating_interval", "runner")}
    lake.write("tournaments", [{
        "tournament_id": tournament_id, "event": config.event, "format": config.format,
        "rounds": config.rounds, "planned_games": planned,
        "time_control": config.pgn_time_control(), "nodes": config.nodes,
        "depth": config.depth, "movetime_ms": config.movetime_ms,
        "openings": config.openings, "openings_sha256": openings_digest,
        "config": json.dumps(settings, default=list), "created_at": utc_now(),
    }])
    lake.write("tournament_players", [{
        "tournament_id": tournament_id, "player": p.name, "engine_id": engine_id,
        "kind": p.kind, "protocol": p.protocol, "command": list(p.command),
        "options": json.dumps(dict(p.options)), "anchor_elo": p.elo,
    } for p, engine_id in zip(players, engine_ids, strict=True)])


def record_event(lake: Lake, tournament_id: str, event: str, done: int, planned: int,
                 detail: str = "") -> None:
    lake.write("tournament_events", [{
        "tournament_id": tournament_id, "event": event, "games_done": done,
        "planned_games": planned, "detail": detail, "recorded_at": utc_now()}])


def game_row(tournament_id: str, record: GameRecord, pgn: str, worker: str | None = None,
             clock_scale: float | None = None) -> dict[str, Any]:
    slot, opening = record.slot, record.opening
    return {
        "tournament_id": tournament_id, "game_key": slot.key, "pairing": slot.pairing,
        "round": slot.round, "game_in_pair": slot.game, "white": slot.white,
        "black": slot.black, "opening_index": slot.opening_index, "opening_fen": opening.fen,
        "opening_moves": list(opening.moves), "eco": opening.eco, "opening": opening.name,
        "result": record.result, "white_score": record.white_score,
        "termination": record.termination, "reason": record.reason, "plies": record.plies,
        "duration_s": record.wall_seconds, "engine_s": record.engine_seconds,
        "white_time_s": record.clock_used[True], "black_time_s": record.clock_used[False],
        "white_budget_s": budget[True] if (budget := record.clock_budget) else None,
        "black_budget_s": budget[False] if budget else None,
        "pgn": pgn, "started_at": record.started_at, "finished_at": record.finished_at,
        "worker": worker, "clock_scale": clock_scale,
    }


def record_game(lake: Lake, tournament_id: str, record: GameRecord, pgn: str) -> None:
    """One part per game, so a killed run keeps every game that ended."""
    lake.write("tournament_games", [game_row(tournament_id, record, pgn)])


def finished_games(lake: Lake, tournament_id: str) -> list[dict[str, Any]]:
    """The games of a tournament already in the warehouse, in schedule order."""
    con = connect(lake)
    try:
        return query(con, named_query("tournament_games"), [tournament_id]).to_pylist()
    finally:
        con.close()


def tournament_players(lake: Lake, tournament_id: str) -> list[dict[str, Any]]:
    con = connect(lake)
    try:
        return query(con, named_query("tournament_players"), [tournament_id]).to_pylist()
    finally:
        con.close()
