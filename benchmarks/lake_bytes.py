#!/usr/bin/env python3
"""Bytes on disk per ply: the lake beside the ``.pgn.zst`` it came from (issue 51 §1).

Each corpus is ingested by ``chesslab ingest`` (one worker) into a fresh home, measured,
compacted with ``compact --retain-hours 0`` (which also keeps the derived tables) and
measured again. Every byte under ``lake/`` is counted, by table and kind: the Parquet data
(and in it each column's compressed bytes, summed over files and row groups; ``(footer)`` is
the rest of the files: footers, page indexes), the Delta log, the key index
(``_chesslab_keys``), the derived tables (``_derived``), staging leftovers. The figures are
printed per ply and as a multiple of the ``.pgn.zst``'s size.

Corpora (made once, seeded, cached in ``benchmarks/out/``):

- ``sample``: ``data/sample/games.pgn.zst`` (400 Stockfish games, ``[%eval]`` and ``[%clk]``
  on every ply);
- ``lichess``: ``--games`` games (default 20,000) written as Lichess exports them: its tags
  (UTCDate, UTCTime, rating diffs, ECO and opening), ``[%clk]`` on every move from the time
  control (whole seconds), and ``[%eval]`` on every move of 6% of the games (Lichess's
  analysed share). A game opens with the first 2-16 plies of a sample game (shared openings,
  as real games share them), then plays random legal moves (a capture or promotion with
  probability 0.35 when there is one), 20-160 plies in all.

After compact, typical queries over the home (QUERIES: every position's facts, the
``[%eval]`` annotations as NNUE examples, where a position was played, games per player, a
key range of position_facts) are timed, each on a fresh connection, twice (the second run's
wall and CPU seconds are printed; their answers are compared across trees).

With ``--baseline TREE`` (another built checkout, e.g. a detached worktree of main) each
corpus is also measured with that tree's code, each run in its own process, in the same run,
so the ratios hold on a shared machine; the ingest's and compact's CPU seconds are printed
beside the bytes.

    .venv/bin/python benchmarks/lake_bytes.py [--games 20000] [--baseline /tmp/main-tree]
"""
from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

OUT = Path(__file__).parent / "out"
ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "sample" / "games.pgn.zst"
EVAL_SHARE = 0.06
TIME_CONTROLS = (("60+0", 60, 0), ("180+0", 180, 0), ("180+2", 180, 2), ("300+0", 300, 0),
                 ("300+3", 300, 3), ("600+0", 600, 0), ("600+5", 600, 5))
VALUES = {"p": 100, "n": 300, "b": 320, "r": 500, "q": 900}


def sample_openings() -> list[list[str]]:
    """The SAN moves of each sample game's main line (the openings' source)."""
    import chess.pgn
    import zstandard

    with open(SAMPLE, "rb") as raw:
        text = zstandard.ZstdDecompressor().stream_reader(raw).read().decode()
    games, handle = [], io.StringIO(text)
    while (game := chess.pgn.read_game(handle)) is not None:
        if "FEN" in game.headers:
            continue
        board, sans = game.board(), []
        for move in game.mainline_moves():
            sans.append(board.san(move))
            board.push(move)
        games.append(sans)
    return games


def clock_text(seconds: int) -> str:
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def material(fen: str) -> int:
    board = fen.split(" ", 1)[0]
    return sum(VALUES.get(c.lower(), 0) * (1 if c.isupper() else -1) for c in board)


