#!/usr/bin/env python3
"""Compiled core speed against python-chess, side by side in one process, as ratios.

(a) ``perft``: leaves per second of Kiwipete perft, every move made and unmade down to the
    leaves (no bulk counting) - python-chess with ``push``/``pop`` against
    ``engines.core.perft_count``. Target: >= 30x.
(b) ``playouts``: uniformly random games from the start position to python-chess's
    ``is_game_over()`` (mate, stalemate, insufficient material, 75 moves, fivefold) - a
    ``random.choice(list(board.legal_moves))`` loop against ``engines.core.random_playouts``.
    Target: >= 50x and >= 2,000 games/s.
(c) ``replay``: replay_san (keys, EPDs, UCI and canonical SAN per ply) against the
    python-chess loop ingest would otherwise run (parse_san, san, push, zobrist_hash, epd).
(d) ``bench``: ``chesslab bench`` nodes per second (sunfish is compared in benchmarks/engine.py).

    .venv/bin/python benchmarks/core.py [--perft-depth 4] [--baseline-perft-depth 3]
                                         [--games 2000] [--baseline-games 30]
"""
from __future__ import annotations

import argparse
import random
import time

import chess
import chess.polyglot

from engines.alphabeta.bench import BenchConfig, run_bench
from engines.core import perft_count, random_playouts, replay_san

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"


def python_chess_perft(board: chess.Board, depth: int) -> int:
    if depth == 0:
        return 1
    nodes = 0
    for move in board.legal_moves:
        board.push(move)
        nodes += python_chess_perft(board, depth - 1)
        board.pop()
    return nodes


def timed(function, *args):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - start


def python_chess_playouts(games: int, seed: int) -> int:
    rng = random.Random(seed)
    plies = 0
    for _ in range(games):
        board = chess.Board()
        while not board.is_game_over():
            board.push(rng.choice(list(board.legal_moves)))
        plies += board.ply()
    return plies


def python_chess_replay(games: list[list[str]]) -> int:
    plies = 0
    for sans in games:
        board = chess.Board()
        for san in sans:
            chess.polyglot.zobrist_hash(board)
            board.epd()
            move = board.parse_san(san)
            board.san(move)
            move.uci()
            board.push(move)
            plies += 1
    return plies


def random_sans(games: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        board = chess.Board()
        sans = []
        while not board.is_game_over() and board.ply() < 160:
            move = rng.choice(list(board.legal_moves))
            sans.append(board.san(move))
            board.push(move)
        out.append(sans)
    return out


def row(name: str, unit: str, base: float, ours: float, target: str) -> None:
    print(f"{name:<10} {unit:<12} python-chess {base:>14,.0f}   ours {ours:>14,.0f}   "
          f"ratio {ours / base:>7.1f}x   target {target}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--perft-depth", type=int, default=4)
    parser.add_argument("--baseline-perft-depth", type=int, default=3)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--baseline-games", type=int, default=30)
    parser.add_argument("--bench-depth", type=int, default=8)
    args = parser.parse_args()

    base_nodes, base_s = timed(python_chess_perft, chess.Board(KIWIPETE), args.baseline_perft_depth)
    our_nodes, our_s = timed(perft_count, KIWIPETE, args.perft_depth)
    print(f"perft Kiwipete: python-chess depth {args.baseline_perft_depth} = {base_nodes} leaves "
          f"in {base_s:.2f} s; ours depth {args.perft_depth} = {our_nodes} in {our_s:.2f} s")
    row("perft", "leaves/s", base_nodes / base_s, our_nodes / our_s, ">= 30x")

    base_plies, base_s = timed(python_chess_playouts, args.baseline_games, 1)
    ours, our_s = timed(random_playouts, args.games, 1)
    print(f"playouts: python-chess {args.baseline_games} games ({base_plies} plies) in "
          f"{base_s:.2f} s; ours {args.games} games ({ours['plies']} plies) in {our_s:.2f} s")
    row("playouts", "games/s", args.baseline_games / base_s, args.games / our_s,
        ">= 50x and >= 2,000 games/s")

    games = random_sans(200, seed=2)
    base_plies, base_s = timed(python_chess_replay, games)
    start = time.perf_counter()
    our_plies = sum(len(replay_san(None, sans)[2]) for sans in games)
    our_s = time.perf_counter() - start
    print(f"replay: {base_plies} plies; python-chess {base_s / base_plies * 1e6:.1f} us/ply, "
          f"ours {our_s / our_plies * 1e6:.2f} us/ply")
    row("replay", "plies/s", base_plies / base_s, our_plies / our_s, "ingest needs ~1-2 us/ply")

    result = run_bench(BenchConfig(depth=args.bench_depth))
    print(f"bench: depth {args.bench_depth}, {result.nodes} nodes in {result.seconds:.2f} s = "
          f"{result.nps:,.0f} nps (target 500k+; sunfish side by side in benchmarks/engine.py)")


if __name__ == "__main__":
    main()
