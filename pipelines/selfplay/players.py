"""The engine that plays both sides of a self-play game, from its spec string.

chesslab's own alpha-beta engine is searched in this process (no UCI pipe, no engine process:
much faster at small node counts), built from the same options its UCI program would use, so
``alphabeta:eval=hce-simple,hash=4`` plays the same engine either way. Every other spec is
started as a UCI (or xboard) process through python-chess.

>>> mover = open_mover("alphabeta:eval=hce,hash=1", nodes=300, depth=None)
>>> type(mover).__name__
'InProcessMover'
>>> mover.move(chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")).move.uci()
'd1d8'
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import chess
import chess.engine

from engines.registry import EngineSpec, parse_engine
from pipelines.selfplay.config import SelfplayError

START_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Choice:
    """A move and the engine's score after its search, from White's view (None: unknown)."""

    move: chess.Move
    white_cp: int | None = None
    white_mate: int | None = None


class Mover(Protocol):
    """One engine playing one game at a time."""

    def new_game(self) -> None: ...

    def move(self, board: chess.Board) -> Choice: ...

    def close(self) -> None: ...


def resolve_engine(text: str) -> EngineSpec:
    """The engine a spec names; SelfplayError (one line, naming the spec) otherwise."""
    try:
        return parse_engine(text)
    except ValueError as exc:
        raise SelfplayError(f"selfplay engine {text!r}: {exc}") from None


def runs_in_process(spec: EngineSpec) -> bool:
    """Whether the spec is chesslab's alpha-beta engine (searched here instead of over UCI)."""
    return spec.kind == "own" and spec.command[3:4] == ("alphabeta",)


def open_mover(engine: EngineSpec | str, nodes: int | None, depth: int | None,
               in_process: bool = True) -> Mover:
    """The mover for a player (or a spec string, models not resolved): in-process for
    chesslab's alpha-beta (unless ``in_process`` is False, as the benchmark compares), a
    UCI/xboard process otherwise."""
    spec = resolve_engine(engine) if isinstance(engine, str) else engine
    if in_process and runs_in_process(spec):
        return InProcessMover(spec, nodes, depth)
    return ProcessMover(spec, nodes, depth)


def searcher_for(spec: EngineSpec) -> Any:
    """The searcher ``python -m engines.uci alphabeta ARGS`` would build, with the spec's
    ``?Option=value`` settings applied as UCI ``setoption`` would."""
    from engines.uci import UciError, load_spec

    try:
        front = load_spec("alphabeta", list(spec.command[4:]))
        values = {option.name: option.default for option in front.all_options()}
        declared = {option.name.lower(): option for option in front.all_options()}
        for name, value in spec.options.items():
            option = declared.get(name.lower())
            if option is None:
                raise UciError(f"no option {name!r}")
            values[option.name] = option.parse(str(value).lower() if isinstance(value, bool)
                                               else str(value))
        return front.make_searcher(values)
    except (ValueError, SystemExit) as exc:   # argparse exits on a bad --setting
        raise SelfplayError(f"selfplay engine {spec.name!r}: bad settings: {exc}") from None


class InProcessMover:
    """chesslab's alpha-beta engine searched in this process."""

    def __init__(self, spec: EngineSpec, nodes: int | None, depth: int | None) -> None:
        self.spec = spec
        self.nodes, self.depth = nodes, depth
        self.searcher = searcher_for(spec)

    def new_game(self) -> None:
        self.searcher.new_game()

    def move(self, board: chess.Board) -> Choice:
        from engines.uci import best_move

        completed = list(self.searcher.iterate(board, max_depth=self.depth or 100,
                                               max_nodes=self.nodes))
        move, _ = best_move(board, completed)
        if move is None:
            raise SelfplayError(f"engine {self.spec.name!r}: no legal move in {board.fen()!r}")
        if not completed:
            return Choice(move)
        last = completed[-1]
        sign = 1 if board.turn == chess.WHITE else -1
        mate = last.score_mate * sign if last.score_mate is not None else None
        cp = last.score_cp * sign if last.score_cp is not None else None
        return Choice(move, cp, mate)

    def close(self) -> None:
        return None


class ProcessMover:
    """An engine process spoken to over UCI (or xboard) by python-chess."""

    def __init__(self, spec: EngineSpec, nodes: int | None, depth: int | None) -> None:
        self.spec = spec
        self.limit = chess.engine.Limit(nodes=nodes, depth=depth)
        self.engine = start_engine(spec)
        self.game: object = object()

    def new_game(self) -> None:
        self.game = object()   # python-chess sends ucinewgame on a new game token

    def move(self, board: chess.Board) -> Choice:
        try:
            result = self.engine.play(board, self.limit, game=self.game,
                                      info=chess.engine.INFO_SCORE)
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError) as exc:
            raise SelfplayError(f"engine {self.spec.name!r} failed in {board.fen()!r}: "
                                f"{exc}") from None
        if result.move is None or not board.is_legal(result.move):
            raise SelfplayError(f"engine {self.spec.name!r} played no legal move "
                                f"({result.move}) in {board.fen()!r}")
        score = result.info.get("score")
        if score is None:
            return Choice(result.move)
        white = score.white()
        return Choice(result.move, white.score(), white.mate())

    def close(self) -> None:
        try:
            self.engine.quit()
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError):
            self.engine.close()


def start_engine(spec: EngineSpec) -> chess.engine.SimpleEngine:
    """The engine process, configured; SelfplayError naming the engine when it cannot start."""
    popen = chess.engine.SimpleEngine.popen_uci if spec.protocol == "uci" \
        else chess.engine.SimpleEngine.popen_xboard
    try:
        engine = popen(list(spec.command), timeout=START_TIMEOUT_S)
    except (OSError, chess.engine.EngineError, TimeoutError) as exc:
        raise SelfplayError(f"engine {spec.name!r} failed to start: "
                            f"{type(exc).__name__}: {exc}") from None
    try:
        engine.configure(dict(spec.options))
    except (chess.engine.EngineError, TimeoutError) as exc:
        engine.close()
        raise SelfplayError(f"engine {spec.name!r}: bad options {dict(spec.options)}: "
                            f"{exc}") from None
    return engine
