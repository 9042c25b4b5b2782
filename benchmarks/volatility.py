#!/usr/bin/env python3
"""Volatility classifier speeds, each against its baseline in the same run, as ratios.

(a) ``features``: the 774 inputs of many positions from their FENs - the numpy encoder
    (engines.volatility.features, a string scan per FEN and one scatter) against a
    python-chess loop (Board, mirror, piece_map, castling rights per position). Decides
    whether a compiled encoder is worth it: training spends this per example per epoch.
(b) ``decision``: one engine decision (features + the dense 2x50 net in numpy, what
    algorithm 2 costs once per move) against a depth-1 alpha-beta search of the same
    position, the cheapest search step it sits next to.

    .venv/bin/python benchmarks/volatility.py [--positions 20000] [--decisions 500]
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import chess
import chess.pgn
import numpy as np
import torch

from engines.alphabeta import AlphaBeta, SearchConfig
from engines.volatility.features import INPUTS, features
from engines.volatility.model import FORMAT, load_model
from pipelines.kinds.volatility.module import DenseNet, export_arrays
from pipelines.train.artifacts import save_npz

GAMES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "label_engines" \
    / "selfplay.pgn"


def fens(count: int) -> list[str]:
    found: list[str] = []
    with open(GAMES, encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            board = game.board()
            for move in game.mainline_moves():
                board.push(move)
                found.append(board.fen())
    return (found * (count // len(found) + 1))[:count]


def python_chess_features(fen: str) -> np.ndarray:
    board = chess.Board(fen)
    seen = board if board.turn == chess.WHITE else board.mirror()
    x = np.zeros(INPUTS, dtype=np.float32)
    for square, piece in seen.piece_map().items():
        x[(piece.piece_type - 1 + (0 if piece.color else 6)) * 64 + square] = 1
    x[768:772] = [seen.has_kingside_castling_rights(chess.WHITE),
                  seen.has_queenside_castling_rights(chess.WHITE),
                  seen.has_kingside_castling_rights(chess.BLACK),
                  seen.has_queenside_castling_rights(chess.BLACK)]
    return x


def timed(function, *args):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - start


def bench_features(count: int) -> dict[str, float]:
    positions = fens(count)
    zeros, flags = [0] * count, [False] * count
    ours, ours_s = timed(features, positions, zeros, flags)
    theirs, theirs_s = timed(lambda: np.stack([python_chess_features(f) for f in positions]))
    assert np.array_equal(ours[:, :772], theirs[:, :772])
    return {"positions": count, "numpy_per_s": count / ours_s,
            "python_chess_per_s": count / theirs_s, "ratio": theirs_s / ours_s}


def bench_decision(count: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        torch.manual_seed(0)
        meta = {"format": FORMAT, "version": 1, "arch": "dense", "width": 50, "inputs": INPUTS,
                "delta_scale": 0.01, "beta": 18.0, "target_fpr": 0.005, "threshold": 0.76}
        path = save_npz({"meta": np.array(json.dumps(meta)), **export_arrays(DenseNet(50, INPUTS))},
                        Path(folder) / "v.npz")
        model = load_model(str(path))
    boards = [chess.Board(f) for f in fens(count)]
    _, net_s = timed(lambda: [model.stability(b, 10, False, 30) for b in boards])
    search = AlphaBeta(SearchConfig(hash_mb=4))
    _, search_s = timed(lambda: [list(search.iterate(b, max_depth=1)) for b in boards])
    return {"decisions": count, "net_ms": 1000 * net_s / count,
            "depth1_search_ms": 1000 * search_s / count, "ratio": net_s / search_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=20_000)
    parser.add_argument("--decisions", type=int, default=500)
    args = parser.parse_args()
    features_figures = bench_features(args.positions)
    print(f"features: numpy {features_figures['numpy_per_s']:,.0f}/s, python-chess "
          f"{features_figures['python_chess_per_s']:,.0f}/s: "
          f"{features_figures['ratio']:.1f}x")
    decision = bench_decision(args.decisions)
    print(f"decision: net {decision['net_ms']:.3f} ms, depth-1 search "
          f"{decision['depth1_search_ms']:.3f} ms: net/search = {decision['ratio']:.2f}")


if __name__ == "__main__":
    main()
