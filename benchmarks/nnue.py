#!/usr/bin/env python3
"""NNUE speed, each contender next to its baseline in the same run, as ratios.

(a) ``features``: HalfKP extraction from FENs of every position of the fixture games -
    ``engines.nnue.features.halfkp_batch`` against the python-chess reference
    (``chess.Board(fen)`` then ``halfkp_reference``). Target: >= 20x.
(b) ``nps``: nodes per second of the alpha-beta search with ``--eval nnue`` against
    ``--eval hce`` on the Bratko-Kopec positions at the same fixed depth, one after the other
    per position (so machine load hits both alike). Target: >= 0.4. ``--kernels`` adds the
    network on each slower SIMD path this CPU has (AVX2 without VNNI, SSE), same tree.

The network is a random one (fixed seed) unless ``--net`` names a ``chesslab NNUE v1`` file;
its values change the tree but not the cost of a node.

    .venv/bin/python benchmarks/nnue.py [--parts features,nps] [--rounds 3] [--depth 7] [--kernels]
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
from engines.nnue.network import use_simd  # noqa: E402
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


#: NNUE kernel paths: name -> use_simd arguments (the first is the engine's default).
KERNELS = {"nnue": (True, True), "nnue avx2": (True, False), "nnue sse": (False, False)}


def search_nodes(config: SearchConfig, board: chess.Board, depth: int,
                 simd: tuple[bool, bool] = (True, True)) -> tuple[int, float]:
    use_simd(*simd)
    engine = AlphaBeta(config)
    start = time.perf_counter()
    result = engine.best_move(board, depth)
    return result.nodes, time.perf_counter() - start


def run_nps(net_path: Path, depth: int, kernels: bool = False) -> float:
    """Nodes per second of nnue and hce over the suite, rotating the order per position."""
    nnue = SearchConfig(eval="nnue", nnue_path=str(net_path))
    configs = {"hce": (SearchConfig(eval="hce"), KERNELS["nnue"]),
               "nnue": (nnue, KERNELS["nnue"])}
    if kernels:
        levels: dict[int, str] = {}
        for name, simd in KERNELS.items():
            levels.setdefault(use_simd(*simd), name)     # one name per path this CPU has
        configs.update({name: (nnue, KERNELS[name]) for name in levels.values()
                        if name != "nnue"})
    totals = {name: [0, 0.0] for name in configs}
    print(f"nps: Bratko-Kopec, depth {depth}; kernels {', '.join(list(configs)[1:])}")
    print(f"  {'position':<10}" + "".join(f"{name + ' nps':>15}" for name in configs) +
          f"{'nnue/hce':>10}")
    for i, board in enumerate(suite_boards()):
        names = list(configs)
        names = names[i % len(names):] + names[:i % len(names)]
        rates = {}
        for name in names:
            config, simd = configs[name]
            nodes, elapsed = search_nodes(config, board, depth, simd)
            totals[name][0] += nodes
            totals[name][1] += elapsed
            rates[name] = nodes / elapsed
        print(f"  BK.{i + 1:02d}     " + "".join(f"{rates[n]:>15,.0f}" for n in configs) +
              f"{rates['nnue'] / rates['hce']:>10.2f}")
    use_simd(*KERNELS["nnue"])
    nps = {name: nodes / elapsed for name, (nodes, elapsed) in totals.items()}
    ratio = nps["nnue"] / nps["hce"]
    print("  all       " + "".join(f"{nps[n]:>15,.0f}" for n in configs) +
          f"{ratio:>10.2f} (target >= 0.4)")
    for name in list(configs)[2:]:
        print(f"  nnue / {name}: {nps['nnue'] / nps[name]:.2f}")
    return ratio


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="features,nps", help="features, nps (default: both)")
    parser.add_argument("--rounds", type=int, default=3, help="feature extraction rounds")
    parser.add_argument("--depth", type=int, default=7, help="search depth of the nps part")
    parser.add_argument("--net", type=Path, help="a chesslab NNUE v1 .npz (default: random)")
    parser.add_argument("--kernels", action="store_true",
                        help="nps part: also the slower SIMD paths of this CPU")
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
            run_nps(net, args.depth, args.kernels)
    return 0


if __name__ == "__main__":
    sys.exit(main())
