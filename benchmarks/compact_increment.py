"""``compact`` after a small ingest, proportional to what changed (issue 51 §2) beside the
same compact doing it whole (the behaviour before), in one run on one home: position_facts
brought up to date from the rows added (``warehouse/refresh.py`` extend_kept, an overlay),
the summaries (label_summary, label_depth_pairs) from the labels added (extend_summary) and,
with ``--labels``, a labels partition with labels added sorted as a run of its own
(``warehouse/compaction.py`` plan) instead of whole. ``--labels-only``: the labels (and their
positions) without the games, as a labelling run or an import of training data adds them.

The home is brought current first (a compact). Then, twice, a new PGN of ``--games`` random
games (``benchmarks/scale_data.py``'s generator, under seeds no data set uses) is ingested
(with ``--labels``, and a bullet text label for each of their plies under ``scale.py``'s text
engine and depth: its partition) and the whole lake compacted: the first time with the
overlay and the summaries' increments refused (the baseline: each computed whole; with
``--sort-whole`` the labels' runs too: the partition sorted whole), the second as
``chesslab compact`` runs. Each prints wall and CPU seconds, the rows each derived table
wrote and position_facts' overlay, and the files of each table before and after.
``--check``: the facts of one key range (1/64 of the keys) then compared with the defining
query's. ``--profile``: the second arm only (no baseline), and where its compact's time goes
(cProfile, wall seconds of chesslab's warehouse functions by cumulative time: each derived
table's refresh, each table's compaction). ``--memory``: each compact's peak resident memory
by step (sampled every 0.1 s; steps of 1 GiB or more).

    python benchmarks/compact_increment.py --home /work/scale_tmp/home100m --games 12000 \
        --labels --check
"""
from __future__ import annotations

import argparse
import contextlib
import cProfile
import dataclasses
import json
import math
import os
import pstats
import resource
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.scale import TEXT_DEPTH, TEXT_ENGINE  # noqa: E402
from benchmarks.scale_data import GAMES_PER_CHUNK, play_chunk  # noqa: E402
from flows.ingest import INGEST, IngestJob  # noqa: E402
from flows.step import run_step  # noqa: E402
from pipelines.ingest import IngestConfig  # noqa: E402
from warehouse import Lake, compaction  # noqa: E402
from warehouse import refresh as refresh_module  # noqa: E402
from warehouse.catalog import connect_with_files  # noqa: E402
from warehouse.derived import DERIVED_DIR, Derived  # noqa: E402

