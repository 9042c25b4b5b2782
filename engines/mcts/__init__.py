"""The Monte-Carlo engine of paper 001 (Arenz, *Monte Carlo Chess*, 2012): UCT with random or
heavy playouts and every modification of the thesis as a switch of :class:`MctsConfig`.

The tree and playouts are compiled (:mod:`engines.mcts.tree`); :class:`MonteCarlo` is the
searcher the UCI front end drives. ``iterate`` yields a result after 1,000, 2,000, 4,000, ...
iterations (the front end's "depth" is the report number) and always after the last one.

Variants (``VARIANTS``, the thesis' names):

======================  ======================================================================
``mcc``                 plain UCT: uniform random playouts
``hp-see``              heavy playouts, epsilon-greedy on SEE, epsilon 0.4 (``MCC_HP_SEE,0.4``)
``hp-eval``             heavy playouts on the evaluation, epsilon 0.4 (``MCC_HP_EVAL,0.4``)
``decisive``            a mate in one is always played in playouts (``MCC_DecisiveMoves``)
``bias``                progressive bias, k_bias = 0.001 (``MCC_progressiveBias``)
``gtb``                 Gaviota tablebase cut-off in playouts, 3 pieces (``MCC_GTB_3pc``)
``solver``              the Monte-Carlo solver with mate distance
``combined``            all of them (``MCC_Combined``; 3-piece tables: no 4-piece ones here)
``combined-discard``    combined with draw-discarding playouts (the Réti demonstration)
======================  ======================================================================

>>> import chess
>>> engine = MonteCarlo(MctsConfig(solver=True, seed=1))
>>> result = list(engine.iterate(chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"),
...                              max_nodes=2000))[-1]
>>> result.pv[0].uci(), result.score_mate
('d1d8', 1)
"""
from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess

from engines.mate import mate_moves
from engines.search_report import PvLine, SearchReport

log = logging.getLogger(__name__)

HEAVY_PLAYOUTS = ("none", "see", "eval")
TIE_BREAKS = ("first", "random")
#: Where the Debian package ``gaviotatb`` puts its 3-piece tables (cp4 compression).
GAVIOTA_DIR = Path("/usr/share/gaviotatb/gtb4")
#: Iterations before the first report; each later report doubles the count.
FIRST_REPORT = 1000


class MctsConfigError(ValueError):
    """A switch of the Monte-Carlo engine out of range; the message names it and its value."""


