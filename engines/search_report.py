"""What every searcher reports: one :class:`SearchReport` per completed depth (alpha-beta,
Stockfish under stockfish-volatility) or per report of a tree search (MCTS, PUCT), which the
UCI front end (:mod:`engines.uci`) turns into ``info`` lines and the time manager
(:mod:`engines.timeman`) reads between reports.

Scores are from the side to move's point of view: ``score_cp`` in centipawns, or
``score_mate`` in moves (negative when the side to move is getting mated), the other one
None. ``nodes`` and ``time_s`` count from the start of the search.

>>> e4 = chess.Move.from_uci("e2e4")
>>> report = SearchReport(depth=1, seldepth=1, score_cp=30, score_mate=None, nodes=20,
...                       time_s=0.01, pv=[e4], lines=[PvLine(30, None, [e4])])
>>> report.lines[0].pv == report.pv, report.playouts
(True, 0)
"""
from __future__ import annotations

from dataclasses import dataclass, field

import chess


@dataclass
class PvLine:
    """One root move of a MultiPV search: its score and principal variation (the first move
    is the root move). Tree searches add how often they searched the move and its expected
    score; an alpha-beta line leaves them at their defaults."""

    score_cp: int | None
    score_mate: int | None
    pv: list[chess.Move]
    visits: int = 0                   # tree searches: iterations or simulations through it
    win_rate: float | None = None     # tree searches: the side to move's expected score, 0..1


@dataclass
class SearchReport:
    """One report of a running search.

    ``depth`` is the completed depth of an iterative-deepening search, or the report's number
    (1, 2, ...) of a tree search, whose ``nodes`` are its iterations and ``seldepth`` its
    deepest line. ``lines`` are the MultiPV lines, best first; the report's own score and pv
    are the first line's. The counters below ``lines`` are those of the tree searches (0
    where a searcher has no such thing).
    """

    depth: int
    seldepth: int
    score_cp: int | None
    score_mate: int | None
    nodes: int
    time_s: float
    pv: list[chess.Move] = field(default_factory=list)
    lines: list[PvLine] = field(default_factory=list)
    playouts: int = 0        # MCTS: random games played (draw discarding replays some)
    tree_nodes: int = 0      # MCTS: nodes the tree holds
    evaluations: int = 0     # PUCT: positions the network has evaluated


__all__ = ["PvLine", "SearchReport"]