RANGE = (0, (1 << 58) - 1)      # 1/64 of the keys


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def increment(folder: Path, games: int, seed: int) -> tuple[Path, Path]:
    """``games`` random games (whole chunks of the generator's) as one PGN file, and a text
    label for each of their plies as one bullet text file."""
    chunks = -(-games // GAMES_PER_CHUNK)
    for chunk in range(chunks):
        play_chunk((seed, chunk, folder))
    paths = folder / f"increment-seed{seed}.pgn", folder / f"increment-seed{seed}.txt"
    for path in paths:
        with open(path, "w") as out:
            for chunk in range(chunks):
                out.write((folder / f"chunk{chunk:05d}{path.suffix}").read_text())
    return paths


def manifest(lake: Lake) -> dict[str, object]:
    [found] = (lake.root / DERIVED_DIR / "position_facts").glob("*.json")
    return json.loads(found.read_text())


EXTEND_SUMMARY = refresh_module.extend_summary


def summaries_whole(lake: Lake, spec: Derived, *args: Any) -> int | None:
    """extend_summary as for a table that is no summary: its result kept when its inputs
    were only rewritten, computed whole when rows were added (the baseline)."""
    return EXTEND_SUMMARY(lake, dataclasses.replace(spec, grouped_by=()), *args)


STEPS = ("keep_in_table", "extend_kept", "write", "extend_summary")   # refresh's, by table


def rss_gib() -> float:
    """This process's resident memory now (GiB), from /proc."""
    with open("/proc/self/status") as status:
        kib = next(int(line.split()[1]) for line in status if line.startswith("VmRSS"))
    return kib / 2**20


@contextlib.contextmanager
def memory_by_step(peaks: dict[str, float]) -> Iterator[None]:
    """Sample the resident memory every 0.1 s into ``peaks``, by the step running: each
    derived table's refresh step and each table's compaction."""
    step = ["other"]
    done = threading.Event()

    def named(function: Callable[..., Any], label: Callable[..., str]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            outer, step[0] = step[0], label(*args)
            try:
                return function(*args, **kwargs)
            finally:
                step[0] = outer
        return run

    def sample() -> None:
        while not done.wait(0.1):
            peaks[step[0]] = max(peaks.get(step[0], 0.0), rss_gib())

    saved = {name: getattr(refresh_module, name) for name in STEPS}
    for name in STEPS:
        setattr(refresh_module, name, named(saved[name],
                                            lambda _lake, spec, *_, n=name: f"{n} {spec.name}"))
    lake_compact = Lake.compact
    Lake.compact = named(lake_compact,  # type: ignore[method-assign]
                         lambda _lake, table, *_: f"compaction of {table}")
    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()
        for name, function in saved.items():
            setattr(refresh_module, name, function)
        Lake.compact = lake_compact     # type: ignore[method-assign]


def compact(lake: Lake, label: str, profile: bool = False, memory: bool = False) -> None:
    wall, used = time.perf_counter(), cpu()
    profiler = cProfile.Profile() if profile else None
    if profiler is not None:
        profiler.enable()
    peaks: dict[str, float] = {}
    with memory_by_step(peaks) if memory else contextlib.nullcontext():
        files, rows = refresh_module.compact_lake(lake, retain_hours=0)
    if profiler is not None:
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(r"/warehouse/", 30)
    if peaks:
        print(f"{label}: peak resident memory by step: " + ", ".join(
            f"{step} {gib:.2f} GiB" for step, gib in sorted(peaks.items(), key=lambda p: -p[1])
            if gib >= 1.0), flush=True)
    meta = manifest(lake)
    print(f"{label}: compact {time.perf_counter() - wall:.1f} s ({cpu() - used:.1f} s CPU); "
          f"derived rows written {rows}; position_facts kept in positions "
          f"{meta['rows']:,}, overlay {meta.get('overlay_rows', 0):,}; files "
          + ", ".join(f"{name} {a}->{b}" for name, (a, b) in files.items() if a != b),
          flush=True)


def check(lake: Lake) -> None:
    """position_facts of RANGE as kept against the defining query's rows."""
    sql = "select count(*), sum(hash(position_key, fen, game_id, game_result)) from position_facts"
    wall = time.perf_counter()
    kept = connect_with_files(lake, key_range=RANGE)[0].sql(sql).fetchall()
    computed = connect_with_files(lake, key_range=RANGE, derived=False)[0].sql(sql).fetchall()
    print(f"check of 1/64 of the keys: kept {kept[0][0]:,} rows, computed {computed[0][0]:,}: "
          f"{'same rows' if kept == computed else 'DIFFERENT'} ({time.perf_counter() - wall:.1f} s)",
          flush=True)
    if kept != computed:
        raise SystemExit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--games", type=int, default=12_000)
    parser.add_argument("--seed", type=int, default=1001, help="the first increment's seed")
    parser.add_argument("--labels", action="store_true",
                        help="import a text label for each ply of the games too")
    parser.add_argument("--labels-only", action="store_true",
                        help="import the labels (and their positions) only, not the games")
    parser.add_argument("--sort-whole", action="store_true",
                        help="the baseline sorts a labels partition whole too")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--memory", action="store_true",
                        help="each compact's peak resident memory by step (every 0.1 s)")
    parser.add_argument("--profile", action="store_true",
                        help="the second arm only, and where its compact's time goes")
    args = parser.parse_args()
    lake = Lake(args.home)
    compact(lake, "start")
    with tempfile.TemporaryDirectory() as scratch:
        defaults = refresh_module.FOLD, compaction.SORT_FOLD
        whole = (math.inf, math.inf if args.sort_whole else defaults[1])
        for number, (label, folds) in enumerate((("whole (baseline)", whole),
                                                 ("increment", defaults))):
            if args.profile and number == 0:
                continue
            folder = Path(scratch) / str(number)
            folder.mkdir()
            pgn, text = increment(folder, args.games, args.seed + number)
            wall = time.perf_counter()
            if not args.labels_only:
                run_step(INGEST, IngestJob((pgn,), IngestConfig(workers=os.cpu_count() or 1)),
                         lake)
            if args.labels or args.labels_only:
                run_step(INGEST, IngestJob((text,), IngestConfig(
                    workers=1, format="text", engine_id=TEXT_ENGINE, depth=TEXT_DEPTH)), lake)
            what = "the labels of" if args.labels_only else "the games and labels of" \
                if args.labels else "the games of"
            print(f"{label}: ingest of {what} {args.games:,} games "
                  f"{time.perf_counter() - wall:.1f} s", flush=True)
            refresh_module.FOLD, compaction.SORT_FOLD = folds
            refresh_module.extend_summary = summaries_whole if number == 0 else EXTEND_SUMMARY
            compact(lake, label, profile=args.profile and number == 1,
                    memory=args.memory)
            if args.check:
                check(lake)


if __name__ == "__main__":
    main()