@dataclass(frozen=True)
class MctsConfig:
    """Every switch of the engine. The defaults are plain UCT (``MCC``) as the thesis has it.

    hp: heavy playouts, "none" (uniform random moves), "see" (best static exchange) or
        "eval" (best evaluation after the move, PeSTO, no quiescence).
    epsilon: heavy playouts play a uniform random move with this probability, else the best.
    tie_break: among equally good greedy moves take a "random" one (the default) or the
        "first" in generator order (the thesis' "epsilon 0 is completely deterministic";
        but this generator lists king moves first, unlike Stockfish's, so "first" turns
        most quiet playout moves into king moves: the SEE sweep with "first" rated every
        epsilon below MCC).
    decisive: decisive moves: in playouts, a move that mates at once is always played.
    tb_pieces: tablebase cut-off: a playout ends with the tablebase result as soon as this
        many pieces (kings included) or fewer are left; 0 is off. Only 3 is available here
        (the Debian Gaviota tables); the thesis' 4-piece tables are not.
    tb_root_min_pieces: ignore the tablebase when the root has fewer pieces (the thesis'
        Table 5 used 8, to measure playout accuracy only); 0 always probes.
    k_bias: progressive bias weight of formula 4 on the evaluation in centipawns from the
        chooser's view (the thesis: 0.001); 0 is off.
    solver: the Monte-Carlo solver with mate distance (algorithm 4.1, explicit proven flags).
    c: exploration constant of formula 1 (the thesis' UCB1 has no multiplier: 1).
    repetition: a position seen for the 2nd time is a draw (2, Stockfish 2.x's is_draw,
        which MCC presumably used) or the 3rd time (3); in the tree and in playouts.
    fifty: the fifty-move rule ends playouts and tree lines as a draw.
    max_playout_plies: a playout still going after this many plies is scored a draw (the
        thesis has no cap; the fifty-move rule and repetitions make it rare).
    draw_retries: draw-discarding playouts: a drawn playout is repeated, up to this many
        playouts in all, and only then scored 0.5 (the thesis' Réti demo: 6); 1 is off.
    seed: seed of the playout random numbers; 0 takes one from the clock.
    hash_mb: memory for the tree, MB (UCI ``Hash``); a search stops when the tree is full.
        An expanded node holds a slot for each legal move, so a tree needs about the
        branching factor times its iterations in nodes (56 bytes each): 256 MB lasts some
        300,000 iterations of a middlegame, far more than a tournament move; long solver
        runs need more.
    """

    hp: str = "none"
    epsilon: float = 1.0
    tie_break: str = "random"
    decisive: bool = False
    tb_pieces: int = 0
    tb_root_min_pieces: int = 0
    k_bias: float = 0.0
    solver: bool = False
    c: float = 1.0
    repetition: int = 2
    fifty: bool = True
    max_playout_plies: int = 2000
    draw_retries: int = 1
    seed: int = 0
    hash_mb: int = 256

    def __post_init__(self) -> None:
        if self.hp not in HEAVY_PLAYOUTS:
            raise MctsConfigError(f"hp must be one of {HEAVY_PLAYOUTS}, got {self.hp!r}")
        if self.tie_break not in TIE_BREAKS:
            raise MctsConfigError(
                f"tie_break must be one of {TIE_BREAKS}, got {self.tie_break!r}")
        _check_range("epsilon", self.epsilon, 0.0, 1.0)
        _check_range("tb_pieces", self.tb_pieces, 0, 3)
        _check_range("tb_root_min_pieces", self.tb_root_min_pieces, 0, 32)
        _check_range("k_bias", self.k_bias, 0.0, 1.0)
        _check_range("c", self.c, 0.0, 100.0)
        _check_range("repetition", self.repetition, 2, 3)
        _check_range("max_playout_plies", self.max_playout_plies, 1, 10_000)
        _check_range("draw_retries", self.draw_retries, 1, 100)
        _check_range("seed", self.seed, 0, 2**63 - 1)
        _check_range("hash_mb", self.hash_mb, 1, 1 << 20)
        if self.tb_pieces == 1 or self.tb_pieces == 2:
            raise MctsConfigError(f"tb_pieces must be 0 (off) or 3, got {self.tb_pieces!r}")

    @classmethod
    def variant(cls, name: str, **overrides: Any) -> MctsConfig:
        """A named variant of the thesis, with any switch overridden."""
        if name not in VARIANTS:
            raise MctsConfigError(
                f"unknown variant {name!r}: expected one of {', '.join(VARIANTS)}")
        return dataclasses.replace(VARIANTS[name], **overrides)

    @classmethod
    def tiny(cls) -> MctsConfig:
        """The preset used by tests: plain UCT with a fixed seed."""
        return cls(seed=1)


def _check_range(name: str, value: float, low: float, high: float) -> None:
    if not low <= value <= high:
        raise MctsConfigError(f"{name} must be in [{low}, {high}], got {value!r}")


_COMBINED = MctsConfig(hp="see", epsilon=0.4, decisive=True, tb_pieces=3, k_bias=0.001,
                       solver=True)
VARIANTS: dict[str, MctsConfig] = {
    "mcc": MctsConfig(),
    "hp-see": MctsConfig(hp="see", epsilon=0.4),
    "hp-eval": MctsConfig(hp="eval", epsilon=0.4),
    "decisive": MctsConfig(decisive=True),
    "bias": MctsConfig(k_bias=0.001),
    "gtb": MctsConfig(tb_pieces=3),
    "solver": MctsConfig(solver=True),
    "combined": _COMBINED,
    "combined-discard": dataclasses.replace(_COMBINED, draw_retries=6),
}


# --------------------------------------------------------------------------------------------
# Tablebase
# --------------------------------------------------------------------------------------------

def gaviota_prober(folder: Path = GAVIOTA_DIR) -> Callable[[str], int | None]:
    """``probe(fen)``: win 1, draw 0, loss -1 for the side to move from the Gaviota tables in
    ``folder`` (python-chess' pure-Python prober), None where the tables have no answer.
    FileNotFoundError naming the folder when it holds no tables."""
    import chess.gaviota

    if not any(folder.glob("*.gtb.cp*")):
        raise FileNotFoundError(f"no Gaviota tables (*.gtb.cp*) in {folder}: install the "
                                "Debian package gaviotatb or pass another folder")
    tables = chess.gaviota.open_tablebase(str(folder))

    def probe(fen: str) -> int | None:
        wdl = tables.get_wdl(chess.Board(fen))
        return None if wdl is None else (wdl > 0) - (wdl < 0)

    return probe


