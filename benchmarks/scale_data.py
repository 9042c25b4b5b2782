"""Generated data for ``benchmarks/scale.py``: random legal games, written once and cached.

Games are played by the compiled core (``CoreBoard``), seeded per game, so a data set is the
same on every machine whatever the number of worker processes. A move is a capture or
promotion with probability 0.35 when there is one (games trade material as real ones do),
otherwise any legal move; a game ends at mate, stalemate or its drawn length (20-160 plies).
Players come from a pool with a skewed (Zipf-like) number of games each.

The first occurrence of each position (by Polyglot key) gets three labels, written as:

- ``evals.jsonl``: the Lichess evaluation database's JSONL, two evals per position (depth 20:
  the move the game played as the best move; depth 12: the same move 70% of the time, another
  legal move otherwise), scores from material plus noise, mate in 1 where the game's next
  move mates;
- ``labels.txt``: bullet's ``FEN | score | result`` text (imported under ``--engine-id``);
- ``games.pgn``: every game, with players, Elo, time control and result.

    python benchmarks/scale_data.py --positions 1000000     # prints the folder
"""
from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import os
import random
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engines.core.position import CoreBoard

DATA_ROOT = Path(os.environ.get("CHESSLAB_SCALE_DATA", "/tmp/chesslab_scale_data"))
GAMES_PER_CHUNK = 2000
PLIES_PER_GAME = 88            # the mean of the drawn lengths, less games ending early
PLAYERS = 20_000
VALUES = {"p": 100, "n": 300, "b": 320, "r": 500, "q": 900}
FILES = ("evals.jsonl", "labels.txt", "games.pgn")


@dataclass(frozen=True)
class DataSet:
    """A generated data set's folder and what it holds."""

    folder: Path
    positions: int
    games: int

    def path(self, name: str) -> Path:
        return self.folder / name


def material(fen: str) -> int:
    """White's material minus Black's, centipawns, from the FEN's board field."""
    total = 0
    for char in fen.split(" ", 1)[0]:
        value = VALUES.get(char.lower())
        if value:
            total += value if char.isupper() else -value
    return total


def player(rng: random.Random) -> str:
    """A player from the pool: low numbers play far more games than high ones."""
    return f"player{int(PLAYERS ** rng.random()):05d}"


def play_chunk(args: tuple[int, int, Path]) -> tuple[int, int]:
    """Play games ``GAMES_PER_CHUNK * chunk ...`` and write the chunk's files: one label line
    per ply in each label file, the keys in ``.npy``. Returns (chunk, plies)."""
    seed, chunk, folder = args
    if all((folder / f"chunk{chunk:05d}{suffix}").is_file()    # .pgn written last: whole,
           for suffix in (".pgn", ".npy", ".jsonl", ".txt")):     # unless assembly took a part
        return chunk, len(np.load(folder / f"chunk{chunk:05d}.npy"))
    evals, texts, pgn, keys = [], [], [], []
    for game in range(chunk * GAMES_PER_CHUNK, (chunk + 1) * GAMES_PER_CHUNK):
        rng = random.Random(seed * 1_000_003 + game)
        board, sans, rows = CoreBoard(), [], []
        for _ in range(rng.randrange(20, 161)):
            moves = board.legal_moves()
            if not moves:
                break
            noisy = board.noisy_moves() if rng.random() < 0.35 else []
            move = rng.choice(noisy or moves)
            other = rng.choice(moves)
            rows.append((board.fen(), board.key, move.uci(), other.uci(), board.turn))
            sans.append(board.san(move))
            board.push(move)
        mated = board.is_checkmate()
        if mated:
            result = "0-1" if board.turn else "1-0"
        else:
            balance = material(board.fen()) + rng.gauss(0, 150)
            result = "1-0" if balance > 200 else "0-1" if balance < -200 else "1/2-1/2"
        white_result = {"1-0": "1.0", "0-1": "0.0", "1/2-1/2": "0.5"}[result]
        for ply, (fen, key, best, other, white) in enumerate(rows):
            score = material(fen) + int(rng.gauss(0, 60)) + (15 if white else -15)
            shallow = best if rng.random() < 0.7 else other
            epd = " ".join(fen.split()[:4])
            if mated and ply == len(rows) - 1:
                deep = f'"mate": {1 if white else -1}'
            else:
                deep = f'"cp": {score}'
            evals.append(
                f'{{"fen": "{epd}", "evals": [{{"pvs": [{{{deep}, "line": "{best}"}}], '
                f'"knodes": {rng.randrange(500, 90000)}, "depth": 20}}, {{"pvs": [{{"cp": '
                f'{score + int(rng.gauss(0, 40))}, "line": "{shallow}"}}], "knodes": '
                f'{rng.randrange(5, 500)}, "depth": 12}}]}}\n')
            texts.append(f"{fen} | {score + int(rng.gauss(0, 25))} | {white_result}\n")
            keys.append(key)
        pgn.append(pgn_game(rng, game, sans, result))
    np.save(folder / f"chunk{chunk:05d}.npy", np.array(keys, np.uint64))
    (folder / f"chunk{chunk:05d}.jsonl").write_text("".join(evals))
    (folder / f"chunk{chunk:05d}.txt").write_text("".join(texts))
    (folder / f"chunk{chunk:05d}.pgn").write_text("".join(pgn))
    return chunk, len(keys)


