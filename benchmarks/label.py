"""Labelling speed: the ``label`` step on each runner against a bare loop driving the same
Stockfish processes.

The baseline is what a person would write by hand: K threads, each owning one Stockfish
(Threads=1, same Hash, UCI_ShowWDL), sending ``ucinewgame``, ``isready``, ``position fen`` and
``go depth D`` per position and reading until ``bestmove``, with no parsing and no storage.
Ours is the ``label`` step (parse every depth, write Parquet parts) on a fresh home holding the
same positions: ``prefect`` (the default runner, chesslab's temporary Prefect server) and
``local`` (``--no-prefect``), both through ``run_step``, the one way a step runs. All are timed
wall-clock, engine start-up included, side by side in one run; the server is started before
timing and warmed up by one small run.

    .venv/bin/python benchmarks/label.py --positions 6000 --workers 1,2

Positions: the PGN files given (default: data/sample/*.pgn when present, else the test
fixture of self-play games), extended to --positions with seeded random games.
"""
from __future__ import annotations

import argparse
import io
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import chess.polyglot

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from flows.prefect_settings import configure_prefect  # noqa: E402

os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="label-bench-prefect-"))
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
configure_prefect()  # before Prefect is first imported: it reads its settings once

from flows.label import LABEL  # noqa: E402
from flows.prefect_runner import PrefectRunner  # noqa: E402
from flows.step import LocalRunner, run_step  # noqa: E402
from pipelines.label import LabelConfig  # noqa: E402
from warehouse import Lake  # noqa: E402

FIXTURE_PGN = ROOT / "tests" / "fixtures" / "label_engines" / "selfplay.pgn"
SAMPLE_DIR = ROOT / "data" / "sample"


