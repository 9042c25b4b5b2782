"""One report type for every searcher (issue 34): alpha-beta, MCTS, PUCT and Stockfish under
stockfish-volatility all yield :class:`SearchReport` with :class:`PvLine` lines, so the UCI
front end and the time manager read one shape, not four look-alikes."""
from __future__ import annotations

import chess
import chess.engine

from engines.alphabeta import AlphaBeta, SearchConfig
from engines.mcts import MctsConfig, MonteCarlo
from engines.puct.network import Architecture, random_network
from engines.puct.search import NetEvaluator, Puct
from engines.search_report import PvLine, SearchReport
from engines.stockfish_volatility.program import completed_iteration
from engines.uci import info_lines

#: Back-rank mate in one (Rd8#) with other moves to rank below it.
MATE_IN_ONE = chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")
TINY_NET = Architecture(blocks=1, channels=8, value_hidden=16)


def check_report(report: object, lines: int) -> SearchReport:
    """The report's type and its MultiPV lines: distinct legal root moves, the first one's
    score and pv are the report's."""
    assert type(report) is SearchReport
    assert len(report.lines) == lines and all(type(line) is PvLine for line in report.lines)
    assert len({line.pv[0] for line in report.lines}) == lines
    assert all(MATE_IN_ONE.is_legal(line.pv[0]) for line in report.lines)
    first = report.lines[0]
    assert (first.score_cp, first.score_mate, first.pv) == (report.score_cp, report.score_mate,
                                                            report.pv)
    text = info_lines(report)
    assert [line.split(" multipv ")[1].split()[0] for line in text] == ["1", "2"]
    return report


def test_alpha_beta_reports_depths_with_exact_lines() -> None:
    reports = list(AlphaBeta(SearchConfig.tiny()).iterate(MATE_IN_ONE, max_depth=3, multipv=2))
    assert [r.depth for r in reports] == [1, 2, 3]
    last = check_report(reports[-1], 2)
    assert last.pv[0].uci() == "d1d8" and last.score_mate == 1
    assert all(line.visits == 0 and line.win_rate is None for line in last.lines)


def test_mcts_reports_visits_win_rates_and_its_counters() -> None:
    engine = MonteCarlo(MctsConfig(solver=True, seed=1))
    last = check_report(list(engine.iterate(MATE_IN_ONE, max_nodes=2000, multipv=2))[-1], 2)
    assert last.pv[0].uci() == "d1d8" and last.score_mate == 1
    assert 0 < last.nodes <= 2000 and last.playouts > 0 and last.tree_nodes > 0   # solver: settles early
    assert sum(line.visits for line in last.lines) <= last.nodes
    assert all(line.win_rate is not None and 0.0 <= line.win_rate <= 1.0 for line in last.lines)


def test_puct_reports_visits_and_network_evaluations() -> None:
    search = Puct(NetEvaluator(random_network(TINY_NET)), simulations=200)
    last = check_report(list(search.iterate(MATE_IN_ONE, multipv=2))[-1], 2)
    assert last.pv[0].uci() == "d1d8" and last.score_mate == 1
    assert last.evaluations > 0 and last.lines[0].visits >= last.lines[1].visits
    assert all(line.win_rate is not None and 0.0 <= line.win_rate <= 1.0 for line in last.lines)


def test_stockfish_volatility_reads_a_finished_iteration_and_skips_bounds() -> None:
    """A python-chess ``info`` of a completed Stockfish iteration becomes a report; a bound
    or a second MultiPV line does not."""
    move = chess.Move.from_uci("d1d8")
    info = {"depth": 5, "seldepth": 7, "nodes": 900, "pv": [move],
            "score": chess.engine.PovScore(chess.engine.Mate(1), chess.WHITE)}
    report = completed_iteration(info, started=0.0)
    assert type(report) is SearchReport
    assert (report.depth, report.seldepth, report.score_cp, report.score_mate, report.nodes,
            report.pv) == (5, 7, None, 1, 900, [move])
    assert completed_iteration({**info, "lowerbound": True}, started=0.0) is None
    assert completed_iteration({**info, "multipv": 2}, started=0.0) is None
