"""Time manager: budget arithmetic of every UCI ``go`` form and the iteration policies."""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import chess
import pytest

from engines.timeman import (
    MAX_DEPTH,
    Budget,
    ClockPolicy,
    GoLimits,
    StableStopPolicy,
    TimeConfig,
    TimeManagementError,
    TimeManager,
    plan,
    predicted_next_s,
    score_value,
)

CONFIG = TimeConfig()  # 30 ms move overhead, 30 moves to go, hard 3x target, cap 40% of clock


@dataclass
class It:
    """A completed depth as a searcher reports it."""

    depth: int
    time_s: float
    score_cp: int | None = 0
    score_mate: int | None = None
    pv: list[chess.Move] = field(default_factory=lambda: [chess.Move.from_uci("e2e4")])


def test_depth_and_nodes_limits_pass_through_without_time() -> None:
    """``go depth 7 nodes 5000``: no deadlines, both limits kept (a depth-only go must not
    pick up a time limit and stop short of the asked depth)."""
    budget = plan(GoLimits(depth=7, nodes=5000), chess.WHITE, CONFIG)
    assert budget == Budget(max_depth=7, max_nodes=5000, soft_s=None, hard_s=None)
    assert plan(GoLimits(), chess.WHITE, CONFIG).max_depth == MAX_DEPTH


def test_movetime_keeps_the_overhead_back() -> None:
    """``go movetime 1000``: soft = hard = 970 ms, the 30 ms overhead stays for the GUI."""
    budget = plan(GoLimits(movetime=1000), chess.BLACK, CONFIG)
    assert budget.soft_s == pytest.approx(0.970)
    assert budget.hard_s == pytest.approx(0.970)
    assert plan(GoLimits(movetime=10), chess.BLACK, CONFIG).hard_s == pytest.approx(0.005)


def test_clock_with_increment_uses_the_movers_clock() -> None:
    """Sudden death 60 s + 1 s: target = (60000 - 30) / 30 + 1000 = 2999 ms, hard 3 targets.
    Black has 20 s + 0.5 s: (19970 / 30 + 500) = 1165.67 ms (guards mixing up the clocks)."""
    go = GoLimits(wtime=60_000, btime=20_000, winc=1_000, binc=500)
    white, black = plan(go, chess.WHITE, CONFIG), plan(go, chess.BLACK, CONFIG)
    assert white.soft_s == pytest.approx(2.999)
    assert white.hard_s == pytest.approx(8.997)
    assert black.soft_s == pytest.approx(1.1656667, abs=1e-6)
    assert black.hard_s == pytest.approx(3.497, abs=1e-6)


def test_small_clocks_in_numbers() -> None:
    """What the UCI tests once bounded by wall clock, as budgets: 2 s each with no increment
    gives target (2000 - 30) / 30 = 65.7 ms and hard 3 targets = 197 ms (well inside 40 % of
    the clock); a 20 ms clock, less than the overhead, gets the 5 ms minimum, soft and hard."""
    two = plan(GoLimits(wtime=2000, btime=2000), chess.WHITE, CONFIG)
    assert two.soft_s == pytest.approx(1.970 / 30)
    assert two.hard_s == pytest.approx(3 * 1.970 / 30)
    tiny = plan(GoLimits(wtime=20, btime=20), chess.BLACK, CONFIG)
    assert (tiny.soft_s, tiny.hard_s) == (pytest.approx(0.005), pytest.approx(0.005))


def test_searchmoves_do_not_change_the_budget() -> None:
    assert plan(GoLimits(movetime=1000, searchmoves=("e2e4",)), chess.WHITE, CONFIG) == \
        plan(GoLimits(movetime=1000), chess.WHITE, CONFIG)


def test_movestogo_divides_the_clock_by_the_moves_left() -> None:
    """``movestogo 10`` with 10 s: 997 ms target, hard 2991 ms (below the 40 % cap)."""
    budget = plan(GoLimits(wtime=10_000, btime=10_000, movestogo=10), chess.WHITE, CONFIG)
    assert budget.soft_s == pytest.approx(0.997)
    assert budget.hard_s == pytest.approx(2.991)


