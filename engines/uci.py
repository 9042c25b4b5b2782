"""The UCI front end: any searcher that yields one result per completed depth becomes a UCI
engine that tournament tools, GUIs and python-chess can drive.

The protocol runs on the main thread (stdin keeps being read while a search runs in its own
thread, so ``stop``, ``isready`` and ``quit`` are answered at once); the search thread asks the
time manager (:mod:`engines.timeman`) after every depth whether to go on and always ends with
a legal ``bestmove``. Bad input lines are answered with an ``info string error: ...`` line and
otherwise ignored.

Run an engine: ``python -m engines.uci alphabeta --eval hce-simple`` (or ``chesslab engine
alphabeta ...``). ``python -m engines.uci package.module:function`` runs any
:class:`EngineSpec` that ``function(argv)`` returns. Starting is cheap: the searcher (and its
compiled core) is imported and built on the first ``isready``, ``ucinewgame`` or ``go``.

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
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TextIO

import chess

from engines.timeman import GoLimits, TimeConfig, TimeManagementError, TimeManager

log = logging.getLogger(__name__)

AUTHOR = "the chesslab authors"
#: Longest wait for a search thread to end after ``stop`` before giving up on it.
JOIN_TIMEOUT_S = 10.0


class UciError(ValueError):
    """A protocol line that cannot be obeyed; the message quotes the line or the bad value."""


class SearchResult(Protocol):
    """One completed depth (``engines.alphabeta.DepthResult`` fits). Scores are from the side
    to move; ``score_mate`` counts moves, negative when mated; ``nodes`` and ``time_s`` count
    from the start of the search."""

    depth: int
    seldepth: int
    score_cp: int | None
    score_mate: int | None
    nodes: int
    time_s: float
    pv: list[chess.Move]


class Searcher(Protocol):
    """What the front end needs from a search (``engines.alphabeta.AlphaBeta`` fits)."""

    def new_game(self) -> None: ...

    def stop(self) -> None: ...

    def iterate(self, board: chess.Board, max_depth: int = 100, max_nodes: int | None = None,
                hard_deadline: float | None = None) -> Iterator[SearchResult]: ...


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
MOVE_OVERHEAD = UciOption("Move Overhead", "spin", TimeConfig().move_overhead_ms, 0, 5000)
CLEAR_HASH = UciOption("Clear Hash", "button")


@dataclass(frozen=True)
class EngineSpec:
    """An engine the front end can run: its identity, its options and how to build it.

    ``make_searcher(values)`` builds a searcher from the option values (keyed by option name);
    it is called again whenever an option changes. ``flush(searcher)`` is called at
    ``ucinewgame`` and ``quit`` (to write what the searcher logged, for example).
    """

    name: str
    author: str
    options: tuple[UciOption, ...]
    make_searcher: Callable[[Mapping[str, Any]], Searcher]
    flush: Callable[[Searcher], None] | None = None

    def all_options(self) -> tuple[UciOption, ...]:
        return (*self.options, MOVE_OVERHEAD, CLEAR_HASH)


# --------------------------------------------------------------------------------------------
# Parsing commands
# --------------------------------------------------------------------------------------------

GO_INTEGERS = ("depth", "nodes", "movetime", "wtime", "btime", "winc", "binc", "movestogo",
               "mate")
#: Accepted but without effect: the searchers search every legal move.
GO_IGNORED = ("searchmoves",)


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
    for token in tokens[moves_at + 1:]:
        try:
            board.push(board.parse_uci(token))
        except ValueError:
            raise UciError(f"illegal move {token!r} in {line}") from None
    return board


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
        elif word in ("infinite", "ponder"):
            values["infinite"] = True
            index += 1
        elif word in GO_IGNORED:
            index = _skip_argument(tokens, index)
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


def _skip_argument(tokens: Sequence[str], index: int) -> int:
    """Past an ignored parameter and its values (``searchmoves`` takes moves up to a keyword)."""
    index += 1
    while index < len(tokens) and tokens[index] not in (*GO_INTEGERS, *GO_IGNORED, "infinite"):
        index += 1
    return index


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

def info_line(result: SearchResult) -> str:
    """``info depth .. seldepth .. score cp|mate .. nodes .. nps .. time .. pv ..``.

    >>> from types import SimpleNamespace as R
    >>> info_line(R(depth=3, seldepth=5, score_cp=None, score_mate=-2, nodes=1500, time_s=0.5,
    ...             pv=[chess.Move.from_uci("e2e4")]))
    'info depth 3 seldepth 5 score mate -2 nodes 1500 nps 3000 time 500 pv e2e4'
    """
    score = f"mate {result.score_mate}" if result.score_mate is not None \
        else f"cp {result.score_cp if result.score_cp is not None else 0}"
    millis = int(result.time_s * 1000)
    nps = int(result.nodes / result.time_s) if result.time_s > 0 else 0
    line = (f"info depth {result.depth} seldepth {max(result.seldepth, result.depth)} "
            f"score {score} nodes {result.nodes} nps {nps} time {millis}")
    return line + (" pv " + " ".join(m.uci() for m in result.pv) if result.pv else "")


def best_move(board: chess.Board, completed: Sequence[SearchResult]) -> tuple[chess.Move | None,
                                                                               chess.Move | None]:
    """The move to play and the move to ponder on: the deepest result whose pv starts with a
    legal move, else any legal move (a search that produced nothing must still move).
    ``(None, None)`` when there is no legal move."""
    for result in reversed(completed):
        if result.pv and board.is_legal(result.pv[0]):
            move = result.pv[0]
            return move, _ponder_move(board, move, result.pv)
    return next(iter(board.legal_moves), None), None


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
        self.board = chess.Board()
        self.options = {o.name.lower(): o for o in spec.all_options()}
        self.values: dict[str, Any] = {o.name: o.default for o in spec.all_options()
                                       if o.kind != "button"}
        self._searcher: Searcher | None = None
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
        self.board = chess.Board()

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
        elif value != self.values[option.name]:
            self._flush()
            self._searcher = None  # rebuilt with the new value on next use
        self.values[option.name] = value

    def _position(self, arguments: list[str]) -> None:
        board = parse_position(arguments)
        self._finish_search()
        self.board = board

    def _go(self, arguments: list[str]) -> None:
        received = time.monotonic()  # the clock runs from here, not from the thread's start
        limits = parse_go(arguments)
        self._finish_search()
        searcher = self.searcher()
        stop = threading.Event()
        thread = threading.Thread(target=self._search, name="uci-search", daemon=True,
                                  args=(searcher, self.board.copy(), limits, stop, received))
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
        self._flush()
        return False

    # -- the search --------------------------------------------------------------------------

    def searcher(self) -> Searcher:
        """The searcher for the current option values, built on first use."""
        if self._searcher is None:
            values = {name: value for name, value in self.values.items()
                      if name != MOVE_OVERHEAD.name}
            self._searcher = self.spec.make_searcher(values)
        return self._searcher

    def _finish_search(self) -> None:
        """A command that changes state arrived during a search: end the search first."""
        if self._job is not None:
            log.debug("stopping the running search before the next command")
            self._stop([])

    def _flush(self) -> None:
        if self.spec.flush is not None and self._searcher is not None:
            self.spec.flush(self._searcher)

    def _search(self, searcher: Searcher, board: chess.Board, limits: GoLimits,
                stop: threading.Event, start: float) -> None:
        """The search thread: deepen while the time manager agrees, then answer bestmove."""
        budget = self.time_manager.plan(limits, board.turn)
        completed: list[SearchResult] = []
        if not any(board.legal_moves):  # mated or stalemated: nothing to search
            self.write(f"info depth 0 score {'mate 0' if board.is_check() else 'cp 0'}")
            if budget.infinite:
                stop.wait()
            self.write(bestmove_line(None, None))
            return
        try:
            for result in searcher.iterate(board.copy(), budget.max_depth, budget.max_nodes,
                                           budget.hard_deadline(start)):
                completed.append(result)
                self.write(info_line(result))
                elapsed = time.monotonic() - start
                if stop.is_set() or not self.time_manager.should_continue(
                        board, completed, budget, elapsed):
                    break
        except Exception as exc:  # whatever broke, the game still needs a legal move
            log.exception("search failed on %s", board.fen())
            self.write(f"info string error: search failed: {type(exc).__name__}: {exc}")
        if budget.infinite:
            stop.wait()
        self.write(bestmove_line(*best_move(board, completed)))


# --------------------------------------------------------------------------------------------
# Engines this front end runs
# --------------------------------------------------------------------------------------------

EVALS = ("hce", "hce-simple", "nnue")
LMRS = ("default", "none")
#: The LMR combo's values in UCI: "default" is a keyword of the option syntax ("var default"
#: breaks python-chess and other parsers), so the paper's formula is "standard" there.
UCI_LMRS = {"default": "standard", "none": "none"}


@dataclass
class AlphaBetaOptions:
    """Command-line options of the alpha-beta engine (the defaults of its UCI options)."""

    eval: str = field(default="hce", metadata={
        "help": "evaluation: hce (tapered PeSTO tables), hce-simple (paper 002's "
                "Simplified Evaluation Function) or nnue (needs --nnue)", "choices": EVALS})
    nnue: str = field(default="", metadata={
        "help": "the chesslab NNUE v1 .npz file of --eval nnue (UCI option EvalFile)"})
    lmr: str = field(default="default", metadata={
        "help": "late-move reductions: default (log d * log m / 1.95) or none", "choices": LMRS})
    hash: int = field(default=16, metadata={"help": "transposition table size in MB"})
    search_log_rate: float = field(default=0.0, metadata={
        "help": "fraction of LMR decisions written to the search_log table (0 = off)"})

    def __post_init__(self) -> None:
        if self.eval not in EVALS:
            raise ValueError(f"--eval must be one of {', '.join(EVALS)}, got {self.eval!r}")
        if self.eval == "nnue" and not self.nnue:
            raise ValueError("--eval nnue needs --nnue PATH (a chesslab NNUE v1 .npz file)")
        if self.nnue and not Path(self.nnue).is_file():
            raise ValueError(f"--nnue: no such network file: {self.nnue!r}")
        if self.nnue:   # a bad file fails at start-up, not at the first isready
            from engines.nnue.netfile import load_arrays

            load_arrays(self.nnue)
        if self.lmr not in LMRS:
            raise ValueError(f"--lmr must be one of {', '.join(LMRS)}, got {self.lmr!r}")
        if not 1 <= self.hash <= 65536:
            raise ValueError(f"--hash must be 1..65536 MB, got {self.hash!r}")
        if not 0.0 <= self.search_log_rate <= 1.0:
            raise ValueError(f"--search-log-rate must be in [0, 1], got {self.search_log_rate!r}")

    @classmethod
    def tiny(cls) -> AlphaBetaOptions:
        """The preset used by tests: a small table."""
        return cls(hash=4)


def alphabeta_spec(options: AlphaBetaOptions | None = None) -> EngineSpec:
    """The alpha-beta engine (``engines.alphabeta``), imported only when first needed."""
    options = options or AlphaBetaOptions()
    uci_options = (
        UciOption("Hash", "spin", options.hash, 1, 65536),
        UciOption("Eval", "combo", options.eval, choices=EVALS),
        UciOption("LMR", "combo", UCI_LMRS[options.lmr], choices=tuple(UCI_LMRS.values())),
        UciOption("SearchLogRate", "string", str(options.search_log_rate)),
        UciOption("EvalFile", "string", options.nnue),
    )
    return EngineSpec(f"chesslab alphabeta ({options.eval}, lmr {options.lmr})", AUTHOR,
                      uci_options, _make_alphabeta, _flush_search_log)


def _make_alphabeta(values: Mapping[str, Any]) -> Searcher:
    from engines.alphabeta import AlphaBeta, SearchConfig

    try:
        rate = float(values["SearchLogRate"])
    except ValueError:
        raise UciError(f"SearchLogRate takes a number, got {values['SearchLogRate']!r}") from None
    lmr = {uci: name for name, uci in UCI_LMRS.items()}[values["LMR"]]
    config = SearchConfig(eval=values["Eval"], lmr=lmr, hash_mb=values["Hash"],
                          search_log_rate=rate, nnue_path=values["EvalFile"] or None)
    return AlphaBeta(config)


def _flush_search_log(searcher: Searcher) -> None:
    """Write the sampled LMR decisions to the warehouse (only when logging is on)."""
    config = getattr(searcher, "config", None)
    if config is None or not getattr(config, "search_log_rate", 0.0):
        return
    from warehouse import Lake

    written = searcher.flush_search_log(Lake())  # type: ignore[attr-defined]
    log.info("wrote %d search log rows", written)


#: Engines runnable by name: their options dataclass and the spec built from it.
PROGRAMS: dict[str, tuple[type, Callable[[Any], EngineSpec]]] = {
    "alphabeta": (AlphaBetaOptions, alphabeta_spec),
}


def add_option_arguments(parser: argparse.ArgumentParser, options_cls: type) -> None:
    """``--field-name`` per field of an options dataclass (``metadata``: help, choices)."""
    for f in dataclasses.fields(options_cls):
        kind = type(f.default)
        parser.add_argument("--" + f.name.replace("_", "-"), dest=f.name, type=kind,
                            default=f.default, choices=f.metadata.get("choices"),
                            help=f"{f.metadata.get('help', '')} (default: {f.default})")


def load_spec(name: str, argv: Sequence[str]) -> EngineSpec:
    """The spec of a named engine (``alphabeta``) or of ``module:function`` given ``argv``."""
    if name in PROGRAMS:
        options_cls, make_spec = PROGRAMS[name]
        parser = argparse.ArgumentParser(prog=f"python -m engines.uci {name}")
        add_option_arguments(parser, options_cls)
        args = parser.parse_args(list(argv))
        return make_spec(options_cls(**vars(args)))
    if ":" not in name:
        raise UciError(f"unknown engine {name!r}: expected one of {', '.join(PROGRAMS)} "
                       f"or module:function")
    module_name, function_name = name.split(":", 1)
    factory = getattr(importlib.import_module(module_name), function_name)
    return factory(list(argv))


def serve(spec: EngineSpec, stream: TextIO | None = None, output: TextIO | None = None) -> int:
    """Speak UCI for ``spec`` on stdin/stdout until ``quit``."""
    return UciEngine(spec, output=output).run(stream if stream is not None else sys.stdin)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(f"usage: python -m engines.uci ENGINE [options]   (ENGINE: "
              f"{', '.join(PROGRAMS)} or module:function)", file=sys.stderr)
        return 0 if argv else 2
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        spec = load_spec(argv[0], argv[1:])
    except (ValueError, LookupError, ImportError) as exc:
        print(f"engines.uci: error: {exc}", file=sys.stderr)
        return 2
    return serve(spec)


if __name__ == "__main__":
    sys.exit(main())
