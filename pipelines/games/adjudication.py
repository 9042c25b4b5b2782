"""Adjudication as cutechess does it: resign, draw and tablebase rules.

Scores are kept from White's point of view, one per ply (None when the mover gave none), so
"both engines agree" means the last plies of *both* sides say the same thing.

>>> rules = Adjudicator(resign_moves=2, resign_score=500)
>>> rules.verdict(chess.Board(), [-600, -700, -650, -900])
('0-1', 'adjudication', 'White loses by adjudication: both engines see -500 cp for 2 moves')
"""
from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess
import chess.gaviota
import chess.syzygy

from pipelines.games.config import GamesError

log = logging.getLogger(__name__)

Verdict = tuple[str, str, str]   # result, Termination tag, reason
#: A mate as centipawns where engine scores are compared or recorded (python-chess's
#: ``score(mate_score=...)``): beyond any real evaluation, so resign and draw rules treat a
#: forced mate as decisive. Not the engines' search scale (engines.mate).
MATE_AS_CP = 100_000


@dataclass(frozen=True)
class Adjudication:
    """The adjudication rules of a game, as cutechess's options name them (0: a rule off)."""

    resign_moves: int = 0
    resign_score: int = 600
    draw_move_number: int = 0
    draw_moves: int = 8
    draw_score: int = 10
    tablebases: str | None = None     # folders, os.pathsep-separated
    max_plies: int = 0


class Adjudicator:
    """Decides a game early from the engines' scores or a tablebase."""

    def __init__(self, resign_moves: int = Adjudication.resign_moves,
                 resign_score: int = Adjudication.resign_score,
                 draw_move_number: int = Adjudication.draw_move_number,
                 draw_moves: int = Adjudication.draw_moves,
                 draw_score: int = Adjudication.draw_score,
                 tablebases: str | None = None,
                 max_plies: int = Adjudication.max_plies) -> None:
        self.resign_moves = resign_moves
        self.resign_score = resign_score
        self.draw_move_number = draw_move_number
        self.draw_moves = draw_moves
        self.draw_score = draw_score
        self.max_plies = max_plies
        self.syzygy, self.gaviota, self.tablebase_pieces = open_tablebases(tablebases)

    @classmethod
    def from_rules(cls, rules: Adjudication) -> Adjudicator:
        """The rules' adjudicator, its tablebases opened (:meth:`close` them)."""
        return cls(rules.resign_moves, rules.resign_score, rules.draw_move_number,
                   rules.draw_moves, rules.draw_score, rules.tablebases, rules.max_plies)

    def close(self) -> None:
        for tables in (self.syzygy, self.gaviota):
            if tables is not None:
                tables.close()

    def verdict(self, board: chess.Board, scores: Sequence[int | None]) -> Verdict | None:
        """A result if the game can be adjudicated after the last move, else None."""
        return (self.tablebase_verdict(board) or self.resign_verdict(scores)
                or self.draw_verdict(board, scores) or self.length_verdict(board))

    def resign_verdict(self, scores: Sequence[int | None]) -> Verdict | None:
        plies = 2 * self.resign_moves
        if not self.resign_moves or len(scores) < plies:
            return None
        recent = scores[-plies:]
        if all(s is not None and s <= -self.resign_score for s in recent):
            return ("0-1", "adjudication", f"White loses by adjudication: both engines see "
                    f"-{self.resign_score} cp for {self.resign_moves} moves")
        if all(s is not None and s >= self.resign_score for s in recent):
            return ("1-0", "adjudication", f"Black loses by adjudication: both engines see "
                    f"+{self.resign_score} cp for {self.resign_moves} moves")
        return None

    def draw_verdict(self, board: chess.Board, scores: Sequence[int | None]) -> Verdict | None:
        plies = 2 * self.draw_moves
        if not self.draw_move_number or board.fullmove_number < self.draw_move_number:
            return None
        if len(scores) < plies or not self.draw_moves:
            return None
        if all(s is not None and abs(s) <= self.draw_score for s in scores[-plies:]):
            return ("1/2-1/2", "adjudication", f"Draw by adjudication: scores within "
                    f"{self.draw_score} cp for {self.draw_moves} moves")
        return None

    def length_verdict(self, board: chess.Board) -> Verdict | None:
        if self.max_plies and board.ply() >= self.max_plies:
            return ("1/2-1/2", "adjudication", f"Draw by adjudication: {self.max_plies} plies")
        return None

    def tablebase_verdict(self, board: chess.Board) -> Verdict | None:
        if board.castling_rights or chess.popcount(board.occupied) > self.tablebase_pieces:
            return None
        wdl = self.probe_wdl(board)
        if wdl is None:
            return None
        if wdl == 0:
            return ("1/2-1/2", "adjudication", "Draw by tablebase adjudication")
        white_wins = (wdl > 0) == (board.turn == chess.WHITE)
        side = "White" if white_wins else "Black"
        return ("1-0" if white_wins else "0-1", "adjudication",
                f"{side} wins by tablebase adjudication")

    def probe_wdl(self, board: chess.Board) -> int | None:
        """Win/draw/loss for the side to move (cursed wins and blessed losses are draws)."""
        if self.syzygy is not None:
            try:
                return fifty_move_wdl(self.syzygy.probe_wdl(board))
            except (KeyError, chess.syzygy.MissingTableError):
                pass
        if self.gaviota is not None:
            try:
                return self.gaviota.probe_wdl(board)
            except (KeyError, chess.gaviota.MissingTableError):
                pass
        return None


def fifty_move_wdl(wdl: int) -> int:
    """A Syzygy WDL (-2 loss, -1 blessed loss, 0 draw, 1 cursed win, 2 win) under the 50-move
    rule, which games here are played by: a cursed win or blessed loss is a draw."""
    return 0 if abs(wdl) < 2 else wdl


def open_tablebases(paths: str | None) -> tuple[Any, Any, int]:
    """Syzygy tables from folders holding ``.rtbw`` files, Gaviota from ``.gtb.cp4`` ones, and
    the most pieces any table covers (``KRvKN.rtbw``, ``krkn.gtb.cp4``: 4)."""
    syzygy = gaviota = None
    pieces = 0
    for folder in filter(None, (paths or "").split(os.pathsep)):
        root = Path(folder)
        if not root.is_dir():
            raise GamesError(f"tablebase folder {folder!r} not found")
        tables = [*root.glob("*.rtbw"), *root.glob("*.gtb.cp4")]
        pieces = max([pieces] + [len(t.name.split(".")[0].replace("v", "")) for t in tables])
        if any(root.glob("*.rtbw")):
            syzygy = syzygy or chess.syzygy.Tablebase()
            syzygy.add_directory(folder)
        if any(root.glob("*.gtb.cp4")):
            if gaviota is None:
                gaviota = chess.gaviota.open_tablebase(folder)
            else:
                gaviota.add_directory(folder)
        if not any(root.glob("*.rtbw")) and not any(root.glob("*.gtb.cp4")):
            raise GamesError(f"no Syzygy (.rtbw) or Gaviota (.gtb.cp4) tables in {folder!r}")
    return syzygy, gaviota, pieces