def test_last_move_before_the_control_may_use_most_but_not_all_of_the_clock() -> None:
    """``movestogo 1``: 80 % of what is left after the overhead, never the whole clock."""
    budget = plan(GoLimits(wtime=5_000, btime=5_000, movestogo=1), chess.WHITE, CONFIG)
    assert budget.hard_s == pytest.approx(0.8 * 4.970)
    assert budget.soft_s == pytest.approx(0.8 * 4.970)


def test_increment_never_buys_time_the_clock_does_not_have() -> None:
    """100 ms left + 5 s increment: the increment arrives after the move, so the hard limit is
    40 % of the 70 ms left, not 5 s (an engine that plans on it flags)."""
    budget = plan(GoLimits(wtime=100, btime=100, winc=5_000, binc=5_000), chess.WHITE, CONFIG)
    assert budget.hard_s == pytest.approx(0.028)
    assert budget.soft_s <= budget.hard_s


def test_empty_clock_still_gets_the_minimum_think_time() -> None:
    """A clock at 0 (or below the overhead): 5 ms, enough for depth 1, no negative times."""
    for clock in (0, 10, 30):
        budget = plan(GoLimits(wtime=clock, btime=clock), chess.WHITE, CONFIG)
        assert budget.hard_s == pytest.approx(0.005)
        assert budget.soft_s == pytest.approx(0.005)


def test_only_the_opponents_clock_given() -> None:
    """``go btime 6000`` with White to move: think as if White had the same clock."""
    budget = plan(GoLimits(btime=6_000), chess.WHITE, CONFIG)
    assert budget.soft_s == pytest.approx((6_000 - 30) / 30 / 1000)


def test_tightest_limit_wins_and_infinite_drops_times() -> None:
    """``movetime 200`` on a 60 s clock: the movetime (170 ms) binds; ``infinite`` keeps no
    time but keeps depth (``go infinite depth 5`` still waits for stop)."""
    both = plan(GoLimits(movetime=200, wtime=60_000, btime=60_000), chess.WHITE, CONFIG)
    assert both.hard_s == pytest.approx(0.170)
    endless = plan(GoLimits(depth=5, wtime=1_000, btime=1_000, infinite=True), chess.WHITE, CONFIG)
    assert (endless.soft_s, endless.hard_s, endless.infinite, endless.max_depth) == \
        (None, None, True, 5)


@pytest.mark.parametrize("clock,increment,moves", list(itertools.product(
    (0, 15, 40, 100, 1_000, 30_000, 600_000), (0, 10, 100, 2_000), (None, 1, 2, 5, 40))))
def test_hard_limit_never_exceeds_the_clock(clock: int, increment: int, moves: int | None) -> None:
    """For every clock, increment and movestogo: hard <= what is left after the overhead (or
    the 5 ms floor), and soft <= hard (a soft limit past the hard one is a dead letter)."""
    budget = plan(GoLimits(wtime=clock, btime=clock, winc=increment, binc=increment,
                           movestogo=moves), chess.WHITE, CONFIG)
    assert budget.hard_s is not None and budget.soft_s is not None
    assert budget.hard_s * 1000 <= max(clock - CONFIG.move_overhead_ms, CONFIG.min_think_ms) + 1e-9
    assert budget.soft_s <= budget.hard_s + 1e-12


#: Real lag per move in the simulated game: a third of the overhead the manager keeps back.
LAG_MS = 10


@pytest.mark.parametrize("start_ms,increment_ms", [(100, 20), (1_000, 20), (300, 50),
                                                    (10_000, 100), (60_000, 1_000)])
def test_a_whole_game_at_the_hard_limit_never_flags(start_ms: int, increment_ms: int) -> None:
    """Spend the full hard limit plus 10 ms of lag on each of 200 moves: the clock must never
    run out (the "never lose on time" requirement, tiny clocks included), as long as the
    increment covers the lag and the 5 ms minimum think."""
    clock = float(start_ms)
    for move in range(200):
        budget = plan(GoLimits(wtime=int(clock), btime=int(clock), winc=increment_ms,
                               binc=increment_ms), chess.WHITE, CONFIG)
        assert budget.hard_s is not None
        clock -= budget.hard_s * 1000 + LAG_MS
        assert clock > 0, f"flagged on move {move + 1}"
        clock += increment_ms


@pytest.mark.parametrize("limits,bad", [
    (dict(depth=0), "0"), (dict(nodes=-5), "-5"), (dict(movetime=-1), "-1"),
    (dict(movestogo=0), "0"), (dict(winc=-10), "-10"), (dict(mate=0), "0")])
