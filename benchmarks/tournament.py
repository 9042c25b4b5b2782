"""Tournament throughput: games per hour at concurrency 1 and 2, and the share of wall time
spent outside the engines (our own overhead: clocks, adjudication, PGN, warehouse writes).

Both runs play the same games (Stockfish against itself from the start position) into fresh
homes, one after the other in this process, and the ratio is printed; targets: 1.8x or more
from concurrency 2, 5% or less outside the engines.

Two limits are measured: fixed nodes (CPU-bound: the speed-up also shows how many idle
cores the machine has) and fixed movetime (wall-bound: shows the scheduling alone).

usage: python benchmarks/tournament.py [--nodes 20000] [--movetime-ms 50] [--rounds 3]
"""
from __future__ import annotations

import argparse
import tempfile
import time

from pipelines.tournament import TournamentConfig, TournamentSummary, run_tournament
from warehouse import Lake

ENGINE = "stockfish?Threads=1&Hash=16"


def play(concurrency: int, limits: dict[str, int],
         args: argparse.Namespace) -> tuple[TournamentSummary, float]:
    config = TournamentConfig(
        engines=(f"{ENGINE}#a", f"{ENGINE}#b"), rounds=args.rounds, concurrency=concurrency,
        max_plies=args.max_plies, progress=False, draw_move_number=0, resign_moves=0,
        **limits)  # type: ignore[arg-type]
    with tempfile.TemporaryDirectory() as home:
        started = time.perf_counter()
        summary = run_tournament(config, Lake(home))
        return summary, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=20000)
    parser.add_argument("--movetime-ms", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3, help="game pairs (games = 2x)")
    parser.add_argument("--max-plies", type=int, default=100)
    args = parser.parse_args()
    for limits in ({"nodes": args.nodes}, {"movetime_ms": args.movetime_ms}):
        (name, value), = limits.items()
        rates = {}
        for concurrency in (1, 2):
            summary, seconds = play(concurrency, limits, args)
            rates[concurrency] = summary.played / seconds * 3600
            print(f"{name}={value} concurrency {concurrency}: {summary.played} games in "
                  f"{seconds:.1f}s = {rates[concurrency]:.0f} games/hour, outside engines "
                  f"{100 * summary.outside_engine_share:.2f}% of worker time")
        print(f"{name}={value} speed-up concurrency 2 / 1: {rates[2] / rates[1]:.2f}x "
              "(target >= 1.8x)")


if __name__ == "__main__":
    main()
