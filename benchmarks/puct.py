#!/usr/bin/env python3
"""PUCT speed, side by side in one process, as ratios.

(a) ``network``: policy-value evaluations per second of the tiny and small nets (and
    SigmaZero's 10x128 with ``--big``), one position per call against batches of 8 and 64,
    one torch thread (a self-play worker's setting) and all of this process' threads.
(b) ``search``: PUCT simulations per second of the tiny net from the start position with
    leaf batches of 1 and 8 (virtual loss).
(c) ``selfplay``: recorded self-play positions per second of the tiny preset's games on one
    process and on ``--workers`` processes (the two cores here).

Rates are per second of wall time; on a machine shared with other jobs they measure the
load as well. A GPU changes (a) most: a batch of 64 costs about what one position costs, so
the batched rate grows with the batch while one-at-a-time stays bound by the launch latency;
the search then needs larger leaf batches (more virtual loss) or many games per process
sharing one batched evaluator to use it.

    .venv/bin/python benchmarks/puct.py [--seconds 2] [--games 8] [--workers 2] [--big]
"""
from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import chess
import numpy as np
import torch

from engines.puct import PuctConfig
from engines.puct.encoding import planes
from engines.puct.network import Architecture, random_network
from engines.puct.search import NetEvaluator, Puct
from pipelines.puct.config import preset_config
from pipelines.puct.selfplay import play_game

NETS = {"tiny (1x16)": Architecture(1, 16, 32), "small (2x32)": Architecture(2, 32, 64)}


def evaluations_per_second(arch: Architecture, batch: int, seconds: float) -> float:
    net = random_network(arch)
    x = torch.from_numpy(np.stack([planes(chess.Board())] * batch))
    done, start = 0, time.perf_counter()
    with torch.inference_mode():
        while time.perf_counter() - start < seconds:
            net(x)
            done += batch
    return done / (time.perf_counter() - start)


def simulations_per_second(batch: int, seconds: float) -> float:
    search = Puct(NetEvaluator(random_network(NETS["tiny (1x16)"])), PuctConfig(batch=batch))
    start, total = time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        search.new_game()
        search.search(chess.Board(), 200)
        total += 200
    return total / (time.perf_counter() - start)


def warm(_: int) -> int:
    """A worker's start (its imports), outside the timed part."""
    import pipelines.puct.selfplay  # noqa: F401

    time.sleep(0.5)       # every worker of the pool gets one
    return 0


def selfplay_rate(games: int, workers: int) -> float:
    """Positions per second of ``games`` games; the worker processes are started and have
    imported torch before the clock starts (a fork-server worker's start costs seconds, as
    much as a few tiny games: timing it made two processes look 5x slower than one)."""
    config = preset_config("tiny")
    jobs = [(config, "bench", 1, g, None, "random") for g in range(games)]
    if workers == 1:
        play_game(*jobs[0])             # imports and the first net, untimed
        start = time.perf_counter()
        positions = sum(len(play_game(*job).samples) for job in jobs)
        return positions / (time.perf_counter() - start)
    with ProcessPoolExecutor(workers, mp_context=get_context("forkserver")) as pool:
        list(pool.map(warm, range(workers)))
        start = time.perf_counter()
        positions = sum(len(r.samples) for r in pool.map(play_game, *zip(*jobs, strict=True)))
        return positions / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--games", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--big", action="store_true", help="also SigmaZero's 10x128")
    args = parser.parse_args()
    if args.big:
        NETS["SigmaZero (10x128)"] = Architecture(10, 128, 256)
    for threads in (1, torch.get_num_threads()):
        torch.set_num_threads(threads)
        for name, arch in NETS.items():
            rates = {b: evaluations_per_second(arch, b, args.seconds) for b in (1, 8, 64)}
            print(f"network {name}, {threads} thread(s): " + ", ".join(
                f"batch {b}: {r:,.0f}/s" for b, r in rates.items())
                  + f"; batch 64 / batch 1 = {rates[64] / rates[1]:.1f}x")
    torch.set_num_threads(1)
    one, eight = (simulations_per_second(b, args.seconds) for b in (1, 8))
    print(f"search (tiny net): leaf batch 1: {one:,.0f} simulations/s, batch 8: {eight:,.0f}/s"
          f" ({eight / one:.1f}x)")
    single = selfplay_rate(args.games, 1)
    parallel = selfplay_rate(args.games, args.workers)
    print(f"selfplay (tiny preset, 16 simulations a move): 1 process {single:,.1f} positions/s,"
          f" {args.workers} processes {parallel:,.1f}/s ({parallel / single:.1f}x)")


if __name__ == "__main__":
    main()
