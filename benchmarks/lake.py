#!/usr/bin/env python3
"""Keyed write speed as a table grows: the lock + key scan + append path against a Delta merge.

For each size the ``positions`` table of a fresh warehouse is filled to that many rows (in
commits of ``--fill-batch`` rows, so the table has as many files as an ingest would leave),
then, ``--rounds`` times and in rotating order, the same kind of batch is written three ways:

* ``lake``: ``Lake.write`` (lock, scan of the key column of the files that can hold the keys,
  append of the new rows);
* ``merge``: the Delta merge on the key (insert when not matched) that ``Lake.write`` used
  before, on the same table;
* ``parquet``: a plain ``pyarrow.parquet.write_table`` of the same rows to a new file (no
  dedupe, no commit): the floor.

Each batch holds ``--batch`` rows, half of them keys already stored (as in an ingest, where
common positions repeat), half new, so each way inserts the same number of rows. Medians per
size and the ratios are printed; all runs share this process, so the ratios are fair on a
loaded machine.

    .venv/bin/python benchmarks/lake.py [--sizes 0,500000,2000000] [--batch 5000] [--rounds 3]
"""
from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable, write_deltalake

from warehouse import Lake
from warehouse.schema import conform, to_storage
from warehouse.tables import table

FEN = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -"


def position_rows(keys: list[int]) -> pa.Table:
    """``positions`` rows for ``keys`` (unsigned 64-bit), in the table's schema."""
    return conform(table("positions"), pa.table({
        "position_key": pa.array(keys, pa.uint64()),
        "fen": pa.array([f"{FEN} {k % 100000}" for k in keys], pa.string()),
        "source_id": pa.array(["bench"] * len(keys), pa.string())}))


def random_keys(rng: random.Random, count: int) -> list[int]:
    """Distinct random 64-bit keys: each batch spans the whole range, as Zobrist keys do."""
    return list(dict.fromkeys(rng.getrandbits(64) for _ in range(count)))


def fill(lake: Lake, rng: random.Random, size: int, batch: int) -> list[int]:
    """Commit ``size`` rows of distinct random keys in commits of ``batch``; returns them."""
    keys = random_keys(rng, size)
    lake.write("positions", position_rows(keys[:1]))   # creates the table
    for start in range(1, len(keys), batch):
        write_deltalake(str(lake.table_dir("positions")),
                        to_storage(position_rows(keys[start:start + batch])), mode="append")
    return keys


def merge(lake: Lake, data: pa.Table) -> int:
    """The Delta merge on the key, insert when not matched (``Lake.write`` before the lock)."""
    metrics = DeltaTable(str(lake.table_dir("positions"))).merge(
        to_storage(data), predicate="t.position_key = s.position_key", source_alias="s",
        target_alias="t").when_not_matched_insert_all().execute()
    return int(metrics["num_target_rows_inserted"])


def parquet(folder: Path, data: pa.Table) -> int:
    pq.write_table(to_storage(data), folder / f"plain-{time.monotonic_ns()}.parquet")
    return data.num_rows


def timed(write: Callable[[pa.Table], int], data: pa.Table, expected: int) -> float:
    began = time.perf_counter()
    stored = write(data)
    elapsed = time.perf_counter() - began
    if stored != expected:
        raise RuntimeError(f"stored {stored} rows, expected {expected}")
    return elapsed


def measure(size: int, args: argparse.Namespace, rng: random.Random) -> dict[str, float]:
    """Median seconds per write of each way, at a table of ``size`` rows."""
    with tempfile.TemporaryDirectory(prefix="chesslab-lakebench-") as tmp:
        lake = Lake(Path(tmp) / "home")
        began = time.perf_counter()
        stored = fill(lake, rng, max(size, 1), args.fill_batch)
        print(f"  filled {len(stored):,} rows in {lake.version('positions') + 1} commits "
              f"({time.perf_counter() - began:.1f} s)", flush=True)
        half = args.batch // 2
        ways: dict[str, Callable[[pa.Table], int]] = {
            "lake": lambda d: lake.write("positions", d), "merge": lambda d: merge(lake, d),
            "parquet": lambda d: parquet(Path(tmp), d)}
        times: dict[str, list[float]] = {name: [] for name in ways}
        for round_ in range(args.rounds):
            for name in list(ways)[round_ % 3:] + list(ways)[:round_ % 3]:
                old = rng.sample(stored, min(half, len(stored)))
                new = random_keys(rng, args.batch - len(old))
                expected = args.batch if name == "parquet" else len(new)
                times[name].append(timed(ways[name], position_rows(old + new), expected))
        return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0,500000,2000000")
    parser.add_argument("--batch", type=int, default=5000, help="rows per measured write")
    parser.add_argument("--fill-batch", type=int, default=50000, help="rows per fill commit")
    parser.add_argument("--rounds", type=int, default=3, help="writes per way and size")
    args = parser.parse_args()
    rng = random.Random(11)
    print(f"{'rows':>10} {'lake s':>8} {'merge s':>8} {'parquet s':>9} "
          f"{'merge/lake':>10} {'lake/parquet':>12}")
    for size in (int(s) for s in args.sizes.split(",")):
        got = measure(size, args, rng)
        print(f"{size:>10,} {got['lake']:>8.3f} {got['merge']:>8.3f} {got['parquet']:>9.3f} "
              f"{got['merge'] / got['lake']:>10.2f} {got['lake'] / got['parquet']:>12.2f}",
              flush=True)


if __name__ == "__main__":
    main()
