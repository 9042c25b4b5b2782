"""Alpha-beta engine: iterative deepening over the compiled PVS search (engines.alphabeta.search).

Written sunfish style: :meth:`AlphaBeta.iterate` is a generator of one
:class:`~engines.search_report.SearchReport` per completed depth, so the caller (UCI front end, tournament, tests) owns time control.

>>> import chess
>>> engine = AlphaBeta(SearchConfig.tiny())
>>> board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")
>>> result = list(engine.iterate(board, max_depth=3))[-1]
>>> result.pv[0].uci(), result.score_mate
('d1d8', 1)
"""
from __future__ import annotations

import logging
import math
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import chess

from engines.mate import split_score
from engines.search_report import PvLine, SearchReport

log = logging.getLogger(__name__)

EVALS = ("hce", "hce-simple", "nnue", "nnue-hybrid")
#: The evaluations that play with a network.
NNUE_EVALS = ("nnue", "nnue-hybrid")
LMR_BUILTINS = ("default", "none")
# Added to the network's score for the side to move by default (Stockfish 12 adds Tempo = 28
# to its NNUE's: nnue_tempo=28). 0 measured better at 10+0.1 against the HCE with both nets,
# on the same 120 openings: nnue@7 -130.3 against -183.2 with 28, nnue@8 -34.9 against -76.5.
NNUE_TEMPO = 0
MAX_TEMPO = 200

# reduction(depth, move_number, state) -> plies; state holds pv, improving, ply, alpha and
# static_eval of the node.
Reduction = Callable[[int, int, dict[str, Any]], int]


class SearchConfigError(ValueError):
    """A SearchConfig field out of range; the message names the field and value."""


@dataclass
class SearchConfig:
    """How the alpha-beta engine searches.

    eval: static evaluation, "hce" (tapered PeSTO-style), "hce-simple" (paper 002's
        Simplified Evaluation Function with material-scaled piece-square values) or "nnue"
        (a HalfKP network, engines.nnue, with incremental accumulators; the search adds
        Stockfish 12's tempo bonus, 28 cp for the side to move, to the network's score), or
        "nnue-hybrid" (Stockfish 12's hybrid: the HCE's score where it is over 400 cp either
        way, the network's elsewhere).
    nnue_path: the ``chesslab NNUE v1`` .npz file that eval "nnue" ("nnue-hybrid") plays with.
    nnue_tempo: centipawns added to the network's score for the side to move (0 by default:
        the net's score as it is; Stockfish 12 adds 28).
    lmr: late-move reductions, "default" (paper 003: floor(log d * log m / 1.95)), "none",
        or a Python callable reduction(depth, move_number, state) -> plies.
    hash_mb: transposition table size in MiB (rounded down to a power-of-two entry count).
    search_log_rate: fraction of LMR decisions recorded for the ``search_log`` table
        (paper 003 appendix A.2); 0 records nothing.
    search_log: the file :meth:`AlphaBeta.flush_search_log` appends the recorded decisions
        to (:mod:`engines.alphabeta.searchlog`); None keeps them until
        :meth:`AlphaBeta.search_log_rows` takes them.
    """

    eval: str = "hce"
    lmr: str | Reduction = "default"
    hash_mb: int = 16
    search_log_rate: float = 0.0
    nnue_path: str | None = None
    nnue_tempo: int = NNUE_TEMPO
    search_log: str | None = None

    def __post_init__(self) -> None:
        if self.eval not in EVALS:
            raise SearchConfigError(f"eval must be one of {EVALS}, got {self.eval!r}")
        if (self.eval in NNUE_EVALS) != bool(self.nnue_path):
            raise SearchConfigError(
                f"nnue_path is needed with eval {' or '.join(map(repr, NNUE_EVALS))} and only "
                f"then, got eval {self.eval!r} "
                f"and nnue_path {self.nnue_path!r}")
        if not callable(self.lmr) and self.lmr not in LMR_BUILTINS:
            raise SearchConfigError(
                f"lmr must be one of {LMR_BUILTINS} or a callable, got {self.lmr!r}")
        if not 1 <= self.hash_mb <= 65536:
            raise SearchConfigError(f"hash_mb must be in 1..65536, got {self.hash_mb!r}")
        if not 0.0 <= self.search_log_rate <= 1.0:
            raise SearchConfigError(
                f"search_log_rate must be in [0, 1], got {self.search_log_rate!r}")
        if not 0 <= self.nnue_tempo <= MAX_TEMPO:
            raise SearchConfigError(
                f"nnue_tempo must be in 0..{MAX_TEMPO} cp, got {self.nnue_tempo!r}")

    @classmethod
    def tiny(cls) -> SearchConfig:
        """Small table, for tests."""
        return cls(hash_mb=1)


def default_reduction(depth: int, move_number: int, state: dict[str, Any] | None = None) -> int:
    """Paper 003's reduction, r = floor(log(d) * log(m) / 1.95) (the C search has a table)."""
    return math.floor(math.log(depth) * math.log(move_number) / 1.95)


