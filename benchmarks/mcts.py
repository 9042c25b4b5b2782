#!/usr/bin/env python3
"""Monte-Carlo engine speed, side by side in one process, as ratios.

(a) ``playouts``: uniformly random playouts from the start position in the engine's own
    loop (``engines.mcts.tree.playout_batch``: MCC's rules, i.e. mate, stalemate,
    insufficient material, the fifty-move rule and the first repetition) against the core's
    ``random_playouts`` (python-chess' game-over rules: 75 moves, fivefold repetition).
    Target: >= 20,000 playouts/s (the thesis: about 3,300 in C++). Rates are per second of
    this process' CPU time (``time.process_time``): on a machine shared with other jobs the
    wall clock measures the load, not the loop; wall-clock rates are printed beside.
(b) ``iterations``: UCT iterations per second from the start position for every variant,
    each a search of ``--seconds``, as a ratio to plain MCC (the thesis: Combined has
    "comparable iteration speed").

    .venv/bin/python benchmarks/mcts.py [--games 20000] [--seconds 3]
"""
from __future__ import annotations

import argparse
import time

import chess
from engines.mcts.tree import playout_batch

from engines.core import random_playouts
from engines.mcts import VARIANTS, MctsConfig, iterations_per_second


def timed(function, *args):  # type: ignore[no-untyped-def]
    """(result, CPU seconds, wall seconds) of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    result = function(*args)
    return result, time.process_time() - cpu, time.perf_counter() - wall


def playouts_per_second(games: int) -> dict[str, float]:
    """Playouts per CPU second and wall second, and plies per playout, engine and core."""
    engine, engine_cpu, engine_wall = timed(playout_batch, MctsConfig(seed=1), games)
    core, core_cpu, core_wall = timed(random_playouts, games, 1)
    return {"engine": games / engine_cpu, "core": games / core_cpu,
            "engine_wall": games / engine_wall, "core_wall": games / core_wall,
            "engine_plies": engine["plies"] / games, "core_plies": core["plies"] / games}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20_000)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    r = playouts_per_second(args.games)
    print(f"(a) random playouts per CPU second from the start position: engine loop "
          f"{r['engine']:,.0f} ({r['engine_plies']:.0f} plies each), core random_playouts "
          f"{r['core']:,.0f} ({r['core_plies']:.0f} plies each); ratio "
          f"{r['engine'] / r['core']:.2f}x, plies/s ratio "
          f"{r['engine'] * r['engine_plies'] / (r['core'] * r['core_plies']):.2f}x; "
          f"target 20,000/s. Wall clock: {r['engine_wall']:,.0f} vs {r['core_wall']:,.0f}/s")
    base = iterations_per_second(MctsConfig(seed=1), chess.Board(), args.seconds)
    print(f"(b) iterations/s from the start position ({args.seconds:g} s searches)")
    for name in VARIANTS:
        rate = base if name == "mcc" else iterations_per_second(
            MctsConfig.variant(name, seed=1), chess.Board(), args.seconds)
        print(f"    {name:<17} {rate:>10,.0f}  {rate / base:5.2f}x MCC")


if __name__ == "__main__":
    main()