def test_bad_go_limits_are_refused_with_the_value(limits: dict[str, int], bad: str) -> None:
    with pytest.raises(TimeManagementError, match=bad):
        GoLimits(**limits)


@pytest.mark.parametrize("fields", [dict(move_overhead_ms=-1), dict(moves_to_go=0),
                                    dict(hard_factor=0.5), dict(hard_fraction=1.5),
                                    dict(last_move_fraction=0.0), dict(min_think_ms=0)])
def test_bad_time_config_is_refused(fields: dict[str, float]) -> None:
    with pytest.raises(TimeManagementError):
        TimeConfig(**fields)


def test_prediction_uses_the_growth_of_the_last_iterations() -> None:
    """Iterations ended at 0.1 s, 0.3 s, 0.9 s: spans 0.1, 0.2, 0.6 -> growth 3, next 1.8 s.
    Growth is clamped to [1.5, 6] so one lucky TT hit cannot predict a free iteration."""
    assert predicted_next_s([It(1, 0.1), It(2, 0.3), It(3, 0.9)]) == pytest.approx(1.8)
    assert predicted_next_s([It(1, 0.1), It(2, 0.11)]) == pytest.approx(0.01 * 1.5)
    assert predicted_next_s([It(1, 0.1), It(2, 1.1)]) == pytest.approx(1.0 * 6.0)


BOARD = chess.Board()
CLOCK = Budget(soft_s=1.0, hard_s=3.0)


def test_clock_policy_stops_at_soft_limit_or_when_next_depth_cannot_finish() -> None:
    policy = ClockPolicy()
    done = [It(1, 0.05), It(2, 0.15)]  # next predicted 0.1 * 2 = 0.2 s
    assert policy.should_continue(BOARD, done, CLOCK, elapsed_s=0.15)
    assert not policy.should_continue(BOARD, done, CLOCK, elapsed_s=1.01)
    slow = [It(1, 0.2), It(2, 0.9)]  # next predicted 0.7 * 3.5 = 2.45 s: 0.9 + 2.45 > 3
    assert not policy.should_continue(BOARD, slow, CLOCK, elapsed_s=0.9)
    assert policy.should_continue(BOARD, slow, Budget(max_depth=9), elapsed_s=50.0)


def test_clock_policy_searches_longer_when_the_best_move_or_score_moves() -> None:
    """Past the soft limit (1 s) but before twice it: stop if the last two iterations agree,
    go on if the best move changed or the score fell by 30 cp or more (still bounded by the
    hard limit through the prediction)."""
    policy = ClockPolicy()
    d4 = chess.Move.from_uci("d2d4")
    steady = [It(5, 0.9, 20), It(6, 1.2, 25)]
    new_move = [It(5, 0.9, 20), It(6, 1.2, 25, pv=[d4])]
    falling = [It(5, 0.9, 20), It(6, 1.2, -10)]
    slight = [It(5, 0.9, 20), It(6, 1.2, -9)]
    budget = Budget(soft_s=1.0, hard_s=10.0)
    assert not policy.should_continue(BOARD, steady, budget, 1.2)
    assert policy.should_continue(BOARD, new_move, budget, 1.2)
    assert policy.should_continue(BOARD, falling, budget, 1.2)
    assert not policy.should_continue(BOARD, slight, budget, 1.2)
    assert not policy.should_continue(BOARD, new_move, budget, 2.0)
    assert not policy.should_continue(BOARD, new_move, Budget(soft_s=1.0, hard_s=1.5), 1.2)


def test_movetime_is_used_to_the_end() -> None:
    """``go movetime``: the next iteration is started even when it is predicted not to end
    (time not used on a movetime is lost anyway); only the deadline stops deepening."""
    budget = plan(GoLimits(movetime=1000), chess.WHITE, CONFIG)
    slow = [It(1, 0.2), It(2, 0.9)]
    assert ClockPolicy().should_continue(BOARD, slow, budget, 0.9)
    assert not ClockPolicy().should_continue(BOARD, slow, budget, 0.97)


