"""Annotated engine-vs-itself games: a UCI engine plays itself to a fixed depth from varied
starts, every searched position annotated as Lichess annotates its analysed games.

``{[%eval 0.35,8]}`` after a move is the evaluation of the position the move reached, White's
view, with the depth after the comma. Game ``g`` of seed ``s`` always starts from the same
random plies. A game ends by the rules, by adjudication when one side's score stays at
``resign`` centipawns or more for 4 plies (or a mate is found), as a draw when both scores
stay within 10 cp for 12 plies after move 40, or at ``max_plies`` (result ``*``).

Only python-chess is imported here: ``scripts/engine_games.py`` plays the same games on a
machine without chesslab's other dependencies.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import chess
import chess.engine
import chess.pgn

MATE_CP = 100_000


@dataclass(frozen=True)
class GameSettings:
    """How one game is played (the same for every game of a run)."""

    depth: int = 8
    random_plies: int = 8
    seed: int = 1
    resign: int = 1000
    max_plies: int = 400


def random_start(rng: random.Random, plies: int) -> chess.Board:
    """The start position after ``plies`` random legal plies that leave the game going."""
    for _ in range(100):
        board = chess.Board()
        for _ in range(plies):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        if not board.is_game_over(claim_draw=True):
            return board
    return board


def eval_text(score: chess.engine.PovScore, depth: int) -> str:
    """A Lichess ``[%eval]`` comment of ``score`` from White's view, with its depth."""
    white = score.white()
    if white.is_mate():
        return f"[%eval #{white.mate()},{depth}]"
    return f"[%eval {white.score(mate_score=MATE_CP) / 100:.2f},{depth}]"


def play(engine: chess.engine.SimpleEngine, index: int, settings: GameSettings, name: str,
         site: str = "chesslab engine_games") -> chess.pgn.Game:
    """Game ``index``: its random start, then the engine at ``settings.depth`` on both
    sides."""
    rng = random.Random(f"{settings.seed}:{index}")
    board = random_start(rng, settings.random_plies)
    game = chess.pgn.Game()
    game.headers.update({"Event": f"{name} self-play", "Site": site,
                         "Round": str(index), "White": name, "Black": name,
                         "Annotator": f"{name} depth {settings.depth}"})
    node: chess.pgn.GameNode = game
    for move in board.move_stack:
        node = node.add_variation(move)
    board = board.copy(stack=True)
    resign, quiet = 0, 0
    result = "*"
    while len(board.move_stack) < settings.max_plies:
        if board.is_game_over(claim_draw=True):
            result = board.result(claim_draw=True)
            break
        info = engine.analyse(board, chess.engine.Limit(depth=settings.depth), game=game)
        score, pv = info.get("score"), info.get("pv") or []
        if score is None or not pv:
            break
        if node is not game:  # the evaluation of the position the last move reached
            node.comment = eval_text(score, settings.depth)
        mover = score.relative.score(mate_score=MATE_CP)
        resign = resign + 1 if abs(mover) >= settings.resign else 0
        quiet = quiet + 1 if abs(mover) <= 10 and board.fullmove_number > 40 else 0
        if resign >= 4 or score.relative.is_mate() and resign >= 1:
            result = ("1-0" if score.white().score(mate_score=MATE_CP) > 0 else "0-1")
            game.headers["Termination"] = "adjudication"
            break
        if quiet >= 12:
            result = "1/2-1/2"
            game.headers["Termination"] = "adjudication"
            break
        node = node.add_variation(pv[0])
        board.push(pv[0])
    game.headers["Result"] = result
    return game
