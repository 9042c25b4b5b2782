#!/usr/bin/env python3
"""Ingest of a folder of many small PGN files (what ``chesslab datagen`` writes: batches of a
few games, ``.pgn.gz``), per file, against a baseline checkout, in the same run.

A keyed write that reads every stored file's keys makes each file cost more than the last
(quadratic in the files stored); with games and moves in the key index each file costs the
same. ``--files`` files of ``--games`` random games each (seeded, cached in
``benchmarks/out/``; games as in ``benchmarks/ingest.py``) are ingested by one ``chesslab
ingest`` step into a fresh home, once with this checkout's code and once with ``--baseline``'s
(another checkout of chesslab, built: e.g. a detached worktree of main), each in its own
process; the median seconds a file of the first and of the last ``--window`` files are
printed (wall seconds, and the CPU seconds of the ingesting process, all its threads: the
figure that holds when other work shares the machine), with the ratios last/first and
old/new.

    .venv/bin/python benchmarks/many_files.py --baseline /tmp/main-tree [--files 300]
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

OUT = Path(__file__).parent / "out"
ROOT = Path(__file__).resolve().parent.parent


def make_files(files: int, games: int, seed: int = 35) -> Path:
    """``files`` gzipped PGN files of ``games`` random games each (made once)."""
    sys.path.insert(0, str(ROOT))
    from benchmarks.ingest import random_game

    folder = OUT / f"many_{files}x{games}_{seed}"
    if not (folder / "done").exists():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        rng = random.Random(seed)
        for f in range(files):
            text = "".join(random_game(rng, f * games + g) for g in range(games))
            with gzip.open(folder / f"batch_{f:05d}.pgn.gz", "wt") as handle:
                handle.write(text)
        (folder / "done").touch()
    return folder


def child(folder: Path) -> None:
    """Ingest every file of ``folder`` in one ingest step into a fresh home; print each
    file's seconds as JSON (in file order)."""
    from flows.ingest import INGEST, IngestJob
    from flows.step import run_step
    from pipelines.ingest import IngestConfig
    from warehouse import Lake

    home = Path(tempfile.mkdtemp(prefix="chesslab-many-"))
    cpu: dict[str, float] = {}
    run_unit = INGEST.run_unit

    def timed(unit: Any, context: Any) -> Any:
        """The unit, its CPU seconds (this process, every thread) noted."""
        began = time.process_time()
        summary = run_unit(unit, context)
        cpu[summary.path] = time.process_time() - began
        return summary

    INGEST.run_unit = timed     # type: ignore[method-assign]
    try:
        paths = tuple(sorted(folder.glob("*.pgn.gz")))
        began, began_cpu = time.perf_counter(), time.process_time()
        summaries = run_step(INGEST, IngestJob(paths, IngestConfig(workers=1)), Lake(home))
        total, total_cpu = time.perf_counter() - began, time.process_time() - began_cpu
        by_path = {s.path: s for s in summaries}
        print(json.dumps({"seconds": [by_path[str(p)].seconds for p in paths], "total": total,
                          "cpu": [cpu[str(p)] for p in paths], "total_cpu": total_cpu,
                          "plies": sum(s.plies for s in summaries)}))
    finally:
        shutil.rmtree(home, ignore_errors=True)


def measure(tree: Path, folder: Path) -> dict[str, object]:
    """Run :func:`child` with ``tree``'s code (its own process and ``PYTHONPATH``)."""
    done = subprocess.run([sys.executable, __file__, "--child", str(folder)], cwd=tree,
                          env={**os.environ, "PYTHONPATH": str(tree)}, check=True,
                          capture_output=True, text=True)
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--games", type=int, default=8)
    parser.add_argument("--window", type=int, default=20)
    parser.add_argument("--baseline", type=Path, help="a built checkout to compare with")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child.resolve())
        return
    folder = make_files(args.files, args.games)
    trees = [("new", ROOT)] + ([("old", args.baseline.resolve())] if args.baseline else [])
    figures: dict[str, dict[str, float]] = {}
    for name, tree in trees:
        result = measure(tree, folder)
        figures[name] = {}
        for kind, unit in (("seconds", "wall"), ("cpu", "CPU")):
            if kind not in result:
                continue
            seconds = result[kind]
            assert isinstance(seconds, list)
            first = statistics.median(seconds[:args.window])
            last = statistics.median(seconds[-args.window:])
            figures[name][f"first {unit}"], figures[name][f"last {unit}"] = first, last
            total = result["total" if kind == "seconds" else "total_cpu"]
            figures[name][f"total {unit}"] = float(total)   # type: ignore[arg-type]
            print(f"{name} ({tree}): {args.files} files of {args.games} games, "
                  f"{result['plies']} plies in {total:.1f} s {unit}; per file {unit}: first "
                  f"{args.window} {first:.3f} s, last {args.window} {last:.3f} s "
                  f"(last/first {last / first:.2f}x)")
    if "old" in figures:
        for what in figures["new"]:
            print(f"old/new {what}: {figures['old'][what] / figures['new'][what]:.2f}x")

if __name__ == "__main__":
    main()
