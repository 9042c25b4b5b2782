#!/usr/bin/env python3
"""Ingest speed: ``chesslab ingest``'s pipeline against python-chess's read-and-replay, side by side.

The corpus is a PGN of ``--games`` games made once, reproducibly (seeded; cached in
``benchmarks/out/``): games of random legal moves played on the compiled core's board (so
nearly every position is new, the worst case for position dedupe), written the way Lichess
exports them, with its tags and a ``[%eval]`` and ``[%clk]`` comment after every move. The
baseline reads it with ``chess.pgn.read_game`` and replays each main line with ``board.push``;
ours is the whole ingest (read, parse, replay, keys, dedupe, Delta writes) into a fresh
warehouse, on 1 and on each of ``--workers`` workers (``2`` or ``2,4,8``). They run
interleaved, ``--repeat`` rounds in this one process, so the ratios hold on a shared machine;
medians are printed.

``--rss`` measures memory instead: a large ``.pgn.zst`` is made under ``--tmp`` by repeating
the corpus with other ``Site`` tags (every record another game; ``--rss-games`` in all), read
by ``chesslab ingest`` in a child process whose peak memory (the RSS of its largest process,
and the PSS of all its processes together: the workers are sampled too) is printed beside the
same measurement on a file a tenth the size, then deleted.

``--crossover 0.5,1,2,4,8`` measures where the pool starts to pay: files of about those
megabytes of PGN text (whole games cut from the corpus, as it is and with its comments
stripped, which packs more moves into a megabyte), each ingested by a fresh ``chesslab``
process on one worker and on ``--workers``' first count, interleaved, ``--repeat`` rounds;
the medians and their ratio per size (what ``IngestConfig.pool_from_mb`` is chosen from).

``--baseline TREE`` (another built checkout, e.g. a detached worktree of main) measures that
tree's ingest too, in the same interleaved rounds: each ingest (this tree's and the
baseline's) then runs in a child process with its tree's code, so the two are measured
alike. ``--pgn`` benchmarks another file (``.pgn`` or ``.pgn.zst``; the python-chess baseline
reads a ``.pgn`` only, and is left out for a ``.pgn.zst``).

    .venv/bin/python benchmarks/ingest.py [--games 20000] [--workers 2[,4,8]] [--repeat 3]
    .venv/bin/python benchmarks/ingest.py --baseline /tmp/main-tree [--pgn corpus.pgn.zst]
    .venv/bin/python benchmarks/ingest.py --crossover 0.5,1,2,4,8 [--games 10000] [--repeat 2]
    .venv/bin/python benchmarks/ingest.py --rss [--rss-games 600000] [--tmp /tmp]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import chess
import chess.pgn
import zstandard

from engines.core import CoreBoard
from flows.ingest import INGEST, IngestJob
from flows.step import run_step
from pipelines.ingest import IngestConfig
from warehouse import Lake

CHUNK_GAMES = IngestConfig().chunk_games

OUT = Path(__file__).parent / "out"
ROOT = Path(__file__).resolve().parent.parent
MAX_PLIES = 120
Measure = tuple[int, int, float, float]    # games, positions, seconds, CPU seconds


def random_game(rng: random.Random, number: int) -> str:
    """One game of random legal moves, Lichess-style tags and per-move comments."""
    board = CoreBoard()
    moves = []
    clock = 180.0
    plies = rng.randint(40, MAX_PLIES)
    while len(board) < plies and not board.is_game_over():
        move = rng.choice(board.legal_moves())
        san = board.san(move)
        mover_white = board.turn
        move_number = (len(board) // 2) + 1
        board.push(move)
        clock = max(1.0, clock - rng.uniform(0, 4))
        prefix = f"{move_number}." if mover_white else f"{move_number}..."
        moves.append(f"{prefix} {san} {{ [%eval {rng.uniform(-3, 3):.2f}] "
                     f"[%clk 0:{int(clock) // 60:02d}:{int(clock) % 60:02d}] }}")
    result = game_result(board)
    tags = {"Event": "Rated Blitz game", "Site": f"https://example.org/{number:08d}",
            "Date": "2024.01.01", "Round": "-", "White": f"player{rng.randint(1, 500)}",
            "Black": f"player{rng.randint(1, 500)}", "Result": result,
            "WhiteElo": str(rng.randint(800, 2800)), "BlackElo": str(rng.randint(800, 2800)),
            "TimeControl": "180+0", "ECO": "A00", "Opening": "Random", "Termination": "Normal"}
    header = "".join(f'[{k} "{v}"]\n' for k, v in tags.items())
    return f"{header}\n{' '.join(moves)} {result}\n\n"


def game_result(board: CoreBoard) -> str:
    if board.is_checkmate():
        return "0-1" if board.turn else "1-0"
    return "1/2-1/2" if board.is_game_over() else "*"


def make_corpus(games: int, seed: int = 7) -> Path:
    path = OUT / f"lichess_style_{games}_{seed}.pgn"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        rng = random.Random(seed)
        began = time.monotonic()
        tmp = path.with_suffix(".tmp")
        with open(tmp, "w") as handle:
            for n in range(games):
                handle.write(random_game(rng, n))
        tmp.rename(path)
        print(f"made {path} ({games} games, {path.stat().st_size / 1e6:.0f} MB) in "
              f"{time.monotonic() - began:.0f} s")
    return path


def baseline(path: Path) -> Measure:
    """read_game + replay of every main line."""
    began, cpu = time.perf_counter(), time.process_time()
    games = positions = 0
    with open(path, encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            board = game.board()
            positions += 1
            for move in game.mainline_moves():
                board.push(move)
                positions += 1
            games += 1
    return games, positions, time.perf_counter() - began, time.process_time() - cpu


def ours(path: Path, workers: int, chunk_games: int = CHUNK_GAMES) -> Measure:
    """The ingest step into a fresh warehouse, Delta writes included."""
    home = Path(tempfile.mkdtemp(prefix="chesslab-bench-"))
    try:
        with TreeCpu() as cpu:
            began = time.perf_counter()
            [summary] = run_step(INGEST, IngestJob((path,), IngestConfig(workers=workers, chunk_games=chunk_games, pool_from_mb=0)),
                                 Lake(home))
            seconds = time.perf_counter() - began
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return summary.games, summary.plies + summary.games, seconds, cpu.seconds


def in_child(tree: Path, path: Path, workers: int, chunk_games: int) -> Measure:
    """:func:`ours` with ``tree``'s code, in a child process (its own imports and caches)."""
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", str(path),
                           str(workers), str(chunk_games)], cwd=tree, check=True,
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tree)})
    games, positions, seconds, cpu = json.loads(done.stdout.strip().splitlines()[-1])
    return int(games), int(positions), float(seconds), float(cpu)


