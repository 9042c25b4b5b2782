#!/usr/bin/env python3
"""What the volatility clock variant can bank: its stop rate and the search time it saves.

The clock variant (``alphabeta:volatility=volatility@N`` under a clock) asks the net after
each completed depth from ``min_depth`` on, once ``min_soft_fraction`` of the move's soft time
is spent, and stops deepening when it says "stable". The time it saves is all it can gain:
the next moves get it. This measures that ceiling before anyone spends hours on a match.

Sample positions (plies 16-60 of the bundled games) are searched by the HCE engine for the
soft time the engine's own planner gives the first move of ``--tc`` (10+0.1: about 0.35 s).
At every completed depth the net is asked as the policy asks it (:meth:`VolatilityPolicy.
asks` and :meth:`VolatilityPolicy.stable`); for each threshold a move stops at the first
"stable" answer, and saves the rest of its soft time. Thresholds: the model's own and
``--thresholds``.

    .venv/bin/python benchmarks/clockstop.py volatility@1 --home HOME [--positions 120]
"""
from __future__ import annotations

import argparse
import io
import random
import time
from pathlib import Path

import chess
import chess.pgn
import zstandard

from engines.alphabeta import AlphaBeta, SearchConfig
from engines.search_report import SearchReport
from engines.timeman import Budget, GoLimits, first_move, plan, score_value
from engines.volatility.model import load_model
from engines.volatility.policy import VolatilityPolicy
from pipelines.tournament.config import TimeControl

GAMES = Path(__file__).resolve().parent.parent / "data" / "sample" / "games.pgn.zst"


def sample_boards(count: int, seed: int = 1) -> list[chess.Board]:
    """``count`` positions from plies 16-60 of the bundled games, about one in seven."""
    rng, boards = random.Random(seed), []
    with open(GAMES, "rb") as raw:
        text = io.TextIOWrapper(zstandard.ZstdDecompressor().stream_reader(raw),
                                encoding="utf-8")
        while len(boards) < count and (game := chess.pgn.read_game(text)) is not None:
            board = game.board()
            for ply, move in enumerate(game.mainline_moves()):
                board.push(move)
                if 16 <= ply <= 60 and rng.randrange(7) == 0 and not board.is_game_over():
                    boards.append(board.copy())
    return boards[:count]


def soft_budget(tc: str) -> Budget:
    """The planner's budget for the first move of a tournament time control (``10+0.1``)."""
    clock = TimeControl.parse(tc)
    ms, inc = round(clock.seconds * 1000), round(clock.increment * 1000)
    return plan(GoLimits(wtime=ms, btime=ms, winc=inc, binc=inc,
                         movestogo=clock.moves or None), chess.WHITE)


def answers(policy: VolatilityPolicy, engine: AlphaBeta, board: chess.Board,
            budget: Budget) -> list[tuple[float, float]]:
    """(elapsed s, probability of "stable") at every depth the policy would ask after."""
    assert budget.soft_s is not None
    engine.new_game()
    start = time.monotonic()
    completed: list[SearchReport] = []
    asked: list[tuple[float, float]] = []
    probability = policy.stability
    for result in engine.iterate(board, hard_deadline=start + budget.soft_s):
        completed.append(result)
        elapsed = time.monotonic() - start
        if policy.asks(completed, budget, elapsed):   # the inputs VolatilityPolicy.stable gives
            previous, last = completed[-2], completed[-1]
            asked.append((elapsed, probability(
                board, score_value(last) - score_value(previous),
                first_move(last) != first_move(previous), score_value(last))))
    return asked


def net_path(model: str, home: str) -> str:
    """The net's file: a model name through the registry's resolver, else the path given."""
    if "@" not in model:
        return model
    from pipelines.models.deploy import engine_options
    from warehouse import Lake

    return engine_options(Lake(home), model)["volatility_file"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="volatility@N (@latest, @best) or a net's file")
    parser.add_argument("--home", default="chesslab_home",
                        help="the warehouse whose registry resolves a model name")
    parser.add_argument("--positions", type=int, default=120)
    parser.add_argument("--tc", default="10+0.1", help="the clock, base+increment in seconds")
    parser.add_argument("--thresholds", default="0.5,0.6,0.7,0.8,0.9,0.95,0.99")
    args = parser.parse_args()
    model = load_model(net_path(args.model, args.home), args.model)
    policy = VolatilityPolicy(model.stability, model.threshold)
    budget = soft_budget(args.tc)
    assert budget.soft_s is not None
    engine = AlphaBeta(SearchConfig(eval="hce"))
    boards = sample_boards(args.positions)
    asked = [answers(policy, engine, board, budget) for board in boards]
    print(f"{args.model}: {len(boards)} positions, soft time {budget.soft_s:.3f} s at "
          f"{args.tc}, asked {sum(map(len, asked)) / len(boards):.1f} times a move "
          f"(from depth {policy.min_depth}, after {policy.min_soft_fraction:.0%} of it)")
    thresholds = sorted({*(float(t) for t in args.thresholds.split(",")), model.threshold})
    for threshold in thresholds:
        stops = [next((t for t, p in a if p > threshold), None) for a in asked]
        stopped = [t for t in stops if t is not None]
        saved = sum(1 - t / budget.soft_s for t in stopped) / len(boards)
        mark = "  (the model's)" if threshold == model.threshold else ""
        print(f"threshold {threshold:.4f}: stops {len(stopped) / len(boards):6.1%} of moves, "
              f"saves {saved:6.1%} of the soft time{mark}")


if __name__ == "__main__":
    main()
