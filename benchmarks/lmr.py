"""Late-move-reduction costs, each against its baseline in the same run.

(a) ``formula``: the bench (24 positions, depth 8) with the default formula, with a learned
    formula as a compiled 64 x 64 table (how ``--lmr lmr@N`` runs) and with the same formula
    as a Python callback (``run_bench``'s callable path), interleaved ``--rounds`` times so
    machine load hits all alike: nodes/s and the ratios. The table and the callback search the
    same tree (same nodes).
(b) ``logging``: self-play moves at fixed nodes with the search log off and at paper 003's
    1/2048: nodes/s ratio (what ``chesslab lmr-data`` pays for logging).
(c) ``label``: decisions re-searched per second by ``chesslab lmr-data``'s labeller, and the
    re-search nodes per logged decision, on decisions logged here.

    .venv/bin/python benchmarks/lmr.py
    .venv/bin/python benchmarks/lmr.py --parts formula --rounds 5
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import chess

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engines.alphabeta import AlphaBeta, SearchConfig  # noqa: E402
from engines.alphabeta.bench import BENCH_FENS, BenchConfig, run_bench  # noqa: E402
from engines.alphabeta.formula import LmrFormula  # noqa: E402

#: Paper 003's Eq. 6.2 (Eq. 6.1 scaled by 0.40596), as the learned formula of part (a).
EQ_6_2 = LmrFormula.of({"logd*logm": 0.9738, "logd": 0.8635, "logm": -1.8857})


def nps(nodes: int, seconds: float) -> float:
    return nodes / seconds if seconds > 0 else 0.0


def part_formula(rounds: int, depth: int) -> None:
    bench = BenchConfig(depth=depth)

    def callback(d: int, m: int, state: dict[str, Any]) -> int:
        return EQ_6_2(d, m, state)

    runs: dict[str, list[tuple[int, float]]] = {"default": [], "table": [], "callback": []}
    for _ in range(rounds):
        for name, reduction in (("default", None), ("table", EQ_6_2), ("callback", callback)):
            result = run_bench(bench, reduction)
            runs[name].append((result.nodes, result.seconds))
    speed = {name: statistics.median(nps(n, s) for n, s in values)
             for name, values in runs.items()}
    print(f"(a) bench depth {depth}, {len(BENCH_FENS)} positions, median of {rounds} rounds")
    for name, values in runs.items():
        print(f"    {name:9s} nodes {values[0][0]:>9}  nodes/s {speed[name]:>10.0f}  "
              f"ratio to default {speed[name] / speed['default']:.3f}")
    assert runs["table"][0][0] == runs["callback"][0][0], "table and callback differ"


def play_moves(rate: float, nodes: int, plies: int) -> tuple[int, float]:
    engine = AlphaBeta(SearchConfig(search_log_rate=rate))
    board = chess.Board()
    searched, started = 0, time.perf_counter()
    for _ in range(plies):
        if board.is_game_over():
            break
        result = list(engine.iterate(board, max_nodes=nodes))[-1]
        searched += result.nodes
        board.push(result.pv[0])
    return searched, time.perf_counter() - started


def part_logging(rounds: int, nodes: int, plies: int) -> list[dict[str, Any]]:
    speeds: dict[float, list[float]] = {0.0: [], 1 / 2048: []}
    for _ in range(rounds):
        for rate in speeds:
            speeds[rate].append(nps(*play_moves(rate, nodes, plies)))
    engine = AlphaBeta(SearchConfig(search_log_rate=1 / 64))
    board = chess.Board()
    for _ in range(plies):
        result = list(engine.iterate(board, max_nodes=nodes))[-1]
        board.push(result.pv[0])
    logged = engine._searcher.take_records()
    off, on = (statistics.median(speeds[r]) for r in speeds)
    print(f"(b) {plies} self-play plies at {nodes} nodes, median of {rounds} rounds: nodes/s "
          f"log off {off:.0f}, log 1/2048 {on:.0f}, ratio {on / off:.3f}")
    return logged   # decisions for part (c), logged at 1/64 to have enough


def part_label(decisions: list[dict[str, Any]]) -> None:
    from pipelines.lmr.run import research_scores

    engine = AlphaBeta(SearchConfig())
    started, nodes = time.perf_counter(), 0
    for decision in decisions:
        research_scores(engine, decision["fen"], decision["depth"] - 1, 10**9)
        nodes += engine._searcher.nodes
    seconds = time.perf_counter() - started
    print(f"(c) {len(decisions)} decisions re-searched: {len(decisions) / seconds:.1f} per s, "
          f"{nodes / max(len(decisions), 1):.0f} nodes each (depths 1..full)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="formula,logging,label")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--depth", type=int, default=8, help="bench depth of part (a)")
    parser.add_argument("--nodes", type=int, default=20000, help="nodes per move, (b) and (c)")
    parser.add_argument("--plies", type=int, default=40, help="self-play plies, (b) and (c)")
    args = parser.parse_args(argv)
    parts = set(args.parts.split(","))
    if "formula" in parts:
        part_formula(args.rounds, args.depth)
    decisions: list[dict[str, Any]] = []
    if parts & {"logging", "label"}:
        decisions = part_logging(args.rounds, args.nodes, args.plies)
    if "label" in parts:
        part_label(decisions)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