class TreeCpu:
    """CPU seconds of this process and its descendants (the ingest workers are the fork
    server's children, so rusage never sees them): /proc sampled every 0.05 s."""

    def __enter__(self) -> TreeCpu:
        self.start = {pid: cpu_seconds(pid) for pid in process_tree(os.getpid())}
        self.last: dict[int, float] = dict(self.start)
        self.running = True
        self.thread = threading.Thread(target=self.sample, daemon=True)
        self.thread.start()
        return self

    def sample(self) -> None:
        while self.running:
            for pid in process_tree(os.getpid()):
                self.last[pid] = max(self.last.get(pid, 0.0), cpu_seconds(pid))
            time.sleep(0.05)

    def __exit__(self, *exc: object) -> None:
        self.running = False
        self.thread.join()
        self.last[os.getpid()] = cpu_seconds(os.getpid())
        self.seconds = sum(cpu - self.start.get(pid, 0.0) for pid, cpu in self.last.items())


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def speed(args: argparse.Namespace) -> None:
    path = args.pgn or make_corpus(args.games)
    print(f"corpus {path} ({path.stat().st_size / 1e6:.0f} MB); load {load()}")
    names: dict[str, Callable[[], Measure]] = {}
    if path.suffix == ".pgn":
        names["python-chess read_game + push"] = partial(baseline, path)
    counts = sorted({1, *args.workers})
    trees = [("chesslab", ROOT)] + ([("baseline", args.baseline.resolve())]
                                    if args.baseline else [])
    for chunk in args.chunk_games:
        tail = "" if args.chunk_games == (CHUNK_GAMES,) else f" chunk={chunk}"
        for code, tree in trees:
            for workers in counts:
                names[f"{code} ingest, workers={workers}{tail}"] = \
                    partial(in_child, tree, path, workers, chunk) if args.baseline \
                    else partial(ours, path, workers, chunk)
    runs: dict[str, list[Measure]] = {name: [] for name in names}
    for round_number in range(args.repeat):
        for name, measure in names.items():
            runs[name].append(measure())
        print(f"round {round_number + 1}: " + ", ".join(
            f"{short(name)} {results[-1][2]:.2f} s ({results[-1][3]:.1f} CPU s)"
            for name, results in runs.items()) + f"; load {load()}", flush=True)
    rows = [(name, results[0][0], results[0][1], statistics.median(r[2] for r in results),
             statistics.median(r[3] for r in results)) for name, results in runs.items()]
    base = rows[0]
    print(f"\nmedians of {args.repeat} interleaved rounds (CPU: all processes together):")
    print(f"{'':40} {'games':>7} {'positions':>10} {'seconds':>8} {'games/s':>9} {'speed-up':>8} "
          f"{'CPU s':>7}")
    for name, games, positions, seconds, cpu in rows:
        print(f"{name:40} {games:7d} {positions:10d} {seconds:8.2f} {games / seconds:9.0f} "
              f"{base[3] / seconds:7.1f}x {cpu:7.2f}")
    first = 1 if "python-chess read_game + push" in names else 0
    for at in range(first, len(rows), len(counts)):  # each chunk/tree: its 1 worker, the rest
        for workers, row in zip(counts[1:], rows[at + 1:at + len(counts)], strict=True):
            print(f"{row[0].split(', ')[-1]}: workers 1 -> {workers}: "
                  f"{rows[at][3] / row[3]:.2f}x")
    for name, _, _, seconds, cpu in rows:     # this tree against the baseline, alike
        if name.startswith("baseline "):
            mine = next(r for r in rows if r[0] == name.replace("baseline ", "chesslab ", 1))
            print(f"{name.removeprefix('baseline ')}: baseline/this tree {seconds / mine[3]:.2f}x "
                  f"wall, {cpu / mine[4]:.2f}x CPU")
    if any(r[1] != base[1] or r[2] != base[2] for r in rows):
        print("warning: game or position counts differ from the baseline")