def test_clock_policy_stops_on_a_found_mate_and_on_a_forced_move() -> None:
    """On a clock, a mate in 2 found at depth 8 (>= 2*2 + 4): more depth cannot improve it;
    ``go depth 20`` still gets its 20 plies. One legal move on a clock: play it at once."""
    policy = ClockPolicy()
    mate = [It(8, 0.01, score_cp=None, score_mate=2)]
    assert not policy.should_continue(BOARD, mate, CLOCK, 0.01)
    assert policy.should_continue(BOARD, [It(5, 0.01, None, 2)], CLOCK, 0.01)
    assert policy.should_continue(BOARD, mate, Budget(max_depth=20), 0.01)
    forced = chess.Board("k7/8/8/8/8/8/1q6/K7 w - - 0 1")  # Kxb2 is the only move
    assert forced.legal_moves.count() == 1
    assert not policy.should_continue(forced, [It(1, 0.001)], CLOCK, 0.001)
    assert ClockPolicy().should_continue(forced, [It(1, 0.001)], Budget(max_depth=5), 0.001)


def test_go_mate_limits_depth_and_stops_on_a_short_enough_mate() -> None:
    """``go mate 2``: depth at most 5 plies; a mate in 2 (or 1) for us ends the search, a
    mate against us or a longer one does not."""
    budget = plan(GoLimits(mate=2), chess.WHITE, CONFIG)
    assert (budget.max_depth, budget.mate) == (5, 2)
    policy = ClockPolicy()
    assert not policy.should_continue(BOARD, [It(3, 0.01, None, 2)], budget, 0.01)
    assert policy.should_continue(BOARD, [It(3, 0.01, None, -2)], budget, 0.01)
    assert policy.should_continue(BOARD, [It(3, 0.01, 250)], budget, 0.01)


def test_infinite_search_continues_regardless() -> None:
    policy = ClockPolicy()
    assert policy.should_continue(BOARD, [It(30, 1e6, None, 1)], Budget(infinite=True), 1e6)


def test_stable_stop_policy_is_paper_003_algorithm_2() -> None:
    """Algorithm 2: only after depth max-1 is the predictor asked, with delta_value = V(d-1) -
    V(d-2), whether the first PV move changed and V(d-1); above the threshold (0.76) stop one
    ply early, otherwise search to the max depth."""
    calls: list[tuple[int, bool, int]] = []

    def stability(board: chess.Board, delta: int, pv_changed: bool, value: int) -> float:
        calls.append((delta, pv_changed, value))
        return 0.9 if abs(delta) < 18 else 0.1

    budget = Budget(max_depth=7)
    policy = StableStopPolicy(stability, threshold=0.76)
    d4 = It(4, 0.01, 40)
    d5 = It(5, 0.02, 50, pv=[chess.Move.from_uci("d2d4")])
    assert policy.should_continue(BOARD, [d4, d5], budget, 0.02)
    assert calls == []  # depth 5 is not max_depth - 1
    d6_stable = It(6, 0.03, 55, pv=[chess.Move.from_uci("d2d4")])
    assert not policy.should_continue(BOARD, [d4, d5, d6_stable], budget, 0.03)
    assert calls == [(5, False, 55)]
    d6_volatile = It(6, 0.03, 10)
    assert policy.should_continue(BOARD, [d4, d5, d6_volatile], budget, 0.03)
    assert calls[-1] == (-40, True, 10)


def test_stable_stop_policy_defers_to_the_clock_first() -> None:
    never_stable = StableStopPolicy(lambda board, delta, changed, value: 0.0)
    assert not never_stable.should_continue(BOARD, [It(1, 0.5), It(2, 2.0)], CLOCK, 2.0)
    with pytest.raises(TimeManagementError, match="1.5"):
        StableStopPolicy(lambda board, delta, changed, value: 0.0, threshold=1.5)


def test_mate_scores_compare_above_any_centipawn_score() -> None:
    assert score_value(It(3, 0.0, None, 1)) > score_value(It(3, 0.0, None, 3)) > 5000
    assert score_value(It(3, 0.0, None, -2)) < -5000
    assert score_value(It(3, 0.0, 123)) == 123


def test_time_manager_bundles_a_config_and_a_policy() -> None:
    manager = TimeManager(TimeConfig.tiny(), ClockPolicy())
    assert manager.plan(GoLimits(movetime=100), chess.WHITE).hard_s == pytest.approx(0.090)
    assert not manager.should_continue(BOARD, [It(1, 0.2)], CLOCK, 1.5)
