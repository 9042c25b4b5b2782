"""Keyed writes as the warehouse grows: the key index against the scan of every stored part.

Writes ``--chunks`` batches of ``--chunk`` random 64-bit position keys (Zobrist keys are as
uniform: every part's min/max spans the whole key range, so statistics prune nothing), a
tenth of each batch keys already stored, into ``positions`` and into one ``labels``
partition, first with the scan of every part's keys (``Lake(key_index=False)``, the behaviour
before the index), then with the index, in fresh homes in one run. Prints the rate over the
first and the last quarter of the batches for each (the scan's falls as the table grows),
and the ratios. Not a test: the figures depend on the machine and its load (printed).

    python benchmarks/keyed_writes.py --chunks 60 --chunk 20000 --home /work/scale_tmp/kw
"""
from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from warehouse import Lake


def batches(chunks: int, size: int, seed: int) -> list[np.ndarray]:
    """Random uint64 keys per batch, a tenth of each from keys of earlier batches."""
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    for number in range(chunks):
        fresh = rng.integers(0, 2**64 - 1, size=size, dtype=np.uint64, endpoint=True)
        if out:
            earlier = np.concatenate(out)
            fresh[: size // 10] = rng.choice(earlier, size // 10, replace=False)
        out.append(np.unique(fresh))
        del number
    return out


def write_all(lake: Lake, table: str, keys: list[np.ndarray]) -> list[float]:
    """Seconds of each batch's write."""
    seconds = []
    for chunk in keys:
        column = pa.array(chunk, pa.uint64())
        if table == "positions":
            rows = pa.table({"position_key": column, "fen": pa.array(["f"] * len(chunk)),
                             "source_id": pa.array(["s"] * len(chunk))})
        else:
            rows = pa.table({"position_key": column, "engine_id": ["e"] * len(chunk),
                             "depth": pa.array([9] * len(chunk), pa.int32()),
                             "score_cp": pa.array([0] * len(chunk), pa.int32())})
        start = time.perf_counter()
        lake.write(table, rows, unique=True)
        seconds.append(time.perf_counter() - start)
    return seconds


def rate(keys: list[np.ndarray], seconds: list[float], part: slice) -> float:
    return sum(len(k) for k in keys[part]) / sum(seconds[part])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=60)
    parser.add_argument("--chunk", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--home", default="/tmp/chesslab_keyed_writes")
    args = parser.parse_args()
    keys = batches(args.chunks, args.chunk, args.seed)
    quarter = max(1, args.chunks // 4)
    first, last = slice(0, quarter), slice(args.chunks - quarter, args.chunks)
    print(f"{args.chunks} batches of {args.chunk} keys ({sum(map(len, keys)):,} rows written, "
          f"a tenth of each batch already stored); load average {os.getloadavg()}")
    for table in ("positions", "labels"):
        figures = {}
        for label, index in (("scan", False), ("index", True)):
            home = Path(args.home) / f"{table}-{label}"
            shutil.rmtree(home, ignore_errors=True)
            seconds = write_all(Lake(home, key_index=index, index_threshold=0), table, keys)
            figures[label] = (rate(keys, seconds, first), rate(keys, seconds, last), sum(seconds))
            print(f"{table:9} {label:5}: first quarter {figures[label][0]:>10,.0f} rows/s, "
                  f"last quarter {figures[label][1]:>10,.0f} rows/s, total {sum(seconds):6.1f} s"
                  f" (last write {seconds[-1]:.3f} s); load {os.getloadavg()[0]:.2f}")
            shutil.rmtree(home, ignore_errors=True)
        print(f"{table:9} index/scan: last quarter {figures['index'][1] / figures['scan'][1]:.2f}x,"
              f" total {figures['scan'][2] / figures['index'][2]:.2f}x faster")


if __name__ == "__main__":
    main()
