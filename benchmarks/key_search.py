#!/usr/bin/env python3
"""The key index's search (issue 51 §2): a run's directory against numpy's binary search.

Two parts, each with its baseline in the same process, in alternating order:

1. ``search``: ``--needles`` sorted random keys (a lookup's needles are sorted) searched
   for in one run of N sorted random int64 keys (``--runs``: 10M, 100M, 300M by default; N
   keys take 8N bytes of memory), a tenth of them stored keys: ``numpy.searchsorted`` (the
   search before) against the run's directory (``keyindex.Directory``, warehouse/_search.pyx),
   the directory's making timed apart (once per run and process). CPU seconds, best of
   ``--repeat``.
2. ``writes``: ``--writes`` keyed writes of ``--batch`` random keys into one ``labels``
   partition of a fresh home (the key index kept from the first key), each write's lookup
   (``KeyIndex.lookup``, every run of the partition) timed with both searches on the same
   index before the write: how the lookup grows with the keys held.

    .venv/bin/python benchmarks/key_search.py [--runs 10000000,100000000] [--writes 60]
"""
from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np
import pyarrow as pa

from warehouse import Lake, keyindex
from warehouse.datafiles import basename
from warehouse.keyindex import Directory, KeyIndex

SEARCH = keyindex.search    # the search with each run's directory (the one monkeypatched below)


class NumpyDirectory(Directory):
    """The search before the directory: numpy's binary search over the whole run."""

    def positions(self, keys: np.ndarray, needles: np.ndarray) -> np.ndarray:
        return np.searchsorted(keys, needles)


NUMPY = NumpyDirectory(np.zeros(0, np.int64), 0)


def numpy_search(sorted_keys: np.ndarray, keys: np.ndarray, order: np.ndarray | None = None,
                 directory: Directory | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``keyindex.search`` as it was: the run's directory left unused."""
    return SEARCH(sorted_keys, keys, order, NUMPY)


T = TypeVar("T")


def cpu(function: Callable[..., T], *args: object) -> tuple[float, T]:
    """(CPU seconds, result) of ``function(*args)``."""
    start = time.process_time()
    result = function(*args)
    return time.process_time() - start, result


def search_part(sizes: list[int], needles: int, repeat: int, rng: np.random.Generator) -> None:
    print(f"search: {needles:,} sorted needles (a tenth stored keys), best of {repeat}")
    for size in sizes:
        keys = np.sort(rng.integers(-2**63, 2**63 - 1, size=size, dtype=np.int64))
        asked = np.sort(np.concatenate([
            rng.integers(-2**63, 2**63 - 1, size=needles - needles // 10, dtype=np.int64),
            rng.choice(keys, needles // 10)]))
        made, directory = cpu(Directory.of, keys)
        old, new = [], []
        for _ in range(repeat):
            seconds, before = cpu(np.searchsorted, keys, asked)
            old.append(seconds)
            seconds, after = cpu(directory.positions, keys, asked)
            new.append(seconds)
            assert np.array_equal(before, after)
        print(f"  run of {size:>11,} keys: numpy {min(old):.3f} s, directory {min(new):.3f} s "
              f"({min(old) / min(new):.1f}x; the directory made in {made:.3f} s, "
              f"{directory.starts.nbytes / 2**20:.1f} MiB); load {os.getloadavg()[0]:.2f}")
        del keys


def writes_part(home: Path, writes: int, batch: int, rng: np.random.Generator) -> None:
    print(f"writes: {writes} keyed writes of {batch:,} new keys into one labels partition")
    lake = Lake(home, index_threshold=0)
    table_dir = lake.table_dir("labels")
    held = 0
    for number in range(writes):
        keys = np.unique(rng.integers(0, 2**64 - 1, size=batch, dtype=np.uint64, endpoint=True))
        if number:
            index = KeyIndex(table_dir, {"engine_id": "sf", "depth": 12})
            delta = lake.current("labels")
            assert delta is not None
            live = [basename(uri) for uri in delta.file_uris()]
            needles = keys.view(np.int64)
            times = {}
            for name, search in (("numpy", numpy_search), ("directory", keyindex.search)):
                keyindex.search = search
                try:
                    times[name], found = cpu(index.lookup, needles, live, live, False)
                finally:
                    keyindex.search = SEARCH
                assert not found.present.any()
            if number % max(1, writes // 10) == 0 or number == writes - 1:
                print(f"  {held:>11,} keys held, {len(index.runs())} runs: lookup numpy "
                      f"{times['numpy']:.3f} s, directory {times['directory']:.3f} s "
                      f"({times['numpy'] / times['directory']:.1f}x)")
        start = time.process_time()
        lake.write("labels", pa.table({
            "position_key": pa.array(keys, pa.uint64()), "engine_id": ["sf"] * len(keys),
            "depth": pa.array([12] * len(keys), pa.int32()),
            "score_cp": pa.array(rng.integers(-500, 500, len(keys)), pa.int32())}), unique=True)
        held += len(keys)
        if number == writes - 1:
            print(f"  the last write: {time.process_time() - start:.2f} CPU s "
                  f"({held:,} keys held after it)")



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="10000000,100000000,300000000")
    parser.add_argument("--needles", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--writes", type=int, default=60)
    parser.add_argument("--batch", type=int, default=1_000_000)
    parser.add_argument("--home", default=None)
    args = parser.parse_args()
    rng = np.random.default_rng(51)
    search_part([int(n) for n in args.runs.split(",") if n], args.needles, args.repeat, rng)
    if args.writes:
        home = Path(args.home or tempfile.mkdtemp(prefix="chesslab_key_search_"))
        try:
            writes_part(home, args.writes, args.batch, rng)
        finally:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