def lichess_game(rng: random.Random, number: int, openings: list[list[str]]) -> str:
    """One game as Lichess exports it (tags, clocks; evals in EVAL_SHARE of the games)."""
    from engines.core import CoreBoard

    board = CoreBoard()
    opening = rng.choice(openings)[:rng.randint(2, 16)]
    plies = rng.randint(max(20, len(opening)), 160)
    control, base, increment = rng.choice(TIME_CONTROLS)
    clocks = [base, base]
    analysed = rng.random() < EVAL_SHARE
    score = 20.0
    moves = []
    while len(board) < plies:
        if len(board) < len(opening):
            san = opening[len(board)]
            move = board.parse_san(san)
        else:
            legal = board.legal_moves()
            if not legal:
                break
            noisy = board.noisy_moves() if rng.random() < 0.35 else []
            move = rng.choice(noisy or legal)
            san = board.san(move)
        white = board.turn
        number_text = f"{len(board) // 2 + 1}." if white else f"{len(board) // 2 + 1}..."
        board.push(move)
        side = 0 if white else 1
        spent = min(clocks[side] - 1, int(rng.expovariate(40 / base))) if clocks[side] > 1 else 0
        clocks[side] = clocks[side] - spent + increment
        comment = f"[%clk {clock_text(clocks[side])}]"
        if analysed:
            score = 0.8 * score + 0.2 * material(board.fen()) + rng.gauss(0, 30)
            comment = f"[%eval {score / 100:.2f}] {comment}"
        moves.append(f"{number_text} {san} {{ {comment} }}")
        if board.is_game_over():
            break
    if board.is_checkmate():
        result = "0-1" if board.turn else "1-0"
    elif board.is_game_over():
        result = "1/2-1/2"
    else:
        result = rng.choice(("1-0", "0-1", "1/2-1/2"))
    white_elo, black_elo = rng.randint(800, 2800), rng.randint(800, 2800)
    day = 1 + number % 28
    tags = {"Event": "Rated Blitz game", "Site": f"https://lichess.org/{number:08x}",
            "Date": f"2024.01.{day:02d}", "Round": "-",
            "White": f"player{int(20000 ** rng.random()):05d}",
            "Black": f"player{int(20000 ** rng.random()):05d}", "Result": result,
            "UTCDate": f"2024.01.{day:02d}",
            "UTCTime": f"{rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}",
            "WhiteElo": str(white_elo), "BlackElo": str(black_elo),
            "WhiteRatingDiff": f"{rng.randint(-9, 9):+d}",
            "BlackRatingDiff": f"{rng.randint(-9, 9):+d}",
            "ECO": f"{rng.choice('ABCDE')}{rng.randrange(100):02d}", "Opening": "Random",
            "TimeControl": control, "Termination": "Normal"}
    header = "".join(f'[{k} "{v}"]\n' for k, v in tags.items())
    return f"{header}\n{' '.join(moves)} {result}\n\n"


def make_lichess_corpus(games: int, seed: int = 51) -> Path:
    """The Lichess-like corpus as ``.pgn.zst`` (zstd level 3, as Lichess compresses), made
    once."""
    import zstandard

    path = OUT / f"lichess_like_{games}_{seed}.pgn.zst"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        rng, openings = random.Random(seed), sample_openings()
        began = time.monotonic()
        text = "".join(lichess_game(rng, n, openings) for n in range(games))
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(zstandard.ZstdCompressor(level=3).compress(text.encode()))
        tmp.rename(path)
        print(f"made {path} ({games} games, {len(text) / 1e6:.0f} MB of PGN, "
              f"{path.stat().st_size / 1e6:.1f} MB) in {time.monotonic() - began:.0f} s",
              flush=True)
    return path


QUERIES = (
    ("position_facts, every position",
     "select count(*), count(game_id), count(*) filter (where side_to_move = 'w'), "
     "sum(hash(fen) % 1000) from position_facts", None),
    ("nnue_examples ([%eval] annotations)",
     "select count(*), sum(score_cp), count(result), count(distinct split_key) "
     "from nnue_examples", None),
    ("where a position was played",
     "select count(*), count(distinct m.game_id) from moves m join positions p "
     "using (position_key) where p.fen like '%/8/8/8/8/%'", None),
    ("games per player",
     "select white, count(*) from games group by white order by 2 desc, 1 limit 20", None),
    ("position_facts of a key range (1/16)",
     f"select count(*), sum(hash(fen) % 1000) from position_facts "
     f"where position_key between {3 << 60} and {(4 << 60) - 1}",
     (3 << 60, (4 << 60) - 1)),
)


def time_queries(home: Path) -> dict[str, Any]:
    """Each of QUERIES on a fresh connection, twice: the second run's wall and CPU
    seconds, and its answer."""
    from warehouse import connect

    times = {}
    for name, sql, key_range in QUERIES:
        for _ in range(2):
            began, cpu = time.perf_counter(), time.process_time()
            con = connect(home, key_range=key_range) if key_range else connect(home)
            answer = con.sql(sql).fetchall()
            con.close()
            seconds = (time.perf_counter() - began, time.process_time() - cpu)
        times[name] = {"seconds": seconds, "answer": repr(answer)}
    return times


def lake_bytes(home: Path) -> dict[str, Any]:
    """Every byte under ``home/lake``: by (table, kind) and by (table, column)."""
    import pyarrow.parquet as pq

    kinds: Counter[str] = Counter()
    columns: Counter[str] = Counter()
    rows: Counter[str] = Counter()
    root = home / "lake"
    for path in root.rglob("*"):
        if not path.is_file():
            continue
        parts = path.relative_to(root).parts
        table = parts[0] if parts[0] != "_derived" else f"_derived/{parts[1]}"
        size = path.stat().st_size
        if "_delta_log" in parts:
            kind = "log"
        elif "_chesslab_keys" in parts:
            kind = "key index"
        elif "_staging" in parts:
            kind = "staging"
        elif path.suffix == ".parquet":
            kind = "parquet"
            meta = pq.ParquetFile(path).metadata
            rows[table] += meta.num_rows
            in_columns = 0
            for group in range(meta.num_row_groups):
                for index in range(meta.num_columns):
                    chunk = meta.row_group(group).column(index)
                    columns[f"{table}.{chunk.path_in_schema}"] += chunk.total_compressed_size
                    in_columns += chunk.total_compressed_size
            columns[f"{table}.(footer)"] += size - in_columns
        else:
            kind = "other"
        kinds[f"{table}:{kind}"] += size
    return {"total": sum(kinds.values()), "kinds": dict(kinds), "columns": dict(columns),
            "rows": dict(rows)}


