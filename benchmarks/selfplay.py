#!/usr/bin/env python3
"""Self-play speed in positions (plies searched) per second, side by side in one run.

(a) ``movers``: the same seeded games of chesslab's alpha-beta searched in this process
    against the same engine over UCI pipes (``python -m engines.uci alphabeta``), and Stockfish
    over UCI at the same node limit; rounds alternate the order. The in-process and UCI
    alpha-beta games are checked to be move for move the same.
(b) ``pool``: a whole ``selfplay`` step (play, PGN, ingest) on one process against a pool of
    ``--workers`` processes, each in a fresh home.

    .venv/bin/python benchmarks/selfplay.py [--games 4] [--nodes 1000] [--rounds 2]
                                             [--pool-games 16] [--workers 2]
"""
from __future__ import annotations

import argparse
import tempfile
import time

from flows.selfplay import SELFPLAY
from flows.step import LocalRunner
from pipelines.games.game import Opening
from pipelines.selfplay import SelfplayConfig
from pipelines.selfplay.game import SelfplayGame, play_game
from pipelines.selfplay.players import open_mover
from warehouse import Lake

CONTENDERS = {  # name: (spec, in process)
    "alphabeta in-process": ("alphabeta:eval=hce", True),
    "alphabeta over UCI": ("alphabeta:eval=hce", False),
    "stockfish over UCI": ("stockfish?Threads=1&Hash=16", False),
}


def play(name: str, games: int, nodes: int, max_plies: int) -> tuple[list[SelfplayGame], float]:
    spec, in_process = CONTENDERS[name]
    started = time.perf_counter()
    mover = open_mover(spec, nodes, None, in_process)
    try:
        played = [play_game(mover, g, Opening(), 8, 1, max_plies) for g in range(games)]
    finally:
        mover.close()
    return played, time.perf_counter() - started


def movers(games: int, nodes: int, rounds: int, max_plies: int) -> None:
    rates: dict[str, list[float]] = {name: [] for name in CONTENDERS}
    moves: dict[str, list[str]] = {}
    for round_ in range(rounds):
        names = list(CONTENDERS) if round_ % 2 == 0 else list(CONTENDERS)[::-1]
        for name in names:
            played, seconds = play(name, games, nodes, max_plies)
            searched = sum(len(g.moves) for g in played)
            rates[name].append(searched / seconds)
            moves[name] = [c.move.uci() for g in played for c in g.moves]
    same = moves["alphabeta in-process"] == moves["alphabeta over UCI"]
    base = max(rates["alphabeta over UCI"])
    print(f"(a) {games} games x {rounds} rounds at {nodes} nodes/move "
          f"(in-process and UCI alpha-beta games identical: {same})")
    for name, values in rates.items():
        best = max(values)
        print(f"    {name:22s} {best:8.0f} positions/s  x{best / base:.2f} of alphabeta over UCI")


def pool(games: int, nodes: int, workers: int) -> None:
    rates = {}
    for count in (1, workers):
        with tempfile.TemporaryDirectory() as home:
            config = SelfplayConfig(engine="alphabeta:eval=hce", games=games, nodes=nodes,
                                    batch_games=max(1, games // (2 * workers)), workers=count)
            summary = LocalRunner(show_progress=False).run(SELFPLAY, config, Lake(home))
        rates[count] = summary.positions_per_s
        print(f"(b) selfplay step, {count} worker(s): {summary.games} games, {summary.plies} "
              f"plies, {summary.new_positions} new positions, {summary.seconds:.1f} s, "
              f"{summary.positions_per_s:.0f} positions/s")
    print(f"    {workers} workers / 1 worker: x{rates[workers] / rates[1]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--max-plies", type=int, default=300)
    parser.add_argument("--pool-games", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    movers(args.games, args.nodes, args.rounds, args.max_plies)
    pool(args.pool_games, args.nodes, args.workers)


if __name__ == "__main__":
    main()
