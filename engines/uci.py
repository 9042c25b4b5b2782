"""The UCI front end: any searcher that yields one result per completed depth becomes a UCI
engine that tournament tools, GUIs and python-chess can drive.

The protocol runs on the main thread (stdin keeps being read while a search runs in its own
thread, so ``stop``, ``isready`` and ``quit`` are answered at once); the search thread asks the
time manager (:mod:`engines.timeman`) after every depth whether to go on and always ends with
a legal ``bestmove``. Bad input lines are answered with an ``info string error: ...`` line and
otherwise ignored. A ``position`` that is not a legal chess position (python-chess's
``Board.status()``: no king, two kings of a colour, the side not to move in check, a pawn on
the first or eighth rank, ...) is refused the same way, and a ``go`` after it answers
``bestmove 0000`` without searching, as does a ``go`` whose searcher cannot be built.

Programs are found, not listed: every ``engines/<name>/program.py`` that defines a
:class:`Program` called ``PROGRAM`` is an engine (``alphabeta``, ``mcts``, ``puct``;
``engines/stockfish_volatility`` is ``stockfish-volatility``).
Run one: ``python -m engines.uci alphabeta --eval hce-simple`` (or ``chesslab engine
alphabeta ...``). ``python -m engines.uci package.module:function`` runs
any :class:`EngineSpec` that ``function(argv)`` returns. Starting is cheap: the searcher (and
its compiled core) is imported and built on the first ``isready``, ``ucinewgame`` or ``go``;
the files the options name (a network, a volatility model) start loading at start, in a
thread (:class:`BackgroundLoad`), so ``uci`` is answered at once (python-chess and most GUIs
allow the handshake 10 s; torch's import alone took 20 s on a busy machine) and ``isready``
waits for them; a program whose model cannot load exits 2 with the reason as soon as the
load fails.

For GUIs the front end offers ``MultiPV`` (the best N root moves, one ``info ... multipv k``
line each, best first) and ``go searchmoves`` (only the given root moves are searched); the
searcher does both through ``iterate(..., multipv=N, searchmoves=[...])``.

>>> import io
>>> out = io.StringIO()
>>> front = UciEngine(EngineSpec("toy", "nobody", (), lambda values: None), output=out)
>>> front.handle("position startpos moves e2e4 e7e5")
True
>>> front.board.fen()
'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2'
>>> front.handle("position startpos moves e2e5")
True
>>> out.getvalue().splitlines()[-1]
"info string error: illegal move 'e2e5' in position startpos moves e2e5"
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, Protocol, TextIO

import chess

from engines.search_report import PvLine, SearchReport
from engines.timeman import (
    GoLimits,
    IterationPolicy,
    TimeConfig,
    TimeManagementError,
    TimeManager,
)

log = logging.getLogger(__name__)

AUTHOR = "the chesslab authors"
#: Longest wait for a search thread to end after ``stop`` before giving up on it.
JOIN_TIMEOUT_S = 10.0


class UciError(ValueError):
    """A protocol line that cannot be obeyed; the message quotes the line or the bad value."""


class InvalidPositionError(UciError):
    """A ``position`` whose board is not a legal chess position: names the FEN and why."""


class Searcher(Protocol):
    """What the front end needs from a search (``engines.alphabeta.AlphaBeta`` fits): a
    :class:`~engines.search_report.SearchReport` per completed depth or report.

    ``iterate`` searches only ``searchmoves`` at the root when given, and with ``multipv``
    above 1 yields results that carry ``lines``: the best ``multipv`` root moves, best first
    (the result's own score and pv are the first line's). A searcher that holds resources
    (a child process) may define ``close()``: the front end calls it on ``quit`` and before
    an option change replaces the searcher.
    """

    def new_game(self) -> None: ...

    def stop(self) -> None: ...

    def iterate(self, board: chess.Board, max_depth: int = 100, max_nodes: int | None = None,
                hard_deadline: float | None = None, multipv: int = 1,
                searchmoves: Sequence[chess.Move] = ()) -> Iterator[SearchReport]: ...


# --------------------------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class UciOption:
    """One ``option name ... type ...`` an engine declares; ``kind`` is the UCI type."""

    name: str
    kind: str  # "spin" | "combo" | "check" | "string" | "button"
    default: Any = None
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()

    def declaration(self) -> str:
        """The line sent in answer to ``uci``."""
        line = f"option name {self.name} type {self.kind}"
        if self.kind == "button":
            return line
        default = str(self.default).lower() if self.kind == "check" else self.default
        line += f" default {'<empty>' if default == '' else default}"
        if self.kind == "spin":
            line += f" min {self.minimum} max {self.maximum}"
        return line + "".join(f" var {choice}" for choice in self.choices)

    def parse(self, text: str) -> Any:
        """The value a ``setoption`` line gives, checked against the declaration."""
        if self.kind == "spin":
            return self._parse_spin(text)
        if self.kind == "check":
            if text.lower() not in ("true", "false"):
                raise UciError(f"option {self.name!r} takes true or false, got {text!r}")
            return text.lower() == "true"
        if self.kind == "combo":
            for choice in self.choices:
                if choice.lower() == text.lower():
                    return choice
            raise UciError(
                f"option {self.name!r} takes one of {'/'.join(self.choices)}, got {text!r}")
        return "" if text == "<empty>" else text

    def _parse_spin(self, text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise UciError(f"option {self.name!r} takes an integer, got {text!r}") from None
        assert self.minimum is not None and self.maximum is not None
        if not self.minimum <= value <= self.maximum:
            raise UciError(
                f"option {self.name!r} takes {self.minimum}..{self.maximum}, got {text!r}")
        return value


#: Options every engine gets from the front end itself.
MULTI_PV = UciOption("MultiPV", "spin", 1, 1, 256)
MOVE_OVERHEAD = UciOption("Move Overhead", "spin", TimeConfig().move_overhead_ms, 0, 5000)
CLEAR_HASH = UciOption("Clear Hash", "button")
FRONT_END_OPTIONS = (MULTI_PV, MOVE_OVERHEAD, CLEAR_HASH)
#: Option names by which own programs declare their evaluation and model version.
EVAL_OPTION, MODEL_OPTION = "Eval", "Model"


@dataclass(frozen=True)
class EngineSpec:
    """An engine the front end can run: its identity, its options and how to build it.

    ``make_searcher(values)`` builds a searcher from the option values (keyed by option name);
    it is called again whenever an option changes. ``flush(searcher)`` is called at
    ``ucinewgame`` and ``quit`` (to write what the searcher logged, for example).
    ``identity_excludes`` names options that never change a move (logging), left out of the
    engine's identity. By convention an option ``Eval`` names the evaluation and ``Model``
    the model version (``KIND@VERSION``) it loads; the identity records both.
    ``make_policy(values)``, when given, is the iteration policy for the option values (the
    volatility net's early stop), replacing the time manager's default. ``load(values)``,
    when given, loads the files the option values name (a network) and raises a ValueError
    naming the one that cannot load: :func:`preload` runs it, and ``make_policy``, at start.
    """

    name: str
    author: str
    options: tuple[UciOption, ...]
    make_searcher: Callable[[Mapping[str, Any]], Searcher]
    flush: Callable[[Searcher], None] | None = None
    identity_excludes: tuple[str, ...] = ()
    make_policy: Callable[[Mapping[str, Any]], IterationPolicy | None] | None = None
    load: Callable[[Mapping[str, Any]], None] | None = None

    def all_options(self) -> tuple[UciOption, ...]:
        return (*self.options, *FRONT_END_OPTIONS)

    def defaults(self) -> dict[str, Any]:
        """The value of every option of the program (front-end options left out)."""
        return {o.name: o.default for o in self.options if o.kind != "button"}


def preload(spec: EngineSpec, values: Mapping[str, Any] | None = None) -> None:
    """Load what the option values (default: the program's defaults) name, now: the network,
    the volatility model. A ValueError (UciError) names what cannot load; a program started
    with it exits at start instead of accepting ``go`` and never answering."""
    values = spec.defaults() if values is None else values
    if spec.load is not None:
        spec.load(values)
    if spec.make_policy is not None:
        spec.make_policy(values)


class BackgroundLoad:
    """:func:`preload` of a program, in a thread started now; :meth:`wait` before anything
    that needs what it loads. A load that fails ends the program: one line on stderr and
    exit status 2 (what a program that could not load its model did at start)."""

    def __init__(self, spec: EngineSpec, values: Mapping[str, Any] | None = None) -> None:
        self.thread = threading.Thread(target=self.load, args=(spec, values),
                                       name="engine-load", daemon=True)
        self.thread.start()

    def load(self, spec: EngineSpec, values: Mapping[str, Any] | None) -> None:
        try:
            preload(spec, values)
        except (ValueError, LookupError, ImportError) as exc:
            sys.stdout.flush()
            print(f"engines.uci: error: {exc}", file=sys.stderr, flush=True)
            os._exit(2)

    def wait(self) -> None:
        self.thread.join()


# --------------------------------------------------------------------------------------------
# Parsing commands
# --------------------------------------------------------------------------------------------

GO_INTEGERS = ("depth", "nodes", "movetime", "wtime", "btime", "winc", "binc", "movestogo",
               "mate")
GO_FLAGS = ("infinite", "ponder")


def parse_position(tokens: Sequence[str]) -> chess.Board:
    """``position startpos|fen <fen> [moves ...]`` (tokens after ``position``) as a board.

    >>> parse_position("fen k7/8/8/8/8/8/8/4K2R w K - 0 1 moves e1g1".split()).fen()
    'k7/8/8/8/8/8/8/5RK1 b - - 1 1'
    """
    line = "position " + " ".join(tokens)
    if not tokens or tokens[0] not in ("startpos", "fen"):
        raise UciError(f"expected 'position startpos' or 'position fen', got {line!r}")
    moves_at = tokens.index("moves") if "moves" in tokens else len(tokens)
    if tokens[0] == "startpos":
        board = chess.Board()
    else:
        fen = " ".join(tokens[1:moves_at])
        try:
            board = chess.Board(fen)
        except ValueError as exc:
            raise UciError(f"bad fen {fen!r}: {exc}") from None
        problems = position_problems(board)
        if problems:
            raise InvalidPositionError(f"refused position {fen!r}: {'; '.join(problems)}")
    for token in tokens[moves_at + 1:]:
        try:
            board.push(board.parse_uci(token))
        except ValueError:
            raise UciError(f"illegal move {token!r} in {line}") from None
    return board


#: What each of python-chess's ``Board.status()`` flags means, for the refusal's message.
STATUS_PROBLEMS = (
    (chess.STATUS_EMPTY, "the board is empty"),
    (chess.STATUS_NO_WHITE_KING, "no white king"),
    (chess.STATUS_NO_BLACK_KING, "no black king"),
    (chess.STATUS_TOO_MANY_KINGS, "more than one king of a colour"),
    (chess.STATUS_TOO_MANY_WHITE_PAWNS, "more than 8 white pawns"),
    (chess.STATUS_TOO_MANY_BLACK_PAWNS, "more than 8 black pawns"),
    (chess.STATUS_PAWNS_ON_BACKRANK, "a pawn on the first or eighth rank"),
    (chess.STATUS_TOO_MANY_WHITE_PIECES, "more than 16 white pieces"),
    (chess.STATUS_TOO_MANY_BLACK_PIECES, "more than 16 black pieces"),
    (chess.STATUS_OPPOSITE_CHECK, "the side not to move is in check"),
    (chess.STATUS_TOO_MANY_CHECKERS, "more than two pieces give check"),
    (chess.STATUS_IMPOSSIBLE_CHECK, "a check that no legal move can have given"),
)
#: Flags of a position that is played anyway: python-chess (and every FEN a searcher gets)
#: drops castling rights without their king and rook, and an en-passant square no pawn can
#: take on, as other engines do.
TOLERATED_STATUS = chess.STATUS_BAD_CASTLING_RIGHTS | chess.STATUS_INVALID_EP_SQUARE


def position_problems(board: chess.Board) -> list[str]:
    """Why ``board`` is not a position to search (empty when it is one), from python-chess's
    :meth:`chess.Board.status` less :data:`TOLERATED_STATUS`.

    >>> position_problems(chess.Board("8/8/8/8/8/8/8/4K3 w - - 0 1"))
    ['no black king']
    >>> position_problems(chess.Board("4k3/8/8/8/8/8/8/4K2R w KQkq - 0 1"))
    []
    """
    status = board.status() & ~TOLERATED_STATUS
    problems = [text for flag, text in STATUS_PROBLEMS if status & flag]
    known = 0
    for flag, _ in STATUS_PROBLEMS:
        known |= flag
    if status & ~known:
        problems.append(f"python-chess status {int(status & ~known):#x}")
    return problems


def parse_go(tokens: Sequence[str]) -> GoLimits:
    """``go ...`` (tokens after ``go``) as limits; ``ponder`` searches until stop/ponderhit.

    >>> parse_go("wtime 1000 btime 900 winc 10 binc 10".split()).btime
    900
    """
    values: dict[str, Any] = {}
    index = 0
    while index < len(tokens):
        word = tokens[index]
        if word in GO_INTEGERS:
            values[word] = _go_integer(tokens, index)
            index += 2
        elif word in GO_FLAGS:
            values["infinite"] = True
            index += 1
        elif word == "searchmoves":
            index, values["searchmoves"] = _move_list(tokens, index + 1)
        else:
            raise UciError(f"unknown go parameter {word!r} in {'go ' + ' '.join(tokens)!r}")
    try:
        return GoLimits(**values)
    except TimeManagementError as exc:
        raise UciError(str(exc)) from None


def _go_integer(tokens: Sequence[str], index: int) -> int:
    if index + 1 >= len(tokens):
        raise UciError(f"go {tokens[index]} needs a number")
    try:
        return int(tokens[index + 1])
    except ValueError:
        raise UciError(f"go {tokens[index]} needs a number, got {tokens[index + 1]!r}") from None


def _move_list(tokens: Sequence[str], index: int) -> tuple[int, tuple[str, ...]]:
    """The moves of ``searchmoves`` (up to the next keyword) and the index after them."""
    end = index
    while end < len(tokens) and tokens[end] not in (*GO_INTEGERS, *GO_FLAGS, "searchmoves"):
        end += 1
    if end == index:
        raise UciError("go searchmoves needs at least one move")
    return end, tuple(tokens[index:end])


def root_moves(board: chess.Board, searchmoves: Sequence[str]) -> list[chess.Move]:
    """``go searchmoves`` as legal moves of ``board``. As Stockfish, moves that are not legal
    here are ignored (a GUI waiting for ``bestmove`` must get one); none left means all moves.

    >>> [m.uci() for m in root_moves(chess.Board(), ["e2e4", "g1f3"])]
    ['e2e4', 'g1f3']
    >>> [m.uci() for m in root_moves(chess.Board(), ["e2e5", "junk", "d2d4"])]
    ['d2d4']
    """
    moves = []
    for text in searchmoves:
        try:
            moves.append(board.parse_uci(text))
        except ValueError:
            log.info("searchmoves: ignoring %r, not a legal move in %s", text, board.fen())
    return moves


def parse_setoption(tokens: Sequence[str]) -> tuple[str, str | None]:
    """``setoption name <name> [value <value>]`` (tokens after ``setoption``): name, value."""
    if not tokens or tokens[0] != "name":
        raise UciError(f"expected 'setoption name ...', got {'setoption ' + ' '.join(tokens)!r}")
    value_at = tokens.index("value") if "value" in tokens else len(tokens)
    name = " ".join(tokens[1:value_at])
    value = " ".join(tokens[value_at + 1:]) if value_at < len(tokens) else None
    return name, value


# --------------------------------------------------------------------------------------------
# Writing answers
# --------------------------------------------------------------------------------------------

def info_line(result: SearchReport, line: PvLine | None = None, multipv: int | None = None) -> str:
    """``info depth .. seldepth .. [multipv k] score cp|mate .. nodes .. nps .. time .. pv ..``
    of a result, or of one of its MultiPV lines.

    >>> info_line(SearchReport(depth=3, seldepth=5, score_cp=None, score_mate=-2, nodes=1500,
    ...                        time_s=0.5, pv=[chess.Move.from_uci("e2e4")]))
    'info depth 3 seldepth 5 score mate -2 nodes 1500 nps 3000 time 500 pv e2e4'
    """
    shown: PvLine | SearchReport = line if line is not None else result
    score = f"mate {shown.score_mate}" if shown.score_mate is not None \
        else f"cp {shown.score_cp if shown.score_cp is not None else 0}"
    millis = int(result.time_s * 1000)
    nps = int(result.nodes / result.time_s) if result.time_s > 0 else 0
    text = (f"info depth {result.depth} seldepth {max(result.seldepth, result.depth)} "
            + (f"multipv {multipv} " if multipv is not None else "")
            + f"score {score} nodes {result.nodes} nps {nps} time {millis}")
    return text + (" pv " + " ".join(m.uci() for m in shown.pv) if shown.pv else "")


def info_lines(result: SearchReport) -> list[str]:
    """One ``info`` line per MultiPV line of the result (numbered from 1, best first), or the
    result's own line when it has fewer than two."""
    lines: Sequence[PvLine] = getattr(result, "lines", None) or ()
    if len(lines) < 2:
        return [info_line(result)]
    return [info_line(result, line, k) for k, line in enumerate(lines, start=1)]


def best_move(board: chess.Board, completed: Sequence[SearchReport],
              allowed: Sequence[chess.Move] = ()) -> tuple[chess.Move | None, chess.Move | None]:
    """The move to play and the move to ponder on: the deepest result whose pv starts with a
    legal move, else any legal move, one of ``allowed`` (``searchmoves``) when given (a
    search that produced nothing must still move). ``(None, None)`` when there is no legal
    move."""
    for result in reversed(completed):
        if result.pv and board.is_legal(result.pv[0]):
            move = result.pv[0]
            return move, _ponder_move(board, move, result.pv)
    return next(iter(allowed or board.legal_moves), None), None


def _ponder_move(board: chess.Board, move: chess.Move,
                 pv: Sequence[chess.Move]) -> chess.Move | None:
    if len(pv) < 2:
        return None
    board = board.copy(stack=False)
    board.push(move)
    return pv[1] if board.is_legal(pv[1]) else None


def bestmove_line(move: chess.Move | None, ponder: chess.Move | None) -> str:
    if move is None:
        return "bestmove 0000"
    return f"bestmove {move.uci()}" + (f" ponder {ponder.uci()}" if ponder else "")


# --------------------------------------------------------------------------------------------
# The protocol loop
# --------------------------------------------------------------------------------------------

@dataclass
class _SearchJob:
    thread: threading.Thread
    stop: threading.Event
    searcher: Searcher


class UciEngine:
    """The protocol state of one engine process: options, position, the running search."""

    def __init__(self, spec: EngineSpec, output: TextIO | None = None,
                 time_manager: TimeManager | None = None) -> None:
        self.spec = spec
        self.output = output if output is not None else sys.stdout
        self.time_manager = time_manager or TimeManager()
        self._default_policy = self.time_manager.policy
        self.board = chess.Board()
        self.refused: str | None = None    # why the last position was refused (go: 0000)
        self.options = {o.name.lower(): o for o in spec.all_options()}
        self.values: dict[str, Any] = {o.name: o.default for o in spec.all_options()
                                       if o.kind != "button"}
        self._searcher: Searcher | None = None
        self.loading: BackgroundLoad | None = None   # the program's files, loading
        self._job: _SearchJob | None = None
        self._write_lock = threading.Lock()

    # -- entry points ------------------------------------------------------------------------

    def run(self, stream: TextIO) -> int:
        """Read commands until ``quit`` or end of input; returns the exit status."""
        while True:
            line = stream.readline()
            if not line:
                self.handle("quit")
                return 0
            if not self.handle(line):
                return 0

    def handle(self, line: str) -> bool:
        """Obey one command line; False after ``quit``. Never raises on bad input."""
        tokens = line.split()
        if not tokens:
            return True
        command, arguments = tokens[0], tokens[1:]
        handler = self._handlers().get(command)
        try:
            if handler is None:
                raise UciError(f"unknown command {line.strip()!r}")
            return handler(arguments) is not False
        except (UciError, TimeManagementError) as exc:
            self.write(f"info string error: {exc}")
        except Exception as exc:  # an engine process must outlive any one bad line
            log.exception("command %r failed", line.strip())
            self.write(f"info string error: {type(exc).__name__}: {exc} (in {line.strip()!r})")
        return True

    def write(self, line: str) -> None:
        with self._write_lock:
            self.output.write(line + "\n")
            self.output.flush()

    # -- commands ----------------------------------------------------------------------------

    def _handlers(self) -> dict[str, Callable[[list[str]], bool | None]]:
        return {
            "uci": self._uci, "isready": self._isready, "ucinewgame": self._ucinewgame,
            "setoption": self._setoption, "position": self._position, "go": self._go,
            "stop": self._stop, "ponderhit": self._stop, "quit": self._quit,
            "debug": lambda _: None, "register": lambda _: None,
        }

    def _uci(self, _: list[str]) -> None:
        self.write(f"id name {self.spec.name}")
        self.write(f"id author {self.spec.author}")
        for option in self.spec.all_options():
            self.write(option.declaration())
        self.write("uciok")

    def _isready(self, _: list[str]) -> None:
        """Build the searcher now (slow imports happen here, not at start); readyok always
        follows, also after an error reported by an info string, so a GUI never hangs."""
        try:
            if self._job is None:
                self.searcher()
        finally:
            self.write("readyok")

    def _ucinewgame(self, _: list[str]) -> None:
        self._finish_search()
        self._flush()
        self.searcher().new_game()
        self.board, self.refused = chess.Board(), None

    def _setoption(self, arguments: list[str]) -> None:
        name, text = parse_setoption(arguments)
        option = self.options.get(name.lower())
        if option is None:
            raise UciError(f"no such option {name!r}")
        self._finish_search()
        if option is CLEAR_HASH:
            self.searcher().new_game()
            return
        if text is None:
            raise UciError(f"setoption {option.name!r} needs a value")
        value = option.parse(text)
        if option is MOVE_OVERHEAD:
            config = dataclasses.replace(self.time_manager.config, move_overhead_ms=value)
            self.time_manager = dataclasses.replace(self.time_manager, config=config)
        elif option not in FRONT_END_OPTIONS and value != self.values[option.name]:
            self._release()  # rebuilt with the new value on next use
        self.values[option.name] = value

    def _position(self, arguments: list[str]) -> None:
        try:
            board = parse_position(arguments)
        except InvalidPositionError as exc:   # not a position: nothing to search until the next
            self._finish_search()
            self.refused = str(exc)
            raise
        self._finish_search()
        self.board, self.refused = board, None

    def _go(self, arguments: list[str]) -> None:
        received = time.monotonic()  # the clock runs from here, not from the thread's start
        limits = parse_go(arguments)
        self._finish_search()
        if self.refused is not None:
            self.write(f"info string error: no search: {self.refused}")
            self.write(bestmove_line(None, None))
            return
        moves = root_moves(self.board, limits.searchmoves)
        try:
            searcher = self.searcher()
        except Exception as exc:   # a go must be answered, or the GUI waits for ever
            log.debug("cannot build the searcher", exc_info=True)
            self.write(f"info string error: cannot search: {exc}")
            self.write(bestmove_line(None, None))
            return
        stop = threading.Event()
        thread = threading.Thread(target=self._search, name="uci-search", daemon=True,
                                  args=(searcher, self.board.copy(), limits, moves, stop,
                                        received))
        self._job = _SearchJob(thread, stop, searcher)
        thread.start()

    def _stop(self, _: list[str]) -> None:
        job, self._job = self._job, None
        if job is not None:
            job.stop.set()
            if job.thread.is_alive():
                job.searcher.stop()
            job.thread.join(JOIN_TIMEOUT_S)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a running search to answer bestmove by itself; True when none runs."""
        if self._job is not None:
            self._job.thread.join(timeout)
            if self._job.thread.is_alive():
                return False
            self._job = None
        return True

    def _quit(self, _: list[str]) -> bool:
        self._stop([])
        self._release()
        if self.loading is not None:    # a file that cannot load still ends the program 2
            self.loading.wait()
        return False

    # -- the search --------------------------------------------------------------------------

    def searcher(self) -> Searcher:
        """The searcher for the current option values, built on first use (once the
        program's files have loaded)."""
        if self.loading is not None:
            self.loading.wait()
        if self._searcher is None:
            front = {option.name for option in FRONT_END_OPTIONS}
            values = {name: value for name, value in self.values.items() if name not in front}
            searcher = self.spec.make_searcher(values)
            if self.spec.make_policy is not None:  # a policy that fails leaves no searcher
                policy = self.spec.make_policy(values) or self._default_policy
                self.time_manager = dataclasses.replace(self.time_manager, policy=policy)
            self._searcher = searcher
        return self._searcher

    def _finish_search(self) -> None:
        """A command that changes state arrived during a search: end the search first."""
        if self._job is not None:
            log.debug("stopping the running search before the next command")
            self._stop([])

    def _flush(self) -> None:
        if self.spec.flush is not None and self._searcher is not None:
            self.spec.flush(self._searcher)

    def _release(self) -> None:
        """Flush the searcher and let it free what it holds (``close()``, when it has one: a
        child engine whose reader thread would otherwise keep this process alive after
        ``quit``); on quit, and when an option change replaces it."""
        self._flush()
        searcher, self._searcher = self._searcher, None
        close = getattr(searcher, "close", None)
        if close is not None:
            close()

    def _search(self, searcher: Searcher, board: chess.Board, limits: GoLimits,
                moves: list[chess.Move], stop: threading.Event, start: float) -> None:
        """The search thread: deepen while the time manager agrees, then answer bestmove."""
        budget = self.time_manager.plan(limits, board.turn)
        completed: list[SearchReport] = []
        if not any(board.legal_moves):  # mated or stalemated: nothing to search
            self.write(f"info depth 0 score {'mate 0' if board.is_check() else 'cp 0'}")
            if budget.infinite:
                stop.wait()
            self.write(bestmove_line(None, None))
            return
        try:
            for result in searcher.iterate(board.copy(), budget.max_depth, budget.max_nodes,
                                           budget.hard_deadline(start),
                                           multipv=self.values[MULTI_PV.name],
                                           searchmoves=moves):
                completed.append(result)
                for line in info_lines(result):
                    self.write(line)
                elapsed = time.monotonic() - start
                if stop.is_set() or not self.time_manager.should_continue(
                        board, completed, budget, elapsed):
                    break
        except Exception as exc:  # whatever broke, the game still needs a legal move
            log.exception("search failed on %s", board.fen())
            self.write(f"info string error: search failed: {type(exc).__name__}: {exc}")
        if budget.infinite:
            stop.wait()
        self.write(bestmove_line(*best_move(board, completed, moves)))


# --------------------------------------------------------------------------------------------
# Programs: found by scanning the package, so a new engine is a new folder
# --------------------------------------------------------------------------------------------

#: The module of ``engines/<name>/`` that defines the program's ``PROGRAM``.
PROGRAM_MODULE = "program"


@dataclass(frozen=True)
class Program:
    """A UCI program runnable by name: ``engines/<name>/program.py`` defines ``PROGRAM``.

    options: the command-line options dataclass (one ``--flag`` per field, ``metadata`` gives
        help and choices; the first docstring line is the program's summary); the values are
        the defaults of the UCI options.
    spec: the engine (UCI options and searcher factory) for an options object.
    """

    name: str
    options: type
    spec: Callable[[Any], EngineSpec]

    @property
    def summary(self) -> str:
        return (self.options.__doc__ or self.name).strip().splitlines()[0]


def program_names() -> list[str]:
    """The engines with a ``program.py``, found on disk without importing any of them.

    >>> "alphabeta" in program_names()
    True
    """
    import engines

    return sorted({path.parent.name.replace("_", "-") for folder in engines.__path__
                   for path in Path(folder).glob(f"*/{PROGRAM_MODULE}.py")})


def load_program(name: str) -> Program:
    """The ``PROGRAM`` of ``engines/<name>/program.py``; UciError listing the programs."""
    names = program_names()
    if name not in names:
        raise UciError(f"unknown engine {name!r}: expected one of {', '.join(names)} "
                       f"or module:function")
    module = f"engines.{name.replace('-', '_')}.{PROGRAM_MODULE}"
    program = getattr(importlib.import_module(module), "PROGRAM", None)
    if not isinstance(program, Program):
        raise UciError(f"engines/{name}/{PROGRAM_MODULE}.py defines no PROGRAM")
    return program


class _OptionParser(argparse.ArgumentParser):
    """Command-line errors as UciError (one line, exit status 2 from :func:`main`)."""

    def error(self, message: str) -> NoReturn:
        raise UciError(f"{self.prog}: {message}")


def add_option_arguments(parser: argparse.ArgumentParser, options_cls: type) -> None:
    """``--field-name`` per field of an options dataclass (``metadata``: help, choices)."""
    for f in dataclasses.fields(options_cls):
        kind = type(f.default)
        parser.add_argument("--" + f.name.replace("_", "-"), dest=f.name, type=kind,
                            default=f.default, choices=f.metadata.get("choices"),
                            help=f"{f.metadata.get('help', '')} (default: {f.default})")


def program_options(program: Program, argv: Sequence[str]) -> Any:
    """The program's options dataclass from command-line arguments (``--eval hce``)."""
    parser = _OptionParser(prog=f"python -m engines.uci {program.name}",
                           description=program.summary)
    add_option_arguments(parser, program.options)
    return program.options(**vars(parser.parse_args(list(argv))))


def load_spec(name: str, argv: Sequence[str]) -> EngineSpec:
    """The spec of a discovered program (``alphabeta``) or of ``module:function`` given
    ``argv``."""
    if ":" in name:
        module_name, function_name = name.split(":", 1)
        factory = getattr(importlib.import_module(module_name), function_name)
        return factory(list(argv))
    program = load_program(name)
    return program.spec(program_options(program, argv))


def serve(spec: EngineSpec, stream: TextIO | None = None, output: TextIO | None = None) -> int:
    """Speak UCI for ``spec`` on stdin/stdout until ``quit``. The files its options name
    load in the background of a program on stdin (:class:`BackgroundLoad`), else first
    (:func:`preload`: a ValueError naming the one that cannot load)."""
    if stream is not None:
        preload(spec)
        return UciEngine(spec, output=output).run(stream)
    engine = UciEngine(spec, output=output)
    engine.loading = BackgroundLoad(spec)
    return engine.run(sys.stdin)


def usage() -> str:
    """The ``--help`` text: one line per discovered program."""
    lines = ["usage: python -m engines.uci ENGINE [options]   (ENGINE --help lists its options)",
             "", "engines:"]
    for name in program_names():
        lines.append(f"  {name:<12} {load_program(name).summary}")
    lines.append(f"  {'module:function':<12} an EngineSpec that function(argv) returns")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(), file=sys.stderr)
        return 0 if argv else 2
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        spec = load_spec(argv[0], argv[1:])
    except (ValueError, LookupError, ImportError) as exc:
        print(f"engines.uci: error: {exc}", file=sys.stderr)
        return 2
    engine = UciEngine(spec)
    engine.loading = BackgroundLoad(spec)
    return engine.run(sys.stdin)


if __name__ == "__main__":
    # Run the importable module's main, not this __main__ copy: programs subclass nothing
    # here, but they import Program, UciOption... from ``engines.uci``.
    from engines.uci import main as module_main

    sys.exit(module_main())