# --------------------------------------------------------------------------------------------
# The searcher
# --------------------------------------------------------------------------------------------

class MonteCarlo:
    """The engine: a compiled tree (:class:`engines.mcts.tree.Tree`) built per search."""

    def __init__(self, config: MctsConfig | None = None,
                 probe: Callable[[str], int | None] | None = None) -> None:
        from engines.mcts.tree import Tree

        self.config = config if config is not None else MctsConfig()
        if self.config.seed == 0:
            self.config = dataclasses.replace(self.config, seed=time.time_ns() % 2**62 + 1)
        if probe is None and self.config.tb_pieces:
            probe = gaviota_prober()
        self.tree = Tree(self.config, probe)

    def new_game(self) -> None:
        """Nothing is kept between searches (a new tree per move, as in the thesis)."""

    def stop(self) -> None:
        self.tree.stop()

    def iterate(self, board: chess.Board, max_depth: int = 100, max_nodes: int | None = None,
                hard_deadline: float | None = None, multipv: int = 1,
                searchmoves: Sequence[chess.Move] = ()) -> Iterator[SearchReport]:
        """Search ``board``, yielding a report after 1000 * 2**(k-1) iterations (k = 1..
        ``max_depth``) and a last one when the search ends: at ``max_nodes`` iterations,
        the deadline (time.monotonic()), ``stop()``, a settled root or a full tree."""
        for move in searchmoves:
            if not board.is_legal(move):
                raise ValueError(f"searchmoves: illegal move {move.uci()!r} in {board.fen()!r}")
        if not any(board.legal_moves):
            return
        tree = self.tree
        tree.set_root(board, list(searchmoves))
        start = time.monotonic()
        report, target = 0, FIRST_REPORT
        while report < max_depth:
            wanted = target if max_nodes is None else min(target, max_nodes)
            done = tree.run(wanted - tree.iterations, hard_deadline or 0.0)
            report += 1
            yield self._result(report, start, multipv)
            if tree.iterations < wanted or done == 0 or tree.iterations == max_nodes:
                return
            target *= 2

    def _result(self, report: int, start: float, multipv: int) -> SearchReport:
        tree = self.tree
        lines = [self._line(raw) for raw in tree.lines(max(1, multipv))]
        best = lines[0]
        info = tree.root_info()
        return SearchReport(depth=report, seldepth=tree.seldepth, score_cp=best.score_cp,
                            score_mate=best.score_mate, nodes=tree.iterations,
                            time_s=time.monotonic() - start, pv=best.pv, lines=lines,
                            playouts=tree.playouts, tree_nodes=info["nodes"])

    @staticmethod
    def _line(raw: dict[str, Any]) -> PvLine:
        from engines.mcts.tree import cp_from_win_rate

        mate = raw["mate_plies"]
        return PvLine(score_cp=None if mate is not None else cp_from_win_rate(raw["win_rate"]),
                      score_mate=None if mate is None else mate_moves(mate), pv=raw["pv"],
                      visits=raw["visits"], win_rate=raw["win_rate"])

    def search(self, board: chess.Board, iterations: int, multipv: int = 1) -> SearchReport:
        """The last report of a search of ``iterations`` iterations."""
        results = list(self.iterate(board, max_depth=64, max_nodes=iterations,
                                    multipv=multipv))
        if not results:
            raise ValueError(f"no legal move to search in {board.fen()!r}")
        return results[-1]


def iterations_per_second(config: MctsConfig, board: chess.Board, seconds: float) -> float:
    """Iterations per second of one search of ``seconds`` from ``board``."""
    engine = MonteCarlo(config)
    start = time.monotonic()
    result = list(engine.iterate(board, max_depth=64, hard_deadline=start + seconds))[-1]
    return result.nodes / max(time.monotonic() - start, 1e-9)


__all__ = ["FIRST_REPORT", "GAVIOTA_DIR", "HEAVY_PLAYOUTS", "MctsConfig", "MctsConfigError",
           "MonteCarlo", "TIE_BREAKS", "VARIANTS", "gaviota_prober",
           "iterations_per_second", "mate_moves"]
