#!/usr/bin/env python3
"""Annotated engine-vs-itself games for training data, on a machine without chesslab.

A UCI engine (Stockfish, say) plays itself to a fixed depth from varied starts (``--random-plies``
random legal plies from the start position), on ``--workers`` processes, and every position
it searched is annotated with that search's score the way Lichess annotates its analysed
games: ``{[%eval 0.35,8]}`` after a move is the evaluation of the position the move reached,
White's view, with the depth after the comma. It needs only python-chess and the engine
binary, so it runs on a bare many-core machine; the games then go through the ordinary path
on the warehouse's machine, and the annotations become training labels there:

    python3 scripts/engine_games.py --engine /usr/games/stockfish --depth 8 --minutes 8 \
        --workers 16 --seed 1 --out games/
    chesslab ingest games/sf-d8-s1-w*.pgn.gz
    chesslab train nnue --label-engine "pgn:Stockfish 15.1 depth 8" --label-depth 8

(``chesslab datagen`` plays the same games with chesslab installed, on its games runner: a
local or remote Dask cluster, PGN batches ingested as they come; ``chesslab selfplay
--engine stockfish`` writes games straight into the warehouse.) Game ``g`` of seed ``s`` always starts from the same
random plies. A game ends by the rules, by adjudication when one side's score stays at
``--resign`` centipawns or more for 4 plies (or a mate is found), as a draw when both
scores stay within 10 cp for 12 plies after move 40, or at ``--max-plies`` (result ``*``).
Each worker writes whole games to its own gzip file as it goes; ``--minutes`` stops workers
between games, so a run cut short loses at most the games in progress.
"""
from __future__ import annotations

import argparse
import gzip
import multiprocessing
import sys
import time
from pathlib import Path

# the games themselves are chesslab's (``chesslab datagen`` plays the same ones on its games
# runner); pipelines.datagen.games needs only python-chess, so a bare machine with this
# checkout runs this script
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pipelines.datagen.games import GameSettings, UciSearcher, play_game, to_pgn  # noqa: E402


def settings_of(args: argparse.Namespace) -> GameSettings:
    return GameSettings(args.depth, args.random_plies, args.seed, args.resign, args.max_plies)


def worker(rank: int, args: argparse.Namespace, deadline: float) -> tuple[int, int]:
    """Play games rank, rank + workers, ... until the deadline; append each to its file."""
    out = Path(args.out) / f"{args.prefix}-w{rank:02d}.pgn.gz"
    games = plies = 0
    searcher = UciSearcher(args.engine, args.hash)
    name = searcher.name or Path(args.engine).name
    try:
        index = rank
        while time.time() < deadline and (args.games is None or index < args.games):
            game = to_pgn(play_game(searcher, index, settings_of(args)), name,
                          settings_of(args))
            with gzip.open(out, "at") as f:  # one gzip member per game: a kill loses one game
                print(game, file=f, end="\n\n")
            games += 1
            plies += len(list(game.mainline_moves()))
            index += args.workers
    finally:
        searcher.close()
    return games, plies


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--engine", required=True, help="the UCI engine binary")
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--random-plies", type=int, default=8)
    parser.add_argument("--games", type=int, help="stop after this many games in all")
    parser.add_argument("--minutes", type=float, default=60.0, help="stop starting games then")
    parser.add_argument("--workers", type=int, default=multiprocessing.cpu_count())
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--resign", type=int, default=1000, help="adjudication score, cp")
    parser.add_argument("--max-plies", type=int, default=400)
    parser.add_argument("--hash", type=int, default=16, help="MB per engine")
    parser.add_argument("--out", required=True)
    parser.add_argument("--prefix", help="file name prefix (default: sf-dDEPTH-sSEED)")
    args = parser.parse_args(argv)
    args.prefix = args.prefix or f"sf-d{args.depth}-s{args.seed}"
    Path(args.out).mkdir(parents=True, exist_ok=True)
    start = time.time()
    deadline = start + 60.0 * args.minutes
    with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
        done = pool.starmap(worker, [(rank, args, deadline) for rank in range(args.workers)])
    games, plies = sum(g for g, _ in done), sum(p for _, p in done)
    seconds = time.time() - start
    print(f"engine_games: {games} games, {plies} plies in {seconds:.0f} s "
          f"({plies / seconds:.0f} plies/s) on {args.workers} workers -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
