"""Engine-vs-itself training games: an engine plays itself at a fixed depth or node count from
varied starts, and every position it searched keeps that search's score and best move.

Game ``g`` of seed ``s`` always starts from the same random plies. A game ends by the rules, by
adjudication when one side's score stays at ``resign`` centipawns or more for 4 plies (or a
mate is found), as a draw when both scores stay within 10 cp for 12 plies after move 40, or at
``max_plies`` (result ``*``). The record (:class:`GameRecord`) becomes a PGN game annotated as
Lichess annotates its analysed games (:func:`to_pgn`: ``{[%eval 0.35,8]}`` after a move is the
evaluation of the position the move reached, White's view) or binpack entries
(:func:`binpack_entries`: each searched position, its best move, score, ply and the game's
result, from the side to move's view).

The searcher is an engine spoken to over raw UCI pipes (:class:`UciSearcher`: ``position ...
moves``, ``go depth D`` or ``go nodes N``, the last ``info`` line's score, ``bestmove``: a
bare loop's speed, where python-chess's asyncio engine took four times as long per move) or
chesslab's own alpha-beta engine in this process (``pipelines.datagen.inprocess``). Only
python-chess and the standard library are imported here: ``scripts/engine_games.py`` plays
the same games on a machine without chesslab's other dependencies.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Protocol

import chess
import chess.pgn

from pipelines.label.info import parse_info
from pipelines.label.uci import UciClient

MATE_CP = 100_000
GO_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class GameSettings:
    """How one game is played (the same for every game of a run): a search to ``depth`` or of
    ``nodes`` nodes a move (one of them)."""

    depth: int | None = 8
    random_plies: int = 8
    seed: int = 1
    resign: int = 1000
    max_plies: int = 400
    nodes: int | None = None

    def __post_init__(self) -> None:
        if (self.depth is None) == (self.nodes is None):
            raise ValueError(f"a search to a depth or of a node count, one of them: got depth "
                             f"{self.depth!r} and nodes {self.nodes!r}")

    @property
    def limit(self) -> str:
        """``depth 6`` or ``nodes 5000``: the search of every move, as UCI's ``go`` says it."""
        return f"depth {self.depth}" if self.depth is not None else f"nodes {self.nodes}"

    @property
    def label_depth(self) -> int:
        """The depth the labels are stored under (0 for a node-count search)."""
        return self.depth if self.depth is not None else 0


@dataclass(frozen=True)
class Searched:
    """One search's verdict, the side to move's view: centipawns or moves to mate (one of
    them), and the best move (None: no legal move)."""

    score_cp: int | None
    mate: int | None
    move: str | None

    @property
    def centipawns(self) -> int:
        """The score with a mate as +-100,000."""
        if self.mate is not None:
            return MATE_CP if self.mate > 0 else -MATE_CP
        return self.score_cp or 0


class Searcher(Protocol):
    """An engine that plays the games: a new game (from the position ``root_fen``), then a
    search of each position."""

    name: str

    def new_game(self, root_fen: str) -> None: ...

    def search(self, board: chess.Board, settings: GameSettings) -> Searched: ...


class UciSearcher:
    """A UCI engine over raw pipes (:class:`pipelines.label.uci.UciClient`): the position as
    the game's start and its moves (repetitions count), one ``go`` a move, the hash kept
    between the moves of a game. ``name`` is the engine's ``id name``."""

    def __init__(self, path: str, hash_mb: int = 16) -> None:
        self.client = UciClient(path, {"Threads": "1", "Hash": str(hash_mb)})
        self.name = self.client.name
        self.root = "startpos"

    def new_game(self, root_fen: str) -> None:
        self.root = "startpos" if root_fen == chess.STARTING_FEN else f"fen {root_fen}"
        self.client.new_game(GO_TIMEOUT_S)

    def search(self, board: chess.Board, settings: GameSettings) -> Searched:
        moves = " ".join(move.uci() for move in board.move_stack)
        position = f"position {self.root}" + (f" moves {moves}" if moves else "")
        output = self.client.go(position, f"go {settings.limit}", GO_TIMEOUT_S)
        last = None
        for line in reversed(output.info):       # the last exact score, else the last bound
            if " score " in line:
                report = parse_info(line)
                last = last or report
                if report.bound is None:
                    last = report
                    break
        if last is None:
            return Searched(None, None, output.bestmove)
        return Searched(last.score_cp, last.score_mate, output.bestmove)

    def close(self) -> None:
        self.client.quit()


def random_start(rng: random.Random, plies: int) -> chess.Board:
    """The start position after ``plies`` random legal plies that leave the game going."""
    for _ in range(100):
        board = chess.Board()
        for _ in range(plies):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        if game_over(board) is None:
            return board
    return board


