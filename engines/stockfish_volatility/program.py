"""``chesslab engine stockfish-volatility --volatility volatility@N`` (chesslab resolves the
version to ``--volatility-file``, as for ``alphabeta``): Stockfish with paper
003's early stop around it, as a UCI program.

The front end (:mod:`engines.uci`) drives Stockfish as its searcher: Stockfish searches
(``go infinite``, or up to the depth asked) while every completed iteration it reports
(an ``info depth D ... pv ...`` line without a bound) becomes a result; after each one the
volatility policy decides, and a "stable" answer sends Stockfish ``stop``. Under ``go depth
7`` that is algorithm 2 (the net asked after depth 6, with V6 - V5 and the depth 5 -> 6 best
move change); under a clock it is the clock variant, with chesslab's time manager in place of
Stockfish's own. No paper or tool offers this.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import chess
import chess.engine

from engines.registry import find_program
from engines.search_report import SearchReport
from engines.uci import AUTHOR, EngineSpec, Program, UciError, UciOption
from engines.volatility import options as volatility_options

log = logging.getLogger(__name__)
STOCKFISH = "stockfish"


@dataclass
class StockfishVolatilityOptions:
    """Stockfish whose deepening stops early when the volatility net says stable."""

    volatility: str = field(default="", metadata={
        "help": "volatility@N, @latest or @best (resolved to --volatility-file) or a net's "
                "file, random:RATE, or empty (plain Stockfish)"})
    volatility_file: str = field(default="", metadata={
        "help": "the volatility.npz file of the version --volatility names"})
    volatility_threshold: str = field(default="", metadata={
        "help": "stability threshold (default: the model's, chosen at training)"})
    stockfish: str = field(default=STOCKFISH, metadata={"help": "the Stockfish program"})
    hash: int = field(default=16, metadata={"help": "Stockfish's Hash in MB"})
    threads: int = field(default=1, metadata={"help": "Stockfish's Threads"})

    def __post_init__(self) -> None:
        volatility_options.check_volatility(self.volatility, self.volatility_file)
        if not 1 <= self.hash <= 65536:
            raise ValueError(f"--hash must be 1..65536 MB, got {self.hash!r}")
        if not 1 <= self.threads <= 512:
            raise ValueError(f"--threads must be 1..512, got {self.threads!r}")


def completed_iteration(info: Mapping[str, Any], started: float) -> SearchReport | None:
    """The result an ``info`` line reports, or None when it is not a finished iteration."""
    if "pv" not in info or "score" not in info or "depth" not in info \
            or info.get("lowerbound") or info.get("upperbound") or info.get("multipv", 1) != 1:
        return None
    score = info["score"].relative
    return SearchReport(depth=int(info["depth"]), seldepth=int(info.get("seldepth", 0)),
                        score_cp=score.score(), score_mate=score.mate(),
                        nodes=int(info.get("nodes", 0)),
                        time_s=time.monotonic() - started, pv=list(info["pv"]))


class StockfishSearcher:
    """The :class:`engines.uci.Searcher` over a Stockfish process."""

    def __init__(self, command: str, options: Mapping[str, int]) -> None:
        path = find_program(command) or command
        try:
            self.engine = chess.engine.SimpleEngine.popen_uci(path, timeout=30)
            self.engine.configure(dict(options))
        except (OSError, chess.engine.EngineError, TimeoutError) as exc:
            raise UciError(f"stockfish {command!r} did not start: {exc}") from None
        self.analysis: chess.engine.SimpleAnalysisResult | None = None
        self.lock = threading.Lock()

    def new_game(self) -> None:
        self.engine.protocol.send_line("ucinewgame")

    def stop(self) -> None:
        with self.lock:
            if self.analysis is not None:
                self.analysis.stop()

    def iterate(self, board: chess.Board, max_depth: int = 100, max_nodes: int | None = None,
                hard_deadline: float | None = None, multipv: int = 1,
                searchmoves: Sequence[chess.Move] = ()) -> Iterator[SearchReport]:
        started = time.monotonic()
        remaining = None if hard_deadline is None else max(hard_deadline - started, 0.001)
        limit = chess.engine.Limit(depth=max_depth if max_depth < 100 else None,
                                   nodes=max_nodes, time=remaining)
        with self.lock:
            self.analysis = self.engine.analysis(board, limit, root_moves=list(searchmoves)
                                                 or None, info=chess.engine.INFO_ALL)
        last_depth = 0
        try:
            for info in self.analysis:
                result = completed_iteration(info, started)
                if result is not None and result.depth > last_depth:
                    last_depth = result.depth
                    yield result
        finally:
            self.stop()
            self.analysis.wait()
            with self.lock:
                self.analysis = None

    def close(self) -> None:
        self.engine.quit()


def stockfish_spec(options: StockfishVolatilityOptions | None = None) -> EngineSpec:
    options = options or StockfishVolatilityOptions()
    uci_options = (
        UciOption("Hash", "spin", options.hash, 1, 65536),
        UciOption("Threads", "spin", options.threads, 1, 512),
        *volatility_options.uci_options(options.volatility, options.volatility_threshold,
                                        options.volatility_file),
    )

    def make_searcher(values: Mapping[str, Any]) -> StockfishSearcher:
        return StockfishSearcher(options.stockfish,
                                 {"Hash": values["Hash"], "Threads": values["Threads"]})

    return EngineSpec("chesslab stockfish-volatility", AUTHOR, uci_options, make_searcher,
                      flush=None, make_policy=volatility_options.make_policy,
                      identity_excludes=(volatility_options.FILE,))


PROGRAM = Program("stockfish-volatility", StockfishVolatilityOptions, stockfish_spec)