class AlphaBeta:
    """The engine. One instance keeps its TT, killers and history between searches."""

    def __init__(self, config: SearchConfig | None = None) -> None:
        from engines.alphabeta.search import Searcher  # compiled: loaded on first engine

        self.config = config if config is not None else SearchConfig()
        network = None
        if self.config.nnue_path:
            from engines.nnue.network import Network  # loads numpy: only when needed

            network = Network.load(self.config.nnue_path)
        self._searcher = Searcher(self.config.eval, self.config.lmr, self.config.hash_mb,
                                  self.config.search_log_rate, network=network,
                                  tempo=self.config.nnue_tempo)
        self.run_id = uuid.uuid4().hex
        self._log_seq = 0      # row number of the next logged decision in this run

    def new_game(self) -> None:
        """Clear TT, killers and history."""
        self._searcher.clear()

    def stop(self) -> None:
        """Ask a running search to return as soon as possible (any thread)."""
        self._searcher.stop()

    def evaluate(self, board: chess.Board) -> int:
        """Static evaluation in centipawns for the side to move."""
        self._searcher.set_root(board)
        return int(self._searcher.static_eval())

    def iterate(self, board: chess.Board, max_depth: int = 100, max_nodes: int | None = None,
                hard_deadline: float | None = None, multipv: int = 1,
                searchmoves: Sequence[chess.Move] = ()) -> Iterator[SearchReport]:
        """Yield a SearchReport per completed depth 1..max_depth.

        Stops inside an iteration (and yields nothing more) on ``stop()``, ``max_nodes``
        searched, or ``time.monotonic() >= hard_deadline``; depth 1 always completes.
        Repetitions count against ``board.move_stack``. Only ``searchmoves`` are searched at
        the root when given; ``multipv`` > 1 finds that many best root moves per depth.
        """
        if max_depth < 1:
            raise ValueError(f"max_depth must be >= 1, got {max_depth}")
        if multipv < 1:
            raise ValueError(f"multipv must be >= 1, got {multipv}")
        for move in searchmoves:
            if not board.is_legal(move):
                raise ValueError(f"searchmoves: illegal move {move.uci()!r} in {board.fen()!r}")
        searcher = self._searcher
        searcher.set_root(board)
        searcher.reset_counters()
        moves = list(searchmoves) or list(board.legal_moves)
        start = time.monotonic()
        for depth in range(1, min(max_depth, 100) + 1):
            if depth > 1 and hard_deadline is not None and time.monotonic() >= hard_deadline:
                return         # the node-count clock check may not come in a small tree
            lines = self._root_lines(depth, moves, bool(searchmoves), multipv, max_nodes,
                                     hard_deadline)
            if lines is None:
                return
            yield SearchReport(depth=depth, seldepth=searcher.seldepth,
                               score_cp=lines[0].score_cp, score_mate=lines[0].score_mate,
                               nodes=searcher.nodes, time_s=time.monotonic() - start,
                               pv=lines[0].pv, lines=lines)

    def _root_lines(self, depth: int, moves: list[chess.Move], restricted: bool, multipv: int,
                    max_nodes: int | None, hard_deadline: float | None) -> list[PvLine] | None:
        """The best ``multipv`` root moves at ``depth``, best first; None when aborted.

        Line k is a full-window search of the root moves left after the first k - 1 lines'
        moves are taken out, so every line's score is exact. With one line and no
        ``searchmoves`` the root is not filtered at all (the bench node count stays put).
        """
        lines: list[tuple[int, PvLine]] = []     # (score, line), scores as engines.mate's
        found: set[chess.Move] = set()
        while len(lines) < max(1, min(multipv, len(moves))):
            left = [m for m in moves if m not in found]
            self._searcher.set_root_moves(left if restricted or found else None)
            done, score, pv = self._searcher.search_depth(
                depth, max_nodes or 0, hard_deadline or 0.0, depth > 1)
            if not done:
                return None
            lines.append((score, PvLine(*split_score(score), pv=pv)))
            if not pv:
                break          # no legal move: the one line is the mate or stalemate score
            found.add(pv[0])
        return [line for _, line in sorted(lines, key=lambda scored: -scored[0])]

    def best_move(self, board: chess.Board, depth: int) -> SearchReport:
        """The last result of a fixed-depth search."""
        results = list(self.iterate(board, max_depth=depth))
        return results[-1]

    def search_log_rows(self) -> list[dict[str, Any]]:
        """The LMR decisions sampled since the last call, as ``search_log`` rows (run id,
        order, evaluation, reduction and time added)."""
        rows = self._searcher.take_records()
        now = datetime.now(UTC)
        lmr = self.config.lmr if isinstance(self.config.lmr, str) else getattr(
            self.config.lmr, "__name__", "callable")
        for i, row in enumerate(rows, start=self._log_seq):
            row.update(run_id=self.run_id, seq=i, eval=self.config.eval, lmr=lmr,
                       logged_at=now)
        self._log_seq += len(rows)
        return rows

    def flush_search_log(self) -> int:
        """Append the sampled LMR decisions to the ``search_log`` file of the config;
        returns the rows written."""
        if self.config.search_log is None:
            raise SearchConfigError("flush_search_log: no search_log file in the config")
        from engines.alphabeta.searchlog import append_search_log

        written = append_search_log(self.config.search_log, self.search_log_rows())
        if written:
            log.info("search log: %d LMR decisions written to %s", written,
                     self.config.search_log)
        return written
