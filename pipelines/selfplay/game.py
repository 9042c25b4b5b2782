"""One self-play game: a varied start (opening moves, then random legal plies), the engine on
both sides, the usual end rules, a move cap; and its PGN.

Everything about a game follows from its seed, the opening and the engine, so the same game
index of the same run is the same game, byte for byte, wherever it is played.

>>> random_start(chess.Board(), 4, random.Random("1:0")).ply()
4
"""
from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

import chess
import chess.pgn

from pipelines.games.game import Opening
from pipelines.selfplay.players import Choice, Mover

# Random starts that are already over (fool's mate) are drawn again, at most this often.
START_TRIES = 100
MAX_PLIES_REASON = "max_plies"


@dataclass
class SelfplayGame:
    """A finished game: its start, the moves (each marked book, random or engine), the result
    and why it ended (a python-chess Termination name in lower case, or ``max_plies``)."""

    index: int
    opening: Opening
    prefix: list[tuple[chess.Move, str]] = field(default_factory=list)
    moves: list[Choice] = field(default_factory=list)
    result: str = "*"
    reason: str = ""

    @property
    def plies(self) -> int:
        """Every ply of the game, the opening and random ones included (as the moves table)."""
        return len(self.prefix) + len(self.moves)

    @property
    def termination(self) -> str:
        """The PGN Termination tag: ``normal`` by the rules, ``adjudication`` at the cap."""
        return "adjudication" if self.reason == MAX_PLIES_REASON else "normal"


def game_rng(seed: int, index: int) -> random.Random:
    """The random source of game ``index`` of a run seeded with ``seed``."""
    return random.Random(f"{seed}:{index}")


def random_start(board: chess.Board, plies: int, rng: random.Random) -> chess.Board:
    """``board`` after ``plies`` random legal plies that do not end the game (drawn again up to
    START_TRIES times; the last draw is kept if every one ends it)."""
    for _ in range(START_TRIES):
        walk = board.copy()
        for _ in range(plies):
            moves = list(walk.legal_moves)
            if not moves:
                break
            walk.push(rng.choice(moves))
        if walk.outcome(claim_draw=True) is None:
            break
    return walk


def play_game(mover: Mover, index: int, opening: Opening, random_plies: int, seed: int,
              max_plies: int) -> SelfplayGame:
    """Play game ``index`` from ``opening`` and its random plies to the end or the cap."""
    board = chess.Board(opening.fen)
    game = SelfplayGame(index, opening)
    for uci in opening.moves:
        game.prefix.append((board.push_uci(uci), "book"))
    start = random_start(board, random_plies, game_rng(seed, index))
    game.prefix += [(move, "random") for move in start.move_stack[len(board.move_stack):]]
    mover.new_game()
    while (outcome := start.outcome(claim_draw=True)) is None:
        if game.plies >= max_plies:
            game.result, game.reason = "1/2-1/2", MAX_PLIES_REASON
            return game
        choice = mover.move(start)
        game.moves.append(choice)
        start.push(choice.move)
    game.result, game.reason = outcome.result(), outcome.termination.name.lower()
    return game


def eval_comment(choice: Choice) -> str:
    """A lichess ``[%eval]`` comment, White's view (the ingest stores it in ``moves``).

    >>> eval_comment(Choice(chess.Move.null(), 35)), eval_comment(Choice(chess.Move.null()))
    ('[%eval 0.35]', '')
    >>> eval_comment(Choice(chess.Move.null(), None, -3))
    '[%eval #-3]'
    """
    if choice.white_mate is not None:
        return f"[%eval #{choice.white_mate}]"
    return f"[%eval {choice.white_cp / 100:.2f}]" if choice.white_cp is not None else ""


def to_pgn(game: SelfplayGame, player: str, tags: Mapping[str, str]) -> str:
    """The game's PGN: ``Event "chesslab selfplay"``, the engine on both sides, the result,
    the termination, the run's description in ``tags``; no date, so it is reproducible."""
    pgn = chess.pgn.Game()
    board = chess.Board(game.opening.fen)
    if game.opening.fen != chess.STARTING_FEN:
        pgn.setup(board)
    pgn.headers.update({"Event": "chesslab selfplay", "Site": "?", "Date": "????.??.??",
                        "Round": str(game.index + 1), "White": player, "Black": player,
                        "Result": game.result})
    pgn.headers.update({"PlyCount": str(game.plies), "Termination": game.termination,
                        **tags, "SelfplayGame": str(game.index)})
    if game.opening.eco:
        pgn.headers["ECO"] = game.opening.eco
    if game.opening.name:
        pgn.headers["Opening"] = game.opening.name
    node: chess.pgn.GameNode = pgn
    for move, kind in game.prefix:
        node = node.add_variation(move, comment=kind)
    for choice in game.moves:
        node = node.add_variation(choice.move, comment=eval_comment(choice))
    node.comment = f"{node.comment} {game.reason}".strip() if node is not pgn else game.reason
    exporter = chess.pgn.StringExporter(headers=True, variations=False, comments=True)
    return pgn.accept(exporter)
