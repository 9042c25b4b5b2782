#!/usr/bin/env python3
"""Monte-Carlo engine speed, side by side in one process, as ratios.

(a) ``playouts``: uniformly random playouts from the start position in the engine's own
    loop (``engines.mcts.tree.playout_batch``: MCC's rules, i.e. mate, stalemate,
    insufficient material, the fifty-move rule and the first repetition) against the core's
    ``random_playouts`` (python-chess' game-over rules: 75 moves, fivefold repetition).
    Target: >= 20,000 playouts/s (the thesis: about 3,300 in C++).
(b) ``iterations``: UCT iterations per second from the start position for every variant,
    each a search of ``--seconds``, as a ratio to plain MCC (the thesis: Combined has
    "comparable iteration speed").

    .venv/bin/python benchmarks/mcts.py [--games 20000] [--seconds 3]
"""
from __future__ import annotations

import argparse
import time

import chess

from engines.core import random_playouts
from engines.mcts import VARIANTS, MctsConfig, iterations_per_second
from engines.mcts.tree import playout_batch


def playouts_per_second(games: int) -> tuple[float, float, float, float]:
    """(engine playouts/s, core playouts/s, engine plies/playout, core plies/playout)."""
    start = time.perf_counter()
    engine = playout_batch(MctsConfig(seed=1), games)
    engine_s = time.perf_counter() - start
    start = time.perf_counter()
    core = random_playouts(games, 1)
    core_s = time.perf_counter() - start
    return (games / engine_s, games / core_s, engine["plies"] / games, core["plies"] / games)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20_000)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    engine, core, engine_plies, core_plies = playouts_per_second(args.games)
    print(f"(a) random playouts/s from the start position: engine loop {engine:,.0f} "
          f"({engine_plies:.0f} plies each), core random_playouts {core:,.0f} "
          f"({core_plies:.0f} plies each); ratio {engine / core:.2f}x; plies/s ratio "
          f"{engine * engine_plies / (core * core_plies):.2f}x; target 20,000/s")
    base = iterations_per_second(MctsConfig(seed=1), chess.Board(), args.seconds)
    print(f"(b) iterations/s from the start position ({args.seconds:g} s searches)")
    for name in VARIANTS:
        rate = base if name == "mcc" else iterations_per_second(
            MctsConfig.variant(name, seed=1), chess.Board(), args.seconds)
        print(f"    {name:<17} {rate:>10,.0f}  {rate / base:5.2f}x MCC")


if __name__ == "__main__":
    main()
