"""Playing one game between two engine processes, with clocks, forfeits and adjudication.

A :class:`Seat` owns one engine process for a worker and restarts it after a failure; a game
asks each seat for a move with python-chess's asyncio engine API, keeps the clocks itself and
turns every failure into a forfeit with a cutechess ``Termination`` tag:

============================  =====================
what went wrong               Termination
============================  =====================
process died / pipe closed    ``abandoned``
no answer in time             ``time forfeit`` (clock) or ``stalled connection`` (no clock)
move that is not legal        ``illegal move``
============================  =====================

Self-play has loops of its own, on purpose: ``pipelines/selfplay/game.py`` searches one
engine in this process for both sides without clocks and ends a game as soon as the side
to move could claim a draw (``outcome(claim_draw=True)``: also when its next move would make
the repetition or the fifty moves), and ``pipelines/puct/selfplay.py`` records a training
sample per searched position and stores its own termination names. Played through this
loop, their stored games would change. ``pipelines/datagen/games.py`` (training data) keeps
every search's score, plays one engine for both sides with no clock over raw pipes (or in
its worker's process) and adjudicates on those scores: python-chess's asyncio engine costs it
four times its moves' Python time, and a data move has no clock to keep.
"""
from __future__ import annotations

import asyncio
import datetime as dt
import logging
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

import chess
import chess.engine

from engines.registry import EngineSpec, did_you_mean
from engines.stamps import utc_now
from pipelines.games.adjudication import MATE_AS_CP, Adjudicator, Verdict
from pipelines.games.limits import Limits, TimeControl
from pipelines.processes import OWN_GROUP, orphan_safe

log = logging.getLogger(__name__)

START_TIMEOUT_S = 30.0
QUIT_TIMEOUT_S = 2.0
INFO = chess.engine.INFO_BASIC | chess.engine.INFO_SCORE


@dataclass(frozen=True)
class Opening:
    """A start position, the book moves played from it, and its ECO/name when known."""

    fen: str = chess.STARTING_FEN
    moves: tuple[str, ...] = ()
    eco: str | None = None
    name: str | None = None

    def board(self) -> chess.Board:
        board = chess.Board(self.fen)
        for uci in self.moves:
            board.push_uci(uci)
        return board


@dataclass(frozen=True)
class Slot:
    """One game of a plan: pairing index, round, game of the pair (0 or 1), colours, and the
    index of its opening."""

    pairing: int
    round: int
    game: int
    white: str
    black: str
    opening_index: int

    @property
    def key(self) -> str:
        return f"{self.pairing}:{self.round}:{self.game}"

    @property
    def pair_key(self) -> str:
        return f"{self.pairing}:{self.round}"


class EngineFailure(Exception):
    """An engine failed during a game: carries the Termination tag and the reason."""

    def __init__(self, termination: str, reason: str) -> None:
        super().__init__(reason)
        self.termination = termination
        self.reason = reason


@dataclass
class Seat:
    """One engine process of a worker, started on first use and after every failure."""

    spec: EngineSpec
    transport: asyncio.SubprocessTransport | None = None
    engine: chess.engine.Protocol | None = None
    starts: int = 0

    async def ensure_started(self) -> chess.engine.Protocol:
        if self.engine is not None and not self.engine.returncode.done():
            return self.engine
        await self.stop()
        popen = chess.engine.popen_uci if self.spec.protocol == "uci" \
            else chess.engine.popen_xboard
        try:
            self.transport, engine = await asyncio.wait_for(
                popen(orphan_safe(self.spec.command), stderr=subprocess.DEVNULL, **OWN_GROUP),
                START_TIMEOUT_S)
            self.engine = engine
            if self.spec.options:
                self.check_option_names(engine)
                await asyncio.wait_for(engine.configure(dict(self.spec.options)),
                                       START_TIMEOUT_S)
        except EngineFailure:
            await self.stop()
            raise
        except (TimeoutError, OSError, chess.engine.EngineError) as exc:
            await self.stop()
            raise EngineFailure("abandoned", f"{self.spec.name} failed to start: "
                                f"{type(exc).__name__}: {exc}") from None
        self.starts += 1
        return engine

    def check_option_names(self, engine: chess.engine.Protocol) -> None:
        """An option the engine does not declare (``uci:PATH?Hsh=16``) is one line naming it
        and the nearest it declares, not python-chess's list of them all."""
        for name in dict(self.spec.options):
            if name not in engine.options:      # python-chess's map ignores case, as UCI
                raise EngineFailure("abandoned", f"{self.spec.name}: the engine has no option "
                                    f"{name!r}{did_you_mean(name, engine.options)}")

    async def stop(self, polite: bool = True) -> None:
        """Quit politely (unless it just failed), then kill: a hung engine must not outlive
        its game."""
        engine, transport = self.engine, self.transport
        self.engine = self.transport = None
        if polite and engine is not None and not engine.returncode.done():
            try:
                await asyncio.wait_for(engine.quit(), QUIT_TIMEOUT_S)
            except (TimeoutError, chess.engine.EngineError, OSError):
                pass
        if transport is not None:
            if transport.get_returncode() is None:
                transport.kill()
            transport.close()