@dataclass
class GameRecord:
    """One game: its number, the random plies of its start, each searched position's verdict
    (the move played is its best move; the last one may be the adjudicated position's, with
    no move played), the result and how it ended (None: by the rules or the ply cap)."""

    index: int
    opening: list[chess.Move]
    searched: list[tuple[str, Searched]] = field(default_factory=list)   # (FEN, verdict)
    result: str = "*"
    termination: str | None = None

    @property
    def played(self) -> list[tuple[str, Searched]]:
        """The searched positions whose best move was played."""
        moves = len(self.searched) if self.termination is None else len(self.searched) - 1
        return self.searched[:moves]


def game_over(board: chess.Board) -> str | None:
    """The result when the game has ended by the rules: mate, stalemate, insufficient
    material, or a draw by a threefold repetition or the fifty-move rule (taken at once, as an
    arbiter would on a claim), else None. (python-chess's ``claim_draw=True`` also tries every
    legal move for a repetition it would allow: most of a fast game loop's time.)"""
    outcome = board.outcome()
    if outcome is not None:
        return outcome.result()
    if board.halfmove_clock >= 100 or board.is_repetition(3):
        return "1/2-1/2"
    return None


def play_game(searcher: Searcher, index: int, settings: GameSettings) -> GameRecord:
    """Game ``index``: its random start, then the searcher on both sides."""
    board = random_start(random.Random(f"{settings.seed}:{index}"), settings.random_plies)
    record = GameRecord(index, list(board.move_stack))
    searcher.new_game(chess.STARTING_FEN)
    resign = quiet = 0
    while len(board.move_stack) < settings.max_plies:
        if (result := game_over(board)) is not None:
            record.result = result
            return record
        verdict = searcher.search(board, settings)
        if verdict.move is None or (verdict.score_cp is None and verdict.mate is None):
            return record
        record.searched.append((board.fen(), verdict))
        mover = verdict.centipawns
        resign = resign + 1 if abs(mover) >= settings.resign else 0
        quiet = quiet + 1 if abs(mover) <= 10 and board.fullmove_number > 40 else 0
        if resign >= 4 or verdict.mate is not None:
            white_wins = (mover > 0) == (board.turn == chess.WHITE)
            record.result, record.termination = ("1-0" if white_wins else "0-1"), "adjudication"
            return record
        if quiet >= 12:
            record.result, record.termination = "1/2-1/2", "adjudication"
            return record
        board.push_uci(verdict.move)
    return record


def eval_text(verdict: Searched, white_to_move: bool, depth: int) -> str:
    """A Lichess ``[%eval]`` comment of ``verdict`` (the side to move's) from White's view,
    with its depth."""
    sign = 1 if white_to_move else -1
    if verdict.mate is not None:
        return f"[%eval #{sign * verdict.mate},{depth}]"
    return f"[%eval {sign * (verdict.score_cp or 0) / 100:.2f},{depth}]"


def to_pgn(record: GameRecord, name: str, settings: GameSettings,
           site: str = "chesslab engine_games") -> chess.pgn.Game:
    """The game as PGN: the opening's plies, then each played best move annotated with the
    evaluation of the position it reached (the next search's)."""
    game = chess.pgn.Game()
    game.headers.update({"Event": f"{name} self-play", "Site": site,
                         "Round": str(record.index), "White": name, "Black": name,
                         "Annotator": f"{name} {settings.limit}"})
    node: chess.pgn.GameNode = game
    for move in record.opening:
        node = node.add_variation(move)
    for number, (_, verdict) in enumerate(record.played):
        assert verdict.move is not None
        node = node.add_variation(chess.Move.from_uci(verdict.move))
        if number + 1 < len(record.searched):
            after_fen, after = record.searched[number + 1]
            node.comment = eval_text(after, " w " in after_fen, settings.label_depth)
    game.headers["Result"] = record.result
    if record.termination:
        game.headers["Termination"] = record.termination
    return game


def binpack_entries(record: GameRecord) -> list[tuple[str, str, int, int, int]]:
    """(FEN, best move, score cp, ply, result) of each played searched position, the side to
    move's view (result 1, 0, -1; a game without a result is a draw, as Stockfish's generator
    writes unfinished games); positions with a mate score are left out (a binpack score holds
    centipawns here)."""
    white = {"1-0": 1, "0-1": -1}.get(record.result, 0)
    entries = []
    for fen, verdict in record.played:
        if verdict.mate is not None or verdict.move is None:
            continue
        fields = fen.split()
        black = fields[1] == "b"
        ply = 2 * (int(fields[5]) - 1) + black
        entries.append((fen, verdict.move, verdict.score_cp or 0, ply, -white if black else white))
    return entries
