"""A tournament game's PGN: cutechess-style tags (the tournament's event and time control,
the game's duration and termination) and a comment per move (score/depth and time, ``book``
for the opening's moves)."""
from __future__ import annotations

import chess
import chess.pgn

from pipelines.games.game import GameRecord
from pipelines.tournament.config import TournamentConfig


def to_pgn(record: GameRecord, config: TournamentConfig, site: str) -> str:
    """The game's PGN with cutechess-style tags and per-move comments."""
    game = chess.pgn.Game()
    board = chess.Board(record.opening.fen)
    if record.opening.fen != chess.STARTING_FEN:
        game.setup(board)
    start = record.started_at
    game.headers.update({
        "Event": config.event, "Site": site, "Date": start.strftime("%Y.%m.%d"),
        "Round": str(record.slot.round + 1), "White": record.slot.white,
        "Black": record.slot.black, "Result": record.result,
    })
    if record.opening.eco:
        game.headers["ECO"] = record.opening.eco
    if record.opening.name:
        game.headers["Opening"] = record.opening.name
    game.headers["GameDuration"] = duration_tag(record.wall_seconds)
    game.headers["GameStartTime"] = start.isoformat(timespec="seconds")
    game.headers["PlyCount"] = str(len(record.moves))
    game.headers["Termination"] = record.termination
    game.headers["TimeControl"] = config.pgn_time_control()
    node: chess.pgn.GameNode = game
    for move in record.moves:
        node = node.add_variation(move.move, comment=move.comment)
    if record.reason:
        node.comment = f"{node.comment}, {record.reason}" if node.comment and node is not game \
            else record.reason
    exporter = chess.pgn.StringExporter(headers=True, variations=False, comments=True)
    return game.accept(exporter)


def duration_tag(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600:02d}:{whole % 3600 // 60:02d}:{whole % 60:02d}"