@dataclass
class MoveRecord:
    move: chess.Move
    comment: str
    white_score: int | None
    seconds: float
    book: bool = False


@dataclass
class GameRecord:
    """Everything a finished game leaves behind (the PGN is built from it)."""

    slot: Slot
    opening: Opening
    started_at: dt.datetime
    moves: list[MoveRecord] = field(default_factory=list)
    result: str = "*"
    termination: str = "unterminated"
    reason: str = ""
    finished_at: dt.datetime | None = None
    wall_seconds: float = 0.0
    engine_seconds: float = 0.0
    #: each side's engine's measured seconds on its moves (the move it lost on time included)
    clock_used: dict[bool, float] = field(default_factory=lambda: {True: 0.0, False: 0.0})
    #: each side's budget of seconds: under a clock its base time, the increment of each
    #: move made in time and each period's refill; under a move time that time for each move
    #: it was asked for; None without a time limit (nodes, depth)
    clock_budget: dict[bool, float] | None = None

    @property
    def plies(self) -> int:
        return sum(1 for m in self.moves if not m.book)

    @property
    def white_score(self) -> float | None:
        return {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}.get(self.result)


class Clock:
    """Remaining time per side under a time control (moves/seconds+increment), and the time
    each side was given so far (``given``: base time, increments and refills of the moves it
    made without losing on time, ``margin`` past zero allowed)."""

    def __init__(self, tc: TimeControl, margin: float = 0.0) -> None:
        self.tc = tc
        self.margin = margin
        self.remaining = {chess.WHITE: tc.seconds, chess.BLACK: tc.seconds}
        self.given = {chess.WHITE: tc.seconds, chess.BLACK: tc.seconds}
        self.moves_made = {chess.WHITE: 0, chess.BLACK: 0}

    def moves_to_go(self, side: bool) -> int | None:
        if not self.tc.moves:
            return None
        return self.tc.moves - self.moves_made[side] % self.tc.moves

    def spend(self, side: bool, seconds: float) -> float:
        """Charge a move; returns the time left before the increment (negative: flagged)."""
        left = self.remaining[side] - seconds
        self.moves_made[side] += 1
        credit = self.tc.increment
        if self.tc.moves and self.moves_made[side] % self.tc.moves == 0:
            credit += self.tc.seconds
        self.remaining[side] = left + credit
        if left >= -self.margin:
            self.given[side] += credit
        return left