def child(corpus: Path, keep: Path | None) -> None:
    """Ingest ``corpus`` into a fresh home (one worker), measure, compact, measure: JSON."""
    from flows.ingest import INGEST, IngestJob
    from flows.step import run_step
    from pipelines.ingest import IngestConfig
    from warehouse import Lake
    try:
        from warehouse.refresh import compact_lake
    except ImportError:
        compact_lake = None     # type: ignore[assignment]

    home = keep or Path(tempfile.mkdtemp(prefix="chesslab-bytes-"))
    try:
        lake = Lake(home)
        began, cpu = time.perf_counter(), time.process_time()
        [summary] = run_step(INGEST, IngestJob((corpus,), IngestConfig(workers=1)), lake)
        ingest = (time.perf_counter() - began, time.process_time() - cpu)
        after_ingest = lake_bytes(home)
        began, cpu = time.perf_counter(), time.process_time()
        if compact_lake is not None:
            compact_lake(lake, retain_hours=0)
        else:   # a baseline tree from before compact_lake
            from warehouse.refresh import refresh
            from warehouse.tables import REGISTRY

            for name in REGISTRY:
                lake.compact(name, retain_hours=0)
            refresh(lake)
        compact = (time.perf_counter() - began, time.process_time() - cpu)
        after_compact = lake_bytes(home)
        print(json.dumps({"plies": summary.plies, "games": summary.games,
                          "positions": summary.new_positions, "ingest": ingest,
                          "compact": compact, "after ingest": after_ingest,
                          "after compact": after_compact, "queries": time_queries(home)}))
    finally:
        if keep is None:
            shutil.rmtree(home, ignore_errors=True)


def measure(tree: Path, corpus: Path) -> dict[str, Any]:
    """:func:`child` with ``tree``'s code, in its own process."""
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child",
                           str(corpus)], cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)},
                          check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def report(name: str, corpus: Path, runs: dict[str, dict[str, Any]]) -> None:
    source = corpus.stat().st_size
    first = next(iter(runs.values()))
    plies = first["plies"]
    print(f"\n== {name}: {corpus.name}, {source:,} bytes, {first['games']} games, {plies:,} "
          f"plies, {first['positions']:,} positions ({source / plies:.2f} B/ply)")
    for code, run in runs.items():
        print(f"{code}: ingest {run['ingest'][0]:.2f} s ({run['ingest'][1]:.2f} CPU s), compact "
              f"{run['compact'][0]:.2f} s ({run['compact'][1]:.2f} CPU s)")
    print("queries after compact, second run of each (wall s, CPU s of this process):")
    for name, *_ in QUERIES:
        cells = "  ".join(f"{code} {run['queries'][name]['seconds'][0]:.2f} s "
                          f"({run['queries'][name]['seconds'][1]:.2f} CPU s)"
                          for code, run in runs.items())
        same = len({run["queries"][name]["answer"] for run in runs.values()}) == 1
        print(f"  {name:40} {cells}{'' if same else '  ANSWERS DIFFER'}")
    for when in ("after ingest", "after compact"):
        print(f"\n{when}:  " + "  ".join(
            f"{code} {run[when]['total']:,} B = {run[when]['total'] / plies:.2f} B/ply = "
            f"{run[when]['total'] / source:.2f}x" for code, run in runs.items()))
        for section in ("kinds", "columns"):
            names = sorted({k for run in runs.values() for k in run[when][section]})
            for key in names:
                if max(run[when][section].get(key, 0) for run in runs.values()) < plies / 100:
                    continue    # under 0.01 byte a ply in every tree
                cells = "".join(f" {run[when][section].get(key, 0):>11,} "
                                f"{run[when][section].get(key, 0) / plies:6.2f}"
                                for run in runs.values())
                print(f"  {key:36}{cells}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20_000)
    parser.add_argument("--corpora", default="sample,lichess")
    parser.add_argument("--baseline", type=Path, help="a built checkout to compare with")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--keep", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child.resolve(), args.keep)
        return
    corpora = {"sample": SAMPLE}
    if "lichess" in args.corpora.split(","):
        corpora["lichess"] = make_lichess_corpus(args.games)
    trees = [("new", ROOT)] + ([("old", args.baseline.resolve())] if args.baseline else [])
    for name, corpus in corpora.items():
        if name not in args.corpora.split(","):
            continue
        runs = {code: measure(tree, corpus) for code, tree in trees[::-1]}
        report(name, corpus, runs)


if __name__ == "__main__":
    main()
