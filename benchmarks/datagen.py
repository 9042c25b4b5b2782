"""Training data per CPU second (issue 47 §2): ``chesslab datagen``'s game loop (a UCI engine
over raw pipes, or chesslab's alpha-beta engine in this process, entries written as binpack)
beside the loop it replaced (python-chess's ``engine.analyse`` per move, PGN text with
``[%eval]`` comments, which ingest then reads back), the same games in one run, alternating.

Each source plays ``--games`` games on one core (one process, its engine process beside it)
and reports positions per second of wall time and per CPU second (this process and the
engine's), the share of training positions (not in check, best move neither a capture nor a
promotion: what ``train nnue`` keeps), and positions per hour on two cores (twice one core:
the workers share nothing).

    .venv/bin/python benchmarks/datagen.py --games 20 --depth 6 --rounds 2 \\
        [--nodes 5000] [--engines stockfish,alphabeta]
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import chess
import chess.engine
import chess.pgn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engines.registry import parse_engine  # noqa: E402
from pipelines.datagen.games import (  # noqa: E402
    GameSettings,
    UciSearcher,
    binpack_entries,
    play_game,
    random_start,
)
from pipelines.datagen.inprocess import InProcessSearcher  # noqa: E402
from pipelines.datagen.run import binpack_bytes  # noqa: E402
from pipelines.formats.fens import board_flags  # noqa: E402

STOCKFISH = "/usr/games/stockfish"
MATE_CP = 100_000


def cpu_seconds() -> float:
    """CPU seconds of this process."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def process_cpu(pid: int) -> float:
    """CPU seconds of a live process (an engine), from /proc (read before it exits: a reaped
    child's time would land on whichever measurement reaps it)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


ENGINE_CPU: list[float] = []      # the engine CPU seconds of the measurement running


def baseline_games(games: int, settings: GameSettings) -> tuple[int, int]:
    """The loop ``datagen`` had before issue 47: python-chess's engine, ``analyse`` per move,
    each game a PGN text with an ``[%eval]`` per move. (positions, training positions)."""
    positions = quiet = 0
    with chess.engine.SimpleEngine.popen_uci(STOCKFISH) as engine:
        engine.configure({"Threads": 1, "Hash": 16})
        pid = engine.transport.get_pid()
        for index in range(games):
            board = random_start(random.Random(f"{settings.seed}:{index}"),
                                 settings.random_plies)
            game = chess.pgn.Game()
            node: chess.pgn.GameNode = game
            for move in board.move_stack:
                node = node.add_variation(move)
            resign = 0
            while len(board.move_stack) < settings.max_plies:
                if board.is_game_over(claim_draw=True):
                    break
                limit = chess.engine.Limit(depth=settings.depth, nodes=settings.nodes)
                info = engine.analyse(board, limit, game=game)
                score, pv = info.get("score"), info.get("pv") or []
                if score is None or not pv:
                    break
                white = score.white()
                node.comment = f"[%eval {white.score(mate_score=MATE_CP) / 100:.2f}]"
                mover = score.relative.score(mate_score=MATE_CP)
                resign = resign + 1 if abs(mover) >= settings.resign else 0
                positions += 1
                quiet += not board.is_check() and not board.is_capture(pv[0]) \
                    and pv[0].promotion is None
                if resign >= 4 or score.relative.is_mate():
                    break
                node = node.add_variation(pv[0])
                board.push(pv[0])
            str(game)
        ENGINE_CPU.append(process_cpu(pid))
    return positions, quiet


def our_games(searcher_of: Callable[[], object], games: int,
              settings: GameSettings) -> tuple[int, int]:
    """``datagen``'s loop: (positions written as binpack, training positions)."""
    searcher = searcher_of()
    try:
        records = [play_game(searcher, index, settings) for index in range(games)]  # type: ignore[arg-type]
    finally:
        client = getattr(searcher, "client", None)
        if client is not None:
            ENGINE_CPU.append(process_cpu(client.process.pid))
        close = getattr(searcher, "close", None)
        if close is not None:
            close()
    binpack_bytes(records)
    entries = [e for r in records for e in binpack_entries(r)]
    import pyarrow as pa

    in_check, noisy = board_flags(pa.array([e[0] for e in entries]),
                                  pa.array([e[1] for e in entries]))
    quiet = int(((in_check == 0) & (noisy == 0)).sum())
    return len(entries), quiet


def measure(name: str, play: Callable[[], tuple[int, int]]) -> dict[str, float]:
    ENGINE_CPU.clear()
    wall, cpu = time.perf_counter(), cpu_seconds()
    positions, quiet = play()
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu + sum(ENGINE_CPU)
    return {"positions": positions, "quiet": quiet, "wall": wall, "cpu": cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--nodes", type=int, default=5000,
                        help="the alpha-beta engine's (and Stockfish's nodes source) nodes")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--sources", default="baseline,stockfish-depth,stockfish-nodes,alphabeta",
                        help="comma-separated: baseline (python-chess + PGN, Stockfish at "
                             "--depth), stockfish-depth, stockfish-nodes, alphabeta (HCE, "
                             "--nodes, in this process)")
    args = parser.parse_args()
    depth = GameSettings(depth=args.depth)
    nodes = GameSettings(depth=None, nodes=args.nodes)
    hce = parse_engine("alphabeta:eval=hce")
    sources: dict[str, Callable[[], tuple[int, int]]] = {
        "baseline": lambda: baseline_games(args.games, depth),
        "stockfish-depth": lambda: our_games(lambda: UciSearcher(STOCKFISH), args.games, depth),
        "stockfish-nodes": lambda: our_games(lambda: UciSearcher(STOCKFISH), args.games, nodes),
        "alphabeta": lambda: our_games(lambda: InProcessSearcher(hce), args.games, nodes),
    }
    chosen = args.sources.split(",")
    results: dict[str, list[dict[str, float]]] = {s: [] for s in chosen}
    for _ in range(args.rounds):
        for source in chosen:
            results[source].append(measure(source, sources[source]))
    print(f"{args.games} games per source and round, {args.rounds} rounds, depth {args.depth}, "
          f"nodes {args.nodes}, one core each (load {os.getloadavg()[0]:.1f})")
    rates = {}
    for source, runs in results.items():
        per_cpu = statistics.median(r["positions"] / r["cpu"] for r in runs)
        per_wall = statistics.median(r["positions"] / r["wall"] for r in runs)
        share = sum(r["quiet"] for r in runs) / max(sum(r["positions"] for r in runs), 1)
        rates[source] = per_cpu
        print(f"  {source:16s} {per_wall:8.0f} positions/s wall, {per_cpu:8.0f} per CPU s; "
              f"training share {share:.2f}; two cores: {2 * 3600 * per_cpu * share / 1e6:.2f}M "
              f"training positions an hour")
    if "baseline" in rates:
        print("  per CPU s over the baseline: " + ", ".join(
            f"{s} {rates[s] / rates['baseline']:.2f}x" for s in rates if s != "baseline"))


if __name__ == "__main__":
    main()