class GamePlayer:
    """Plays one slot between two seats under search limits and adjudication rules."""

    def __init__(self, limits: Limits, adjudicator: Adjudicator) -> None:
        self.limits = limits
        self.adjudicator = adjudicator
        self.margin = limits.timemargin_ms / 1000

    async def play(self, slot: Slot, opening: Opening, white: Seat, black: Seat) -> GameRecord:
        record = GameRecord(slot, opening, utc_now())
        started = time.perf_counter()
        board = chess.Board(opening.fen)
        for uci in opening.moves:
            move = chess.Move.from_uci(uci)
            record.moves.append(MoveRecord(move, "book", None, 0.0, book=True))
            board.push(move)
        try:
            verdict = await self.play_moves(record, board, {chess.WHITE: white,
                                                            chess.BLACK: black})
        finally:
            record.wall_seconds = time.perf_counter() - started
            record.finished_at = utc_now()
        record.result, record.termination, record.reason = verdict
        return record

    async def play_moves(self, record: GameRecord, board: chess.Board,
                         seats: dict[bool, Seat]) -> Verdict:
        tc = self.limits.tc
        clock = Clock(tc, self.margin) if tc is not None else None
        per_move = self.limits.movetime_ms / 1000 if self.limits.movetime_ms else 0.0
        if clock is not None:
            record.clock_budget = clock.given          # kept up to date by the clock
        elif per_move:
            record.clock_budget = {chess.WHITE: 0.0, chess.BLACK: 0.0}
        scores: list[int | None] = []
        token = object()   # a new game for python-chess
        for side in (chess.WHITE, chess.BLACK):
            try:
                await self.new_game(seats[side], token, record)
            except EngineFailure as failure:
                await seats[side].stop(polite=False)
                return forfeit(board, side, failure)
        while True:
            over = rules_verdict(board)
            if over:
                return over
            side = board.turn
            if per_move and record.clock_budget is not None:
                record.clock_budget[side] += per_move
            try:
                move, info, seconds = await self.ask(seats[side], board, clock, token, record)
            except EngineFailure as failure:
                await seats[side].stop(polite=False)
                return forfeit(board, side, failure)
            record.clock_used[side] += seconds
            if clock is not None and clock.spend(side, seconds) < -self.margin:
                return forfeit(board, side, EngineFailure(
                    "time forfeit", f"{seats[side].spec.name} loses on time: "
                    f"{record.clock_used[side]:.3f}s used of {clock.given[side]:.3f}s"))
            white_score = score_for_white(info)
            scores.append(white_score)
            record.moves.append(MoveRecord(move, move_comment(info, side, seconds),
                                           white_score, seconds))
            board.push(move)
            verdict = self.adjudicator.verdict(board, scores)
            if verdict:
                return verdict

    async def new_game(self, seat: Seat, token: object, record: GameRecord) -> None:
        """Start the engine if needed and tell it a game begins, before any clock runs (as
        cutechess does: ``ucinewgame`` + ``isready``, which may clear a large hash)."""
        started = time.perf_counter()
        try:
            engine = await seat.ensure_started()
            if isinstance(engine, chess.engine.UciProtocol):
                engine.send_line("ucinewgame")
                await asyncio.wait_for(engine.ping(), START_TIMEOUT_S)
                # python-chess would send ucinewgame again inside the first timed play()
                engine.game, engine.first_game = token, False
        except TimeoutError:
            raise EngineFailure("stalled connection", f"{seat.spec.name} did not answer "
                                f"isready after ucinewgame") from None
        except chess.engine.EngineError as exc:
            raise EngineFailure("abandoned", f"{seat.spec.name} terminated: "
                                f"{exit_status(seat)}{exc}") from None
        finally:
            record.engine_seconds += time.perf_counter() - started

    async def ask(self, seat: Seat, board: chess.Board, clock: Clock | None, token: object,
                  record: GameRecord) -> tuple[chess.Move, dict[str, Any], float]:
        """The seat's move and search info, and how long it took."""
        started = time.perf_counter()
        try:
            engine = await seat.ensure_started()   # a (re)start is not charged to the clock
            limit, deadline = self.limit(board.turn, clock)
            started_move = time.perf_counter()
            try:
                result = await asyncio.wait_for(
                    engine.play(board, limit, game=token, info=INFO), deadline)
            except TimeoutError:
                timed = clock is not None or bool(self.limits.movetime_ms)
                if timed:          # the time it took counts against its budget
                    record.clock_used[board.turn] += time.perf_counter() - started_move
                raise EngineFailure("time forfeit" if timed else "stalled connection",
                                    f"{seat.spec.name} did not move within "
                                    f"{deadline:.1f}s") from None
            except chess.engine.EngineTerminatedError as exc:
                raise EngineFailure("abandoned", f"{seat.spec.name} terminated: "
                                    f"{exit_status(seat)}{exc}") from None
            except chess.engine.EngineError as exc:
                raise EngineFailure("illegal move", f"{seat.spec.name}: {exc}") from None
        finally:
            record.engine_seconds += time.perf_counter() - started
        seconds = time.perf_counter() - started_move
        if result.resigned:
            raise EngineFailure("normal", f"{seat.spec.name} resigns")
        if result.move is None or not board.is_legal(result.move):
            raise EngineFailure("illegal move",
                                f"{seat.spec.name} played no legal move ({result.move})")
        if self.limits.movetime_ms and seconds > self.limits.movetime_ms / 1000 + self.margin:
            record.clock_used[board.turn] += seconds
            raise EngineFailure("time forfeit", f"{seat.spec.name} used {seconds:.3f}s of "
                                f"{self.limits.movetime_ms} ms")
        return result.move, dict(result.info), seconds

    def limit(self, side: bool, clock: Clock | None) -> tuple[chess.engine.Limit, float]:
        """The search limit to send and how long to wait for the answer."""
        limits = self.limits
        limit = chess.engine.Limit(nodes=limits.nodes, depth=limits.depth)
        if clock is not None:
            limit.white_clock = max(clock.remaining[chess.WHITE], 0.001)
            limit.black_clock = max(clock.remaining[chess.BLACK], 0.001)
            limit.white_inc = limit.black_inc = clock.tc.increment
            limit.remaining_moves = clock.moves_to_go(side)
            return limit, clock.remaining[side] + self.margin
        if limits.movetime_ms:
            limit.time = limits.movetime_ms / 1000
            return limit, limit.time + self.margin + 0.05
        return limit, limits.move_timeout_s