def pgn_game(rng: random.Random, game: int, sans: list[str], result: str) -> str:
    white, black = player(rng), player(rng)
    tags = {"Event": "Rated Blitz game", "Site": f"https://example.org/g{game}",
            "Date": f"2025.{1 + game % 12:02d}.{1 + game % 28:02d}", "Round": "-",
            "White": white, "Black": black, "Result": result,
            "WhiteElo": str(rng.randrange(800, 2800)), "BlackElo": str(rng.randrange(800, 2800)),
            "TimeControl": rng.choice(("180+0", "180+2", "300+0", "600+5"))}
    moves = " ".join(f"{ply // 2 + 1}. {san}" if ply % 2 == 0 else san
                     for ply, san in enumerate(sans))
    head = "".join(f'[{name} "{value}"]\n' for name, value in tags.items())
    return f"{head}\n{moves} {result}\n\n"


def generate(positions: int, seed: int = 1, workers: int = 2,
             root: Path = DATA_ROOT) -> DataSet:
    """The data set of ``positions`` distinct positions (made once, then read from
    ``root``): games are played chunk by chunk until that many distinct positions."""
    folder = root / f"{positions}-seed{seed}"
    done = folder / "done.json"
    if done.is_file():
        meta = json.loads(done.read_text())
        return DataSet(folder, meta["positions"], meta["games"])
    parts = folder / "parts"
    parts.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    chunks, first, keys = 0, np.zeros(0, bool), []
    while int(first.sum()) < positions:    # early plies repeat: play chunks until enough
        wanted = int((positions - int(first.sum())) * 1.06)
        more = -(-wanted // (GAMES_PER_CHUNK * PLIES_PER_GAME))
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            list(pool.imap_unordered(play_chunk, [(seed, c, parts)
                                                  for c in range(chunks, chunks + more)]))
        chunks += more
        keys = [np.load(parts / f"chunk{c:05d}.npy") for c in range(chunks)]
        first = first_occurrences(np.concatenate(keys), positions)
    keep = np.split(first, np.cumsum([len(k) for k in keys])[:-1])
    # each part is removed once copied (the parts are as large as the data set: at 100M
    # positions, keeping them until the end doubled the disk needed); a run killed here
    # plays the removed chunks again (the same games: seeded per game)
    for suffix, name in ((".jsonl", "evals.jsonl"), (".txt", "labels.txt")):
        with open(folder / name, "w") as out:
            for chunk, mask in enumerate(keep):
                part = parts / f"chunk{chunk:05d}{suffix}"
                with open(part) as lines:
                    out.writelines(itertools.compress(lines, mask.tolist()))
                part.unlink()
    with open(folder / "games.pgn", "w") as out:
        for chunk in range(chunks):
            part = parts / f"chunk{chunk:05d}.pgn"
            out.write(part.read_text())
            part.unlink()
    for part in parts.iterdir():
        part.unlink()
    parts.rmdir()
    meta = {"positions": positions, "games": chunks * GAMES_PER_CHUNK, "seed": seed,
            "seconds": round(time.perf_counter() - began, 1)}
    done.write_text(json.dumps(meta))
    return DataSet(folder, positions, meta["games"])


def first_occurrences(keys: np.ndarray, wanted: int) -> np.ndarray:
    """A mask of the first ``wanted`` keys that are each a key's first occurrence."""
    _, first = np.unique(keys, return_index=True)
    mask = np.zeros(len(keys), bool)
    mask[np.sort(first)[:wanted]] = True
    return mask


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    data = generate(args.positions, args.seed, args.workers)
    print(data.folder)


if __name__ == "__main__":
    main()
