#!/usr/bin/env python3
"""NNUE speed, each contender next to its baseline in the same run, as ratios.

(a) ``features``: HalfKP extraction from FENs of every position of the fixture games -
    ``engines.nnue.features.halfkp_batch`` against the python-chess reference
    (``chess.Board(fen)`` then ``halfkp_reference``). Target: >= 20x.
(b) ``nps``: nodes per second of the alpha-beta search with ``--eval nnue`` against
    ``--eval hce`` on the Bratko-Kopec positions at the same fixed depth, one after the other
    per position (so machine load hits both alike). Target: >= 0.4.

The network is a random one (fixed seed) unless ``--net`` names a ``chesslab NNUE v1`` file;
its values change the tree but not the cost of a node.

    .venv/bin/python benchmarks/nnue.py [--parts features,nps] [--rounds 3] [--depth 7]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import chess
import chess.pgn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engines.alphabeta import AlphaBeta, SearchConfig  # noqa: E402
from engines.nnue.features import halfkp_batch  # noqa: E402
from engines.nnue.netfile import random_arrays, save_arrays  # noqa: E402
from engines.nnue.reference import halfkp_reference  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
GAMES = (FIXTURES / "core_games.pgn", FIXTURES / "label_engines" / "selfplay.pgn")
SUITE = FIXTURES / "epd" / "bratko_kopec.epd"


def game_fens() -> list[str]:
    """Every position of the fixture games, as FENs."""
    fens = []
    for path in GAMES:
        with open(path) as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                board = game.board()
                fens.append(board.fen())
                for move in game.mainline_moves():
                    board.push(move)
                    fens.append(board.fen())
    return fens


def seconds(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def run_features(rounds: int) -> float:
    """Positions per second of both extractors, alternating which goes first per round."""
    fens = game_fens()
    baseline = lambda: [halfkp_reference(chess.Board(fen)) for fen in fens]  # noqa: E731
    compiled = lambda: halfkp_batch(fens)  # noqa: E731
    total = {"python-chess": 0.0, "halfkp_batch": 0.0}
    for i in range(rounds):
        order = [("python-chess", baseline), ("halfkp_batch", compiled)]
        for name, work in order if i % 2 == 0 else order[::-1]:
            total[name] += seconds(work)
    rates = {name: rounds * len(fens) / t for name, t in total.items()}
    ratio = rates["halfkp_batch"] / rates["python-chess"]
    print(f"features: {len(fens)} positions x {rounds} rounds")
    for name, rate in rates.items():
        print(f"  {name:<14}{rate:>14,.0f} positions/s")
    print(f"  ratio {ratio:.1f}x (target >= 20x)")
    return ratio


def suite_boards() -> list[chess.Board]:
    return [chess.Board.from_epd(line)[0] for line in SUITE.read_text().splitlines() if line]


def search_nodes(config: SearchConfig, board: chess.Board, depth: int) -> tuple[int, float]:
    engine = AlphaBeta(config)
    start = time.perf_counter()
    result = engine.best_move(board, depth)
    return result.nodes, time.perf_counter() - start


def run_nps(net_path: Path, depth: int) -> float:
    """Nodes per second of nnue and hce over the suite, alternating the order per position."""
    configs = {"hce": SearchConfig(eval="hce"),
               "nnue": SearchConfig(eval="nnue", nnue_path=str(net_path))}
    totals = {name: [0, 0.0] for name in configs}
    print(f"nps: Bratko-Kopec, depth {depth}")
    print(f"  {'position':<10}{'hce nps':>12}{'nnue nps':>12}{'ratio':>8}")
    for i, board in enumerate(suite_boards()):
        names = list(configs) if i % 2 == 0 else list(configs)[::-1]
        rates = {}
        for name in names:
            nodes, elapsed = search_nodes(configs[name], board, depth)
            totals[name][0] += nodes
            totals[name][1] += elapsed
            rates[name] = nodes / elapsed
        print(f"  BK.{i + 1:02d}     {rates['hce']:>12,.0f}{rates['nnue']:>12,.0f}"
              f"{rates['nnue'] / rates['hce']:>8.2f}")
    nps = {name: nodes / elapsed for name, (nodes, elapsed) in totals.items()}
    ratio = nps["nnue"] / nps["hce"]
    print(f"  all       {nps['hce']:>12,.0f}{nps['nnue']:>12,.0f}{ratio:>8.2f} (target >= 0.4)")
    return ratio


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="features,nps", help="features, nps (default: both)")
    parser.add_argument("--rounds", type=int, default=3, help="feature extraction rounds")
    parser.add_argument("--depth", type=int, default=7, help="search depth of the nps part")
    parser.add_argument("--net", type=Path, help="a chesslab NNUE v1 .npz (default: random)")
    args = parser.parse_args(argv)
    parts = set(args.parts.split(","))
    if "features" in parts:
        run_features(args.rounds)
    if "nps" in parts:
        with tempfile.TemporaryDirectory() as folder:
            net = args.net
            if net is None:
                net = Path(folder) / "random.npz"
                save_arrays(net, random_arrays(seed=1))
            run_nps(net, args.depth)
    return 0


if __name__ == "__main__":
    sys.exit(main())