def exit_status(seat: Seat) -> str:
    code = seat.transport.get_returncode() if seat.transport is not None else None
    return f"exit code {code}; " if code is not None else ""


def rules_verdict(board: chess.Board) -> Verdict | None:
    """Game over by the rules; threefold repetition and the fifty-move rule end the game at
    once, as in cutechess (no claim needed)."""
    outcome = board.outcome()
    if outcome is not None:
        reason = {
            chess.Termination.CHECKMATE: "{} mates",
            chess.Termination.STALEMATE: "Draw by stalemate",
            chess.Termination.INSUFFICIENT_MATERIAL: "Draw by insufficient mating material",
            chess.Termination.SEVENTYFIVE_MOVES: "Draw by fifty moves rule",
            chess.Termination.FIVEFOLD_REPETITION: "Draw by 3-fold repetition",
        }.get(outcome.termination, outcome.termination.name.lower())
        side = "White" if outcome.winner else "Black"
        return outcome.result(), "normal", reason.format(side)
    if board.halfmove_clock >= 100:
        return "1/2-1/2", "normal", "Draw by fifty moves rule"
    if board.is_repetition(3):
        return "1/2-1/2", "normal", "Draw by 3-fold repetition"
    return None


def forfeit(board: chess.Board, side: bool, failure: EngineFailure) -> Verdict:
    """The side at fault loses, unless its opponent could never mate (then a draw)."""
    if failure.termination == "time forfeit" and board.has_insufficient_material(not side):
        return "1/2-1/2", failure.termination, f"{failure.reason}; opponent cannot mate: draw"
    return ("0-1" if side == chess.WHITE else "1-0"), failure.termination, failure.reason


def score_for_white(info: dict[str, Any]) -> int | None:
    """The engine's score of its move from White's point of view, a mate as ``MATE_AS_CP``
    less the plies to it; None when the engine gave none."""
    score = info.get("score")
    if score is None:
        return None
    return score.white().score(mate_score=MATE_AS_CP)


def move_comment(info: dict[str, Any], side: bool, seconds: float) -> str:
    """cutechess's per-move comment: ``+0.35/12 0.101s`` (mover's view, pawns/depth, time)."""
    score = info.get("score")
    depth = info.get("depth", 0)
    if score is None:
        return f"{seconds:.3f}s"
    pov = score.pov(side)
    if pov.is_mate():
        mate = pov.mate() or 0
        text = f"{'+' if mate > 0 else '-'}M{abs(mate)}"
    else:
        text = f"{pov.score() / 100:+.2f}"
    return f"{text}/{depth} {seconds:.3f}s"
