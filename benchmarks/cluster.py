"""Games on a local Dask cluster: games/minute of 2 worker processes against 1, and the cost
of the cluster path against playing the same batches straight on threads of this process.

Every run plays the same games (Stockfish against itself at fixed nodes, a pair per batch,
the openings of tests/fixtures/openings/two_games.pgn alternating) into a fresh home, side by
side in this one run, and the ratios are printed:

- ``workers 2 / workers 1``: a local cluster (``--workers N``, one game per worker) of 2
  processes against 1; target >= 1.8x (on a machine with 2 idle cores);
- ``workers 2 / direct 2``: the cluster path against two threads calling the batch function
  directly (the engines-only floor: what a ``--concurrency 2`` without any cluster did);
  target: at most 5% slower;
- ``concurrency 2`` (the default one-machine path: one in-process worker, two game threads)
  is shown against ``direct 2`` as well.

``--scale N`` instead runs 1 and N workers (a 16-core machine: ``--scale 14``, target >= 12x)
and, with ``--tc 10+0.1``, prints the time-loss rate (target <= 0.1% of games).

The paths take turns, once each per repeat (in reverse order every other repeat, so a drift
in the machine's load weighs on each path alike), and each ratio is the median of the repeats'
own ratios: on a machine others load, the load drifts between runs more than the paths differ.
``--paths`` runs only some of them (``--paths direct2,workers2``: the overhead alone).

Each run also counts the CPU seconds of this process and every process it started (worker
processes, engines: all are gone, and reaped, when a run ends), per game. The engines play
the same games at fixed nodes whichever path runs them, so what one path spends over another
per game is its own overhead (Dask's processes, a batch's round trips), a figure others' load
barely moves where wall time moves with it.

``--background-cpu`` measures the CPU Dask's own work takes (profiler, ticks, monitors) with
its defaults and with the games runner's settings, in CPU seconds (others' load does not
enter): on 2 cores shared with 2 engines, every percent of a core it takes is half a percent
of the engines' speed.

usage: python benchmarks/cluster.py [--nodes 20000] [--rounds 6] [--repeats 1] [--paths ...]
       python benchmarks/cluster.py --scale 14 --tc 10+0.1 --rounds 140
       python benchmarks/cluster.py --background-cpu --repeats 2
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pipelines.games import GamesOptions
from pipelines.games.batch import play_batch, release_engines
from pipelines.tournament import TournamentConfig, TournamentSummary, run_tournament
from pipelines.tournament.runner import Tournament
from warehouse import Lake

ENGINE = "stockfish?Threads=1&Hash=16"
OPENINGS = Path(__file__).parents[1] / "tests" / "fixtures" / "openings" / "two_games.pgn"


def config(args: argparse.Namespace, runner: GamesOptions,
           concurrency: int = 1) -> TournamentConfig:
    limits: dict[str, object] = {"tc": args.tc} if args.tc else {"nodes": args.nodes}
    return TournamentConfig(
        engines=(f"{ENGINE}#a", f"{ENGINE}#b"), rounds=args.rounds, concurrency=concurrency,
        openings=str(OPENINGS), max_plies=args.max_plies, progress=False, draw_move_number=0,
        resign_moves=0, runner=runner, **limits)  # type: ignore[arg-type]


Run = tuple[TournamentSummary, float, int]       # the summary, seconds, game threads
PATHS = {"direct2": "direct 2", "workers2": "workers 2", "concurrency2": "concurrency 2",
         "workers1": "workers 1"}


def on_cluster(cfg: TournamentConfig) -> Run:
    with tempfile.TemporaryDirectory() as home:
        started = time.perf_counter()
        summary: TournamentSummary = run_tournament(cfg, Lake(home))
        runner = cfg.runner
        threads = runner.workers * runner.local_games_per_worker() if runner.workers \
            else cfg.workers
        return summary, time.perf_counter() - started, threads


def direct(cfg: TournamentConfig, threads: int) -> Run:
    """The same batches played by ``threads`` threads calling the batch function (each
    thread's engines kept from batch to batch, as the old ``--concurrency`` lanes kept
    theirs), results stored as the cluster path stores them: no scheduler, no worker
    processes."""
    with tempfile.TemporaryDirectory() as home:
        started = time.perf_counter()
        tournament = Tournament(cfg, Lake(home))
        summary = TournamentSummary(tournament.id, [], len(tournament.slots), 0)
        batches = tournament.batches(tournament.slots)
        with ThreadPoolExecutor(threads) as pool:
            for result in pool.map(play_batch, batches):
                tournament.finish(result, summary)
        release_engines()
        return summary, time.perf_counter() - started, threads


def startup(cfg: TournamentConfig) -> tuple[float, float]:
    """Seconds to start the games runner and check its workers (engines started once), and
    to close it: the fixed cost of a run, which a long match spreads over its games."""
    from pipelines.games.cluster import check_workers, open_cluster

    with tempfile.TemporaryDirectory() as home:
        tournament = Tournament(cfg, Lake(home))
        started = time.perf_counter()
        with open_cluster(cfg.runner, cfg.workers) as client:
            check_workers(client, tournament.batches(tournament.slots)[0], print)
            client.run(release_engines)
            opened = time.perf_counter()
        return opened - started, time.perf_counter() - opened


def polling(name: str, seconds: float) -> int:
    """What a worker thread does besides waiting for engines: watch the run's stop event (as
    a batch does: a thread waiting at the scheduler) and read the watch, for ``seconds``."""
    from pipelines.games.cluster import StopWatch

    stopped, asked, end = StopWatch(name), 0, time.monotonic() + seconds
    try:
        while time.monotonic() < end:
            stopped()
            asked += 1
            time.sleep(0.05)
    finally:
        stopped.close()
    return asked


def background_cpu(quiet: bool, seconds: float = 10.0) -> float:
    """Percent of a core the processes of a local cluster of 2 workers (this client and
    scheduler, the workers) use while each worker thread polls a stop event as a batch does:
    CPU seconds, not wall time, so other jobs' load does not enter."""
    import psutil
    from distributed import Event

    from pipelines.games import cluster

    saved = cluster.QUIET_CLUSTER
    cluster.QUIET_CLUSTER = saved if quiet else {}
    try:
        with cluster.open_cluster(GamesOptions(workers=2, games_per_worker=1), 1) as client:
            Event("benchmark-stop", client=client)
            tasks = [client.submit(polling, "benchmark-stop", seconds + 4, pure=False,
                                   workers=[w]) for w in client.scheduler_info()["workers"]]
            time.sleep(2)
            me = psutil.Process()
            processes = [me, *me.children(recursive=True)]
            before = [sum(p.cpu_times()[:2]) for p in processes]
            started = time.perf_counter()
            time.sleep(seconds)
            used = sum(sum(p.cpu_times()[:2]) - b for p, b in zip(processes, before,
                                                                    strict=True))
            wall = time.perf_counter() - started
            client.gather(tasks)
    finally:
        cluster.QUIET_CLUSTER = saved
    return 100 * used / wall


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def cpu_seconds() -> float:
    """User and system CPU of this process and of every child process it has reaped (theirs
    include their own reaped children: a worker process's engines)."""
    return sum(sum(resource.getrusage(who)[:2])
               for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))