def open_pgn(path: Path) -> io.TextIOBase:
    if path.name.endswith(".zst"):
        import zstandard

        stream = zstandard.ZstdDecompressor().stream_reader(open(path, "rb"))
        return io.TextIOWrapper(stream, encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def pgn_positions(paths: list[Path]) -> Iterator[chess.Board]:
    for path in paths:
        with open_pgn(path) as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                board = game.board()
                yield board.copy()
                for move in game.mainline_moves():
                    board.push(move)
                    yield board.copy()


def random_positions(seed: int) -> Iterator[chess.Board]:
    rng = random.Random(seed)
    while True:
        board = chess.Board()
        while not board.is_game_over() and board.ply() < 120:
            board.push(rng.choice(list(board.legal_moves)))
            yield board.copy()


def position_rows(paths: list[Path], count: int) -> list[dict[str, object]]:
    rows: dict[int, dict[str, object]] = {}
    for source in (pgn_positions(paths), random_positions(20261122)):
        for board in source:
            if len(rows) >= count:
                return list(rows.values())
            key = chess.polyglot.zobrist_hash(board)
            rows.setdefault(key, {"position_key": key, "fen": board.epd(), "source_id": "bench"})
    return list(rows.values())


def bare_loop(engine: str, fens: list[str], workers: int, depth: int, hash_mb: int) -> float:
    """Seconds for K processes to search every FEN once (the baseline)."""
    queue = iter(fens)
    lock = threading.Lock()

    def worker() -> None:
        sf = subprocess.Popen([engine], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, bufsize=1)
        assert sf.stdin and sf.stdout
        sf.stdin.write(f"uci\nsetoption name Threads value 1\nsetoption name Hash value "
                       f"{hash_mb}\nsetoption name UCI_ShowWDL value true\nisready\n")
        for line in sf.stdout:
            if line.startswith("readyok"):
                break
        while True:
            with lock:
                fen = next(queue, None)
            if fen is None:
                break
            sf.stdin.write(f"ucinewgame\nisready\nposition fen {fen}\ngo depth {depth}\n")
            for line in sf.stdout:
                if line.startswith("bestmove"):
                    break
        sf.stdin.write("quit\n")
        sf.stdin.close()
        sf.wait()

    started = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started


def fresh_home(template: Path) -> Path:
    home = Path(tempfile.mkdtemp(prefix="label-bench-"))
    shutil.copytree(template / "lake", home / "lake")
    return home


def run_ours(template: Path, config: LabelConfig, runner: Any) -> tuple[float, float, int]:
    """(wall seconds, seconds the summary reports, labels written) of one run on
    ``runner``."""
    home = fresh_home(template)
    try:
        started = time.perf_counter()
        summary = run_step(LABEL, config, Lake(home), runner)
        return time.perf_counter() - started, summary.seconds, summary.labels
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pgn", nargs="*", type=Path, help="PGN files of positions")
    parser.add_argument("--positions", type=int, default=6000)
    parser.add_argument("--depths", default="5,6,7")
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    parser.add_argument("--rounds", type=int, default=1, help="repeat and report medians")
    parser.add_argument("--engine", default=LabelConfig.engine)
    parser.add_argument("--contenders", default="prefect,local",
                        help="comma-separated: prefect, local")
    args = parser.parse_args()

    paths = args.pgn or sorted(SAMPLE_DIR.glob("*.pgn*")) or [FIXTURE_PGN]
    depths = tuple(int(d) for d in args.depths.split(","))
    rows = position_rows(paths, args.positions)
    template = Path(tempfile.mkdtemp(prefix="label-bench-template-"))
    Lake(template).write("positions", rows)
    fens = [str(r["fen"]) for r in rows]
    print(f"{len(rows)} positions from {', '.join(p.name for p in paths)} (+ random games), "
          f"depths {depths}, go depth {max(depths)}, cpus {os.cpu_count()}")

    warm = Path(tempfile.mkdtemp(prefix="label-bench-warm-"))
    Lake(warm).write("positions", rows[:4])
    with PrefectRunner(warm, show_progress=False) as prefect:
        runners = {"prefect": prefect, "local": LocalRunner(show_progress=False)}
        run_ours(warm, LabelConfig(depths=depths, workers=1, engine=args.engine), prefect)
        table: dict[tuple[str, int], list[float]] = {}
        for round_index in range(args.rounds):
            for workers in [int(w) for w in args.workers.split(",")]:
                config = LabelConfig(depths=depths, workers=workers, engine=args.engine)
                runs = ["baseline", *args.contenders.split(",")]
                # Odd rounds run in reverse order, so a load change on the shared machine
                # does not always land on the same contender.
                for name in runs if round_index % 2 == 0 else runs[::-1]:
                    measure(name, template, fens, config, table, runners.get(name))
    report(table)
    shutil.rmtree(template, ignore_errors=True)
    shutil.rmtree(warm, ignore_errors=True)
    return 0


def measure(name: str, template: Path, fens: list[str], config: LabelConfig,
            table: dict[tuple[str, int], list[float]], runner: Any) -> None:
    """One timed run of ``name`` (baseline, or ours on ``runner``), appended to ``table``."""
    labels = len(fens) * len(config.depths)
    if name == "baseline":
        seconds = bare_loop(config.engine, fens, config.workers, max(config.depths),
                            config.hash_mb)
        table.setdefault((name, config.workers), []).append(labels / seconds)
        return
    seconds, inside, written = run_ours(template, config, runner)
    assert written == labels, f"{name} wrote {written} labels, expected {labels}"
    table.setdefault((name, config.workers), []).append(written / seconds)
    if name == "prefect":
        table.setdefault(("prefect-body", config.workers), []).append(written / inside)


def report(table: dict[tuple[str, int], list[float]]) -> None:
    """Medians, and the median of the per-round ratios (each round's contenders ran next to
    that round's baseline: on a loaded machine the fairer comparison)."""
    rate = {key: statistics.median(values) for key, values in table.items()}
    print(f"{'run':<13}{'workers':>8}{'labels/s':>12}{'vs baseline':>13}{'per round':>11}   runs")
    for (name, workers), value in sorted(rate.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        ratio = value / rate[("baseline", workers)]
        paired = paired_ratio(table[(name, workers)], table[("baseline", workers)])
        runs = " ".join(f"{v:.0f}" for v in table[(name, workers)])
        print(f"{name:<13}{workers:>8}{value:>12.1f}{ratio:>13.3f}{paired:>11.3f}   {runs}")
    print("prefect: wall clock of the whole run_step call; prefect-body: the same run timed "
          "inside the flow (without Prefect's flow-run start-up and shut-down)")
    for name in ("baseline", "prefect", "local"):
        if (name, 1) in rate and (name, 2) in rate:
            paired = paired_ratio(table[(name, 2)], table[(name, 1)])
            print(f"scaling 1->2 workers, {name}: {rate[(name, 2)] / rate[(name, 1)]:.2f}x "
                  f"(per round {paired:.2f}x)")


def paired_ratio(values: list[float], baseline: list[float]) -> float:
    return statistics.median(v / b for v, b in zip(values, baseline, strict=False))


if __name__ == "__main__":
    sys.exit(main())