def short(name: str) -> str:
    """A measurement's name in a round's line: its last part, and which tree."""
    tree = name.split(" ", 1)[0] if name.startswith(("chesslab ", "baseline ")) else ""
    return f"{tree} {name.split(',')[-1].strip()}".strip()


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def big_file(corpus: Path, games: int, folder: Path) -> Path:
    """A .pgn.zst of ``games`` records: the corpus again and again, each copy's Site tags
    renamed so that every record is another game."""
    text = corpus.read_text()
    per_copy = text.count("[Site ")
    path = folder / f"chesslab-rss-{games}.pgn.zst"
    with open(path, "wb") as raw, zstandard.ZstdCompressor(level=3).stream_writer(raw) as out:
        for copy in range((games + per_copy - 1) // per_copy):
            block = text.replace("https://example.org/", f"https://example.org/{copy}-")
            if (copy + 1) * per_copy > games:
                block = "\n\n".join(block.split("\n\n")[:2 * (games - copy * per_copy)]) + "\n\n"
            out.write(block.encode())
    return path


def child_rss(path: Path, workers: int) -> tuple[float, float, float, int]:
    """(seconds, peak RSS in MB of the largest process, peak memory in MB of all the ingest's
    processes together (their PSS summed), games): ``chesslab ingest``'s code in a child
    process, its process tree (the workers are the fork server's children) sampled every
    0.1 s."""
    home = Path(tempfile.mkdtemp(prefix="chesslab-rss-home-", dir=path.parent))
    code = ("import time\n"
            "from flows.ingest import INGEST, IngestJob\n"
            "from flows.step import run_step\n"
            "from pipelines.ingest import IngestConfig\n"
            "from warehouse import Lake\n"
            "began = time.monotonic()\n"
            f"[s] = run_step(INGEST, IngestJob(({str(path)!r},), "
            f"IngestConfig(workers={workers}, pool_from_mb=0)), Lake({str(home)!r}))\n"
            "print(time.monotonic() - began, s.games)\n")
    largest = together = 0.0
    try:
        child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                 text=True, env={**os.environ, "PYTHONPATH": str(Path.cwd())})
        while child.poll() is None:
            sizes = [memory_kb(pid) for pid in process_tree(child.pid)]
            largest = max([largest] + [peak for peak, _ in sizes])
            together = max(together, sum(now for _, now in sizes))
            time.sleep(0.1)
        out, _ = child.communicate()
        if child.returncode:
            raise RuntimeError(f"ingest of {path} failed (exit {child.returncode})")
    finally:
        shutil.rmtree(home, ignore_errors=True)
    seconds, games = out.split()[-2:]
    return float(seconds), largest / 1024, together / 1024, int(games)


