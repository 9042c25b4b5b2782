#!/usr/bin/env python3
"""NNUE speed, each contender next to its baseline in the same run, as ratios.

(a) ``features``: HalfKP extraction from FENs of every position of the fixture games -
    ``engines.nnue.features.halfkp_batch`` against the python-chess reference
    (``chess.Board(fen)`` then ``halfkp_reference``). Target: >= 20x.
(b) ``nps``: nodes per second of the alpha-beta search with ``--eval nnue`` against
    ``--eval hce`` on the Bratko-Kopec positions at the same fixed depth, one after the other
    per position (so machine load hits both alike). Target: >= 0.4. ``--kernels`` adds the
    network on each slower SIMD path this CPU has (AVX2 without VNNI, SSE), same tree.

    ``--arch`` picks the networks (issue 38): ``halfkp`` (41024 -> 256x2 -> 32 -> 32 -> 1) and
    ``psq768`` (768 -> N x2 -> 1, ``--hidden N``, ``--activation``), each its own column and
    ratio to the hce; the kernels columns use the first.
The networks are random ones (fixed seed) unless ``--net`` names a ``chesslab NNUE v1`` file
(then the only network); their values change the tree but not the cost of a node.

    .venv/bin/python benchmarks/nnue.py [--parts features,nps] [--rounds 3] [--depth 7] [--kernels]
        [--arch halfkp,psq768] [--hidden 256] [--activation screlu]
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
from engines.nnue.netfile import (  # noqa: E402
    random_arrays,
    random_psq_arrays,
    save_arrays,
    save_psq,
)
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


def run_nps(nets: dict[str, Path], depth: int, kernels: bool = False) -> dict[str, float]:
    """Nodes per second of each net and the hce over the suite, rotating the order per
    position; returns each net's ratio to the hce. The first net is "nnue"."""
    nnue = SearchConfig(eval="nnue", nnue_path=str(next(iter(nets.values()))))
    first = next(iter(nets))
    configs = {"hce": (SearchConfig(eval="hce"), KERNELS["nnue"]),
               "nnue": (nnue, KERNELS["nnue"])}
    configs.update({name: (SearchConfig(eval="nnue", nnue_path=str(path)), KERNELS["nnue"])
                    for name, path in list(nets.items())[1:]})
    if kernels:
        levels: dict[int, str] = {}
        for name, simd in KERNELS.items():
            levels.setdefault(use_simd(*simd), name)     # one name per path this CPU has
        configs.update({name: (nnue, KERNELS[name]) for name in levels.values()
                        if name != "nnue"})
    totals = {name: [0, 0.0] for name in configs}
    print(f"nps: Bratko-Kopec, depth {depth}; nnue is {first}; "
          f"columns {', '.join(list(configs)[1:])}")
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
          f"{ratio:>10.2f} (target >= 0.9)")
    ratios = {first: ratio}
    for name in list(configs)[2:]:
        if name in nets:
            ratios[name] = nps[name] / nps["hce"]
            print(f"  {name} / hce: {ratios[name]:.2f} (target for psq768-256: >= 0.8)")
        else:
            print(f"  nnue / {name}: {nps['nnue'] / nps[name]:.2f}")
    return ratios


def random_nets(folder: Path, archs: list[str], hidden: int,
                activation: str) -> dict[str, Path]:
    """Random nets (fixed seeds) of each architecture, by column name."""
    nets = {}
    for arch in archs:
        if arch == "halfkp":
            nets[arch] = folder / "halfkp.npz"
            save_arrays(nets[arch], random_arrays(seed=1))
        elif arch == "psq768":
            name = f"psq768-{hidden}"
            nets[name] = folder / f"{name}.npz"
            save_psq(nets[name], random_psq_arrays(1, hidden), activation)
        else:
            raise SystemExit(f"--arch: halfkp or psq768, got {arch!r}")
    return nets


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="features,nps", help="features, nps (default: both)")
    parser.add_argument("--rounds", type=int, default=3, help="feature extraction rounds")
    parser.add_argument("--depth", type=int, default=7, help="search depth of the nps part")
    parser.add_argument("--net", type=Path, help="a chesslab NNUE v1 .npz (default: random)")
    parser.add_argument("--arch", default="halfkp,psq768",
                        help="nets of the nps part: halfkp, psq768 (default: both)")
    parser.add_argument("--hidden", type=int, default=256, help="psq768's N")
    parser.add_argument("--activation", default="screlu", help="psq768's: crelu or screlu")
    parser.add_argument("--kernels", action="store_true",
                        help="nps part: also the slower SIMD paths of this CPU")
    args = parser.parse_args(argv)
    parts = set(args.parts.split(","))
    if "features" in parts:
        run_features(args.rounds)
    if "nps" in parts:
        with tempfile.TemporaryDirectory() as folder:
            nets = {"net": args.net} if args.net else random_nets(
                Path(folder), args.arch.split(","), args.hidden, args.activation)
            run_nps(nets, args.depth, args.kernels)
    return 0


if __name__ == "__main__":
    sys.exit(main())