Measured = tuple[float, float]      # games/minute, CPU seconds a game


def measure(name: str, run: Callable[[], Run]) -> Measured:
    """Games/minute of one run and its CPU seconds a game, with where the game threads' time
    went: playing batches (of it, waiting for engines) or idle (start-up, a batch's round
    trip, the last batches' tail)."""
    before, cpu = load(), cpu_seconds()
    summary, seconds, threads = run()
    games = summary.played
    rate = games / seconds * 60
    per_game = (cpu_seconds() - cpu) / max(games, 1)
    losses = summary.terminations.get("time forfeit", 0)
    busy = summary.worker_seconds / (seconds * threads)
    engines = summary.engine_seconds / (seconds * threads)
    print(f"{name:<14} {games} games in {seconds:6.1f}s = {rate:6.1f} games/min  "
          f"time losses {losses}/{games}  ({before} -> {load()})\n"
          f"{'':<14} {threads} threads: in batches {100 * busy:.1f}% of their time (engines "
          f"{100 * engines:.1f}%, the rest {100 * (busy - engines):.1f}%), "
          f"idle {100 * (1 - busy):.1f}%; CPU {per_game:.3f} s a game", flush=True)
    return rate, per_game


def interleaved(paths: dict[str, Callable[[], Run]], repeats: int) -> list[dict[str, Measured]]:
    """Every path once per repeat, in turn, the order reversed every other repeat: a machine
    whose load drifts (others' jobs) weighs on the paths of one repeat alike, so ratios are
    taken within a repeat."""
    rounds = []
    for repeat in range(repeats):
        print(f"-- repeat {repeat + 1}/{repeats}", flush=True)
        order = list(paths.items())
        rounds.append({name: measure(name, run)
                       for name, run in (order[::-1] if repeat % 2 else order)})
    return rounds