def process_tree(root: int) -> list[int]:
    """``root`` and its descendants (from /proc)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    parents[int(entry)] = int(handle.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
    tree, grew = {root}, True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= more
        grew = bool(more)
    return sorted(tree)


def memory_kb(pid: int) -> tuple[int, int]:
    """(peak resident memory, current proportional share of memory) of a process in kB
    (PSS: pages shared with other processes, the libraries a fork server's children share,
    count once in a sum; 0, 0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            peak = next((line for line in handle if line.startswith("VmHWM:")), "VmHWM: 0")
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            share = next((line for line in handle if line.startswith("Pss:")), "Pss: 0")
    except OSError:
        return 0, 0
    return int(peak.split()[1]), int(share.split()[1])


def rss(args: argparse.Namespace) -> None:
    corpus = make_corpus(args.games)
    folder = Path(tempfile.mkdtemp(prefix="chesslab-rss-", dir=args.tmp))
    try:
        for games in (args.rss_games // 10, args.rss_games):
            path = big_file(corpus, games, folder)
            size = path.stat().st_size
            raw_mb = corpus.stat().st_size * games / args.games / 1e6
            seconds, largest, together, read = child_rss(path, max(args.workers))
            print(f"{read:,} games, {size / 1e6:,.0f} MB .pgn.zst ({raw_mb:,.0f} MB of PGN): "
                  f"{seconds:.0f} s, {read / seconds:,.0f} games/s, peak RSS {largest:,.0f} MB "
                  f"in the largest process, {together:,.0f} MB in all together (PSS)",
                  flush=True)
            path.unlink()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def crossover(args: argparse.Namespace) -> None:
    corpus = make_corpus(args.games).read_text()
    variants = {"as made": corpus, "moves only": re.sub(r" \{[^}]*\}", "", corpus)}
    workers = args.workers[0]
    folder = Path(tempfile.mkdtemp(prefix="chesslab-crossover-", dir=args.tmp))
    try:
        files = []
        for variant, text in variants.items():
            games = text.split("\n\n[Event ")
            for megabytes in args.crossover:
                kept, size = [], 0
                for game in games:
                    kept.append(game)
                    size += len(game) + 9
                    if size >= megabytes * 1e6:
                        break
                else:
                    raise SystemExit(f"the corpus holds {size / 1e6:.1f} MB {variant}: "
                                     f"more --games for {megabytes} MB")
                path = folder / f"{variant.replace(' ', '_')}_{megabytes}.pgn"
                path.write_text("\n\n[Event ".join(kept) + "\n")
                files.append((variant, megabytes, len(kept), path))
        print(f"load {load()} at the start", flush=True)
        times: dict[tuple[Path, int], list[float]] = {}
        for round_number in range(args.repeat):
            for index, (_, _, _, path) in enumerate(files):
                order = (1, workers) if (round_number + index) % 2 == 0 else (workers, 1)
                for count in order:
                    seconds = in_child(ROOT, path, count, CHUNK_GAMES)[2]
                    times.setdefault((path, count), []).append(seconds)
            print(f"round {round_number + 1} done; load {load()}", flush=True)
        print(f"\nmedians of {args.repeat} interleaved rounds, each a fresh process:")
        print(f"{'text':>10} {'MB':>5} {'games':>6} {'1 worker s':>10} "
              f"{f'{workers} workers s':>11} {'1w/' + str(workers) + 'w':>7}")
        for variant, megabytes, games, path in files:
            one = statistics.median(times[(path, 1)])
            many = statistics.median(times[(path, workers)])
            print(f"{variant:>10} {megabytes:5g} {games:6d} {one:10.2f} {many:11.2f} "
                  f"{one / many:6.2f}x")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def megabyte_sizes(text: str) -> tuple[float, ...]:
    sizes = tuple(float(part) for part in text.split(","))
    if not sizes or min(sizes) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: positive sizes in MB, comma-separated")
    return sizes


def worker_counts(text: str) -> tuple[int, ...]:
    counts = tuple(int(part) for part in text.split(","))
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: positive counts, comma-separated")
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=20000)
    parser.add_argument("--workers", type=worker_counts, default=(2,),
                        help="worker counts to run beside 1, comma-separated (2,4,8)")
    parser.add_argument("--chunk-games", type=worker_counts, default=(CHUNK_GAMES,),
                        help="games per work unit (ingest's chunk_games), comma-separated: "
                             "each size runs on every worker count")
    parser.add_argument("--pgn", type=Path, help="benchmark this PGN instead")
    parser.add_argument("--repeat", type=int, default=3,
                        help="interleaved rounds; the median time of each counts")
    parser.add_argument("--rss", action="store_true", help="measure peak memory instead")
    parser.add_argument("--rss-games", type=int, default=600000)
    parser.add_argument("--tmp", default=tempfile.gettempdir())
    parser.add_argument("--baseline", type=Path, help="a built checkout to compare with")
    parser.add_argument("--crossover", type=megabyte_sizes, metavar="MB,...",
                        help="measure 1 against --workers workers on files of these sizes")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(ours(Path(args.child[0]), int(args.child[1]), int(args.child[2]))))
        return
    if args.crossover:
        crossover(args)
    else:
        rss(args) if args.rss else speed(args)


if __name__ == "__main__":
    main()
