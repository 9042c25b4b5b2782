"""benchmarks/clockstop.py: when the volatility clock variant is asked, and what it banks."""
from __future__ import annotations

import chess

from engines.alphabeta import AlphaBeta, SearchConfig
from engines.volatility.policy import RandomStability, VolatilityPolicy
from tests.benchmarks.scripts import load_script

clockstop = load_script("clockstop.py", "clockstop")


def test_sample_positions_are_from_the_bundled_games() -> None:
    boards = clockstop.sample_boards(30)
    assert len(boards) == 30 and len({b.fen() for b in boards}) == 30
    assert all(17 <= len(b.move_stack) <= 61 and not b.is_game_over() for b in boards)


def test_the_net_is_asked_as_the_policy_asks_it() -> None:
    """At 10+0.1 the first move's soft time is the planner's; a net that always says "stable"
    is asked after every completed depth from 5 on, and with ``min_soft_fraction`` only once
    that share of the soft time is spent, so the first answer is where the clock variant
    would stop."""
    budget = clockstop.soft_budget("10+0.1")
    assert budget.soft_s is not None and budget.hard_s is not None
    assert 0 < budget.soft_s < budget.hard_s < 10
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    engine = AlphaBeta(SearchConfig(hash_mb=4))
    always = VolatilityPolicy(RandomStability(1.0), threshold=0.5, min_soft_fraction=0.0)
    asked = clockstop.answers(always, engine, board, budget)
    assert asked and all(p == 1.0 for _, p in asked)
    assert [t for t, _ in asked] == sorted(t for t, _ in asked)
    late = VolatilityPolicy(RandomStability(1.0), threshold=0.5, min_soft_fraction=0.25)
    assert all(t >= 0.25 * budget.soft_s for t, _ in clockstop.answers(late, engine, board,
                                                                       budget))
