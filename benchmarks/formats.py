"""Import and export rates of the field's training-data formats (issue 35 §2-§3).

Generates N positions of random games (the compiled core plays them; seeded), writes them as
bullet text (``FEN | score | result``), Lichess evaluation JSONL (two evals per line) and
binpack, then imports each into a fresh home with ``chesslab ingest`` (in-process, one worker)
and reports positions/s; the baseline, in the same run, is the naive import a user would
write: python-chess per line (``chess.Board``, ``zobrist_hash``, ``board.epd()``) on the first
``--baseline-lines`` lines, without any warehouse write. The JSONL import runs a second time
with the reader it had before its compiled scanner (Arrow's JSON reader on every line:
``lichess_eval.parse_block_arrow``), so the scanner's gain is printed as a ratio from the same
run, and beside the text import of the same positions; CPU seconds are printed beside wall
seconds, with the load average (the machine may be shared). Then exports the text import back
out in each format. Not a test: the numbers depend on the machine.

    python benchmarks/formats.py --positions 1000000
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

import chess
import chess.polyglot
from pipelines.formats.binpack import BinpackWriter

from engines.core.position import CoreBoard
from flows.ingest import INGEST, IngestJob
from flows.step import run_step
from pipelines.export import ExportConfig, export_dataset
from pipelines.formats.lichess_eval import parse_block_arrow
from pipelines.ingest import IngestConfig, training_data
from warehouse import Lake

OUT = Path(__file__).parent / "out" / "formats"


def random_positions(count: int, seed: int) -> list[tuple[str, str, int, int, int]]:
    """(full FEN, move played, ply, White's score, White's result) of random games."""
    rng = random.Random(seed)
    rows: list[tuple[str, str, int, int, int]] = []
    while len(rows) < count:
        board, result, game = CoreBoard(), rng.choice((1, 0, -1)), []
        for ply in range(rng.randrange(20, 160)):
            moves = board.legal_moves()
            if not moves:
                break
            move = rng.choice(moves)
            game.append((board.fen(), move.uci(), ply, rng.randrange(-900, 900), result))
            board.push(move)
        rows.extend(game)
    return rows[:count]


def write_files(rows: list[tuple[str, str, int, int, int]], folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    text, jsonl, binpack = folder / "data.txt", folder / "evals.jsonl", folder / "data.binpack"
    results = {1: "1.0", 0: "0.5", -1: "0.0"}
    with open(text, "w") as out:
        out.writelines(f"{fen} | {score} | {results[result]}\n"
                       for fen, _, _, score, result in rows)
    with open(jsonl, "w") as out:
        for fen, move, _, score, _ in rows:
            evals = [{"pvs": [{"cp": score, "line": move}, {"cp": score - 30, "line": move}],
                      "knodes": 1000, "depth": 20},
                     {"pvs": [{"cp": score + 5, "line": move}], "knodes": 50, "depth": 12}]
            out.write(json.dumps({"fen": " ".join(fen.split()[:4]), "evals": evals}) + "\n")
    with open(binpack, "wb") as stream:
        writer = BinpackWriter(stream)
        black = [fen.split()[1] == "b" for fen, *_ in rows]
        writer.add([r[0] for r in rows], [r[1] for r in rows],
                   [(-r[3] if b else r[3]) * 208 // 100 for r, b in zip(rows, black, strict=True)],
                   [r[2] for r in rows], [(-r[4] if b else r[4]) for r, b in zip(rows, black, strict=True)])
        writer.close()
    return {"text": text, "lichess-eval": jsonl, "binpack": binpack}


def naive_import(path: Path, lines: int) -> float:
    """Lines per second of python-chess per line (no warehouse writes at all)."""
    began, done = time.perf_counter(), 0
    with open(path) as handle:
        for line in handle:
            fen, score, result = (part.strip() for part in line.split("|"))
            board = chess.Board(fen)
            (chess.polyglot.zobrist_hash(board), board.epd(), int(score), float(result))
            done += 1
            if done == lines:
                break
    return done / (time.perf_counter() - began)


def timed_import(path: Path, fmt: str, home: Path) -> tuple[float, float, int, int]:
    """(wall seconds, CPU seconds of every thread, records, labels) of importing one file into
    a fresh home (CPU time too: the machine may be shared)."""
    shutil.rmtree(home, ignore_errors=True)
    config = IngestConfig(workers=1, engine_id="bench")
    began, cpu = time.perf_counter(), time.process_time()
    [summary] = run_step(INGEST, IngestJob((path,), config), Lake(home))
    return (time.perf_counter() - began, time.process_time() - cpu, summary.records,
            summary.labels)


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def previous_jsonl_reader(path: Path, home: Path) -> tuple[float, float, int, int]:
    """:func:`timed_import` of a JSONL file with the reader it had before the scanner."""
    parsers = training_data.TEXT_PARSERS
    scanner = parsers["lichess-eval"]
    parsers["lichess-eval"] = parse_block_arrow
    try:
        return timed_import(path, "lichess-eval", home)
    finally:
        parsers["lichess-eval"] = scanner


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=1_000_000)
    parser.add_argument("--baseline-lines", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    folder = OUT / str(args.positions)
    began = time.perf_counter()
    files = write_files(random_positions(args.positions, args.seed), folder)
    print(f"generated {args.positions:,} positions in {time.perf_counter() - began:.0f} s")
    naive = naive_import(files["text"], args.baseline_lines)
    print(f"baseline: python-chess per line, no writes: {naive:,.0f} lines/s")
    with tempfile.TemporaryDirectory() as tmp:
        per_cpu = {}
        for fmt, path in files.items():
            print(f"({load()})")
            seconds, cpu, records, labels = timed_import(path, fmt, Path(tmp) / fmt)
            rate, per_cpu[fmt] = records / seconds, records / cpu
            print(f"import {fmt:12s} {records:,} positions, {labels:,} labels in {seconds:.1f} s "
                  f"({cpu:.1f} s CPU): {rate:,.0f} positions/s, {per_cpu[fmt]:,.0f} per CPU "
                  f"second ({rate / naive:.1f}x the baseline)")
        print(f"({load()})")
        seconds, cpu, records, labels = previous_jsonl_reader(files["lichess-eval"],
                                                              Path(tmp) / "jsonl-arrow")
        print(f"import lichess-eval with the previous reader (Arrow's JSON reader): {records:,} "
              f"positions, {labels:,} labels in {seconds:.1f} s ({cpu:.1f} s CPU): "
              f"{records / seconds:,.0f} positions/s, {records / cpu:,.0f} per CPU second")
        print(f"JSONL per CPU second: scanner / previous reader {per_cpu['lichess-eval'] / (records / cpu):.2f}x; "
              f"scanner / text import of the same positions "
              f"{per_cpu['lichess-eval'] / per_cpu['text']:.2f}x; "
              f"target 200,000/s: {per_cpu['lichess-eval'] / 200_000:.2f}x ({load()})")
        lake = Lake(Path(tmp) / "text")
        for fmt in ("text", "binpack", "epd", "parquet"):
            out = Path(tmp) / f"export.{fmt}"
            summary = export_dataset(lake, ExportConfig(format=fmt, out=str(out)))
            print(f"export {fmt:8s} {summary.written:,} positions in {summary.seconds:.1f} s: "
                  f"{summary.written / summary.seconds:,.0f} positions/s, {summary.bytes:,} bytes")


if __name__ == "__main__":
    main()