def ratio(rounds: list[dict[str, Measured]], top: str, bottom: str, which: int = 0) -> str:
    """The median over repeats of ``top / bottom`` (each repeat's own), and every repeat's;
    ``which``: of games/minute (0) or CPU a game (1)."""
    values = sorted(r[top][which] / r[bottom][which] for r in rounds)
    middle = statistics.median(values)
    return f"{middle:.3f} (repeats: {', '.join(f'{v:.3f}' for v in values)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=20000)
    parser.add_argument("--tc", default=None, help="a time control instead of --nodes")
    parser.add_argument("--rounds", type=int, default=6, help="game pairs (games = 2x)")
    parser.add_argument("--max-plies", type=int, default=120)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--paths", default=",".join(PATHS),
                        help=f"the paths to run, of {','.join(PATHS)}")
    parser.add_argument("--scale", type=int, default=0,
                        help="run 1 and N workers instead (a many-core machine)")
    parser.add_argument("--background-cpu", action="store_true",
                        help="only the CPU Dask's own work takes: its defaults against the "
                             "games runner's settings")
    args = parser.parse_args()
    print(f"cores {os.cpu_count()}, {load()}; "
          f"{f'tc {args.tc}' if args.tc else f'nodes {args.nodes}'}, {args.rounds} pairs")
    if args.background_cpu:
        for _ in range(args.repeats):
            default, quiet = background_cpu(quiet=False), background_cpu(quiet=True)
            print(f"Dask's background CPU, 2 local workers polling as batches do: defaults "
                  f"{default:.1f}% of a core, the games runner's {quiet:.1f}% "
                  f"({default / max(quiet, 0.01):.1f}x less; {load()})", flush=True)
        return

    def workers(n: int) -> Callable[[], Run]:
        return lambda: on_cluster(config(args, GamesOptions(workers=n, games_per_worker=1)))

    if args.scale:
        rounds = interleaved({"workers 1": workers(1), f"workers {args.scale}":
                              workers(args.scale)}, args.repeats)
        print(f"workers {args.scale} / workers 1: "
              f"{ratio(rounds, f'workers {args.scale}', 'workers 1')} (target >= 12x at 14)")
        return
    every = {
        "direct 2": lambda: direct(config(args, GamesOptions()), 2),
        "workers 2": workers(2),
        "concurrency 2": lambda: on_cluster(config(args, GamesOptions(), concurrency=2)),
        "workers 1": workers(1),
    }
    chosen = [PATHS[key.strip()] for key in args.paths.split(",")
              if key.strip() in PATHS or parser.error(f"--paths: no path {key!r}")]
    rounds = interleaved({name: every[name] for name in chosen}, args.repeats)
    if {"workers 2", "workers 1"} <= set(chosen):
        print(f"workers 2 / workers 1: {ratio(rounds, 'workers 2', 'workers 1')} "
              "(target >= 1.8x)")
    for name, options, concurrency in (("workers 1", GamesOptions(workers=1), 1),
                                       ("workers 2", GamesOptions(workers=2), 1),
                                       ("concurrency 2", GamesOptions(), 2)):
        if name in chosen:
            opened, closed = startup(config(args, options, concurrency))
            print(f"{name} start-up (cluster + worker checks): {opened:.1f}s, close: "
                  f"{closed:.1f}s  ({load()})")
    for path in ("workers 2", "concurrency 2"):
        if {path, "direct 2"} <= set(chosen):
            print(f"{path} / direct 2: {ratio(rounds, path, 'direct 2')} (target >= 0.95: "
                  f"at most 5% slower); CPU a game: {ratio(rounds, path, 'direct 2', 1)}")
    print(f"done, {load()}")


if __name__ == "__main__":
    main()
