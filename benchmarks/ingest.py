#!/usr/bin/env python3
"""Ingest speed: ``chesslab ingest``'s pipeline against a plain python-chess loop, side by side.

The corpus is a multi-thousand-game PGN made once (and cached in ``benchmarks/out/``): games
of random legal moves (so nearly every position is new, the worst case for position dedupe),
written the way Lichess exports them, with tags and ``[%eval]``/``[%clk]`` comments on every
move. The baseline reads it with ``chess.pgn.read_game`` and replays each main line with
``board.push``; ours is the whole ingest (parse, replay, dedupe, Parquet writes) into a fresh
warehouse. Both run in this one process, one after the other, so the ratio is fair on a
shared machine.

    .venv/bin/python benchmarks/ingest.py [--games 4000] [--workers 2] [--pgn FILE]
"""
from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from pathlib import Path

import chess
import chess.pgn

from pipelines.ingest import IngestConfig, ingest_paths
from warehouse import Lake

OUT = Path(__file__).parent / "out"
MAX_PLIES = 120


def random_game(rng: random.Random, number: int) -> str:
    """One game of random legal moves, Lichess-style tags and per-move comments."""
    board = chess.Board()
    moves = []
    clock = 180.0
    plies = rng.randint(40, MAX_PLIES)
    while not board.is_game_over() and len(board.move_stack) < plies:
        move = rng.choice(list(board.legal_moves))
        san = board.san(move)
        board.push(move)
        clock = max(1.0, clock - rng.uniform(0, 4))
        number_text = f"{board.fullmove_number - (board.turn == chess.WHITE)}."
        prefix = number_text if board.turn == chess.BLACK else number_text[:-1] + "..."
        moves.append(f"{prefix} {san} {{ [%eval {rng.uniform(-3, 3):.2f}] "
                     f"[%clk 0:{int(clock) // 60:02d}:{int(clock) % 60:02d}] }}")
    result = board.result()
    tags = {"Event": "Rated Blitz game", "Site": f"https://example.org/{number:08d}",
            "Date": "2024.01.01", "Round": "-", "White": f"player{rng.randint(1, 500)}",
            "Black": f"player{rng.randint(1, 500)}", "Result": result,
            "WhiteElo": str(rng.randint(800, 2800)), "BlackElo": str(rng.randint(800, 2800)),
            "TimeControl": "180+0", "ECO": "A00", "Opening": "Random", "Termination": "Normal"}
    header = "".join(f'[{k} "{v}"]\n' for k, v in tags.items())
    return f"{header}\n{' '.join(moves)} {result}\n\n"


def make_corpus(games: int, seed: int = 7) -> Path:
    path = OUT / f"random_{games}_{seed}.pgn"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        rng = random.Random(seed)
        began = time.monotonic()
        tmp = path.with_suffix(".tmp")
        with open(tmp, "w") as handle:
            for n in range(games):
                handle.write(random_game(rng, n))
        tmp.rename(path)
        print(f"made {path} ({games} games) in {time.monotonic() - began:.0f} s")
    return path


def baseline(path: Path) -> tuple[int, int, float]:
    """(games, positions, seconds): read_game + replay of every main line."""
    began = time.perf_counter()
    games = positions = 0
    with open(path, encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            board = game.board()
            positions += 1
            for move in game.mainline_moves():
                board.push(move)
                positions += 1
            games += 1
    return games, positions, time.perf_counter() - began


def ours(path: Path, workers: int) -> tuple[int, int, float]:
    """(games, positions, seconds): ``ingest_paths`` into a fresh warehouse, Parquet included."""
    home = Path(tempfile.mkdtemp(prefix="chesslab-bench-"))
    try:
        began = time.perf_counter()
        [summary] = ingest_paths(Lake(home), [path], IngestConfig(workers=workers))
        seconds = time.perf_counter() - began
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return summary.games, summary.plies + summary.games, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pgn", type=Path, help="benchmark this PGN instead")
    parser.add_argument("--repeat", type=int, default=2,
                        help="rounds (baseline and ours alternate); the best time of each counts")
    args = parser.parse_args()
    path = args.pgn or make_corpus(args.games)
    runs: dict[str, list[tuple[int, int, float]]] = {}
    names = {"baseline: read_game + push": lambda: baseline(path)}
    for workers in sorted({1, args.workers}):
        names[f"chesslab ingest, workers={workers}"] = lambda w=workers: ours(path, w)
    for _ in range(args.repeat):
        for name, measure in names.items():
            runs.setdefault(name, []).append(measure())
    rows = [(name, *min(results, key=lambda r: r[2])) for name, results in runs.items()]
    base = rows[0]
    print(f"{'':34} {'games':>7} {'positions':>10} {'seconds':>8} {'games/s':>9} "
          f"{'positions/s':>12} {'speed-up':>8}")
    for name, games, positions, seconds in rows:
        print(f"{name:34} {games:7d} {positions:10d} {seconds:8.2f} {games / seconds:9.0f} "
              f"{positions / seconds:12.0f} {base[3] / seconds:7.1f}x")
    if any(r[1] != base[1] or r[2] != base[2] for r in rows):
        print("warning: game or position counts differ from the baseline")


if __name__ == "__main__":
    main()
