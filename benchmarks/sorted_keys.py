#!/usr/bin/env python3
"""Sorted key columns delta-encoded: bytes and read time, against the settings before (issue 51 §1).

Takes files of a home's sorted tables (a labels partition compact sorted, positions' files
holding position_facts) and writes each again, into a temporary Delta table, as compact
writes it now (``warehouse.encoding.sorted_properties``: the key delta-encoded, no
dictionary) and as it wrote it before (labels: zstd, deltalake's defaults otherwise;
positions: the key plain), in one run. Prints each setting's bytes per row, the key
column's, the write's CPU seconds, and DuckDB's time to read the key column and to count a
1/256 key range (best of three, one thread); the answers must agree.

``--rewrite`` then writes the whole home again as compact writes it now (every labels
partition sorted whole, position_facts computed whole: positions' files rewritten, every key
index rebuilt) and prints every byte under ``lake/`` before and after, by table and kind and
for labels' and positions' columns (``benchmarks/lake_bytes.py``'s count). It changes the
home (the rows stay the same): use a home kept for measurements.

    .venv/bin/python benchmarks/sorted_keys.py HOME [--files 2] [--rewrite]
"""
from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import ColumnProperties, WriterProperties, write_deltalake

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.lake_bytes import lake_bytes  # noqa: E402
from warehouse import Lake, compaction, connect  # noqa: E402
from warehouse.commits import write_lock  # noqa: E402
from warehouse.compaction import SORTED_ROW_GROUP  # noqa: E402
from warehouse.derived import DERIVED_DIR  # noqa: E402
from warehouse.encoding import COMPACT_LEVEL, sorted_properties  # noqa: E402
from warehouse.refresh import BATCH_ROWS, compact_lake, refresh  # noqa: E402
from warehouse.tables import table  # noqa: E402

BEFORE = {  # the settings compact wrote these files with before the key was delta-encoded
    "labels": WriterProperties(compression="ZSTD", max_row_group_size=SORTED_ROW_GROUP),
    "positions": WriterProperties(
        compression="ZSTD", compression_level=COMPACT_LEVEL["positions"],
        max_row_group_size=BATCH_ROWS,
        column_properties={c: ColumnProperties(dictionary_enabled=False)
                           for c in ("position_key", "fen")}),
}
NOW = {"labels": sorted_properties("labels", "position_key", None, SORTED_ROW_GROUP),
       "positions": sorted_properties("positions", "position_key", COMPACT_LEVEL["positions"],
                                      BATCH_ROWS)}


def best_of_three(con: duckdb.DuckDBPyConnection, sql: str) -> tuple[float, object]:
    times, answer = [], None
    for _ in range(3):
        began = time.perf_counter()
        answer = con.sql(sql).fetchall()
        times.append(time.perf_counter() - began)
    return min(times), answer


def measure(path: Path, properties: WriterProperties, scratch: Path) -> dict[str, Any]:
    rows = pq.read_table(path)
    out = scratch / "table"
    shutil.rmtree(out, ignore_errors=True)
    began = time.process_time()
    write_deltalake(str(out), rows, writer_properties=properties, target_file_size=1 << 40)
    cpu = time.process_time() - began
    [written] = out.glob("*.parquet")
    meta = pq.ParquetFile(written).metadata
    key = sum(meta.row_group(g).column(0).total_compressed_size
              for g in range(meta.num_row_groups))
    con = duckdb.connect()
    con.execute("set threads = 1")
    scan, total = best_of_three(con, f"select sum(position_key % 1000), count(*) "
                                     f"from read_parquet('{written}')")
    low = rows.column("position_key")[0].as_py()
    ranged, counted = best_of_three(con, f"select count(*) from read_parquet('{written}') "
                                         f"where position_key between {low} and "
                                         f"{low + (1 << 56)}")
    return {"rows": rows.num_rows, "file": written.stat().st_size, "key": key, "cpu": cpu,
            "scan": scan, "range": ranged, "answers": (total, counted)}


def timed(what: str, step: Any) -> Any:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    began, cpu = time.perf_counter(), usage.ru_utime + usage.ru_stime
    result = step()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"{what}: {time.perf_counter() - began:.1f} s, "
          f"{usage.ru_utime + usage.ru_stime - cpu:.1f} CPU s", flush=True)
    return result


def rewrite(home: Path) -> None:
    """The whole home written again with compact's settings now; bytes before and after."""
    lake = Lake(home)
    before = lake_bytes(home)
    plan = compaction.plan
    compaction.plan = lambda files: ("whole", [])     # every partition sorted again
    try:
        timed("labels sorted whole", lambda: lake.compact("labels", retain_hours=0))
    finally:
        compaction.plan = plan
    facts = home / "lake" / DERIVED_DIR / "position_facts"
    with tempfile.TemporaryDirectory(prefix="chesslab-facts-", dir=home) as aside:
        if facts.is_dir():      # without its manifest, position_facts is computed whole
            shutil.move(facts, Path(aside) / "position_facts")
        timed("position_facts computed whole", lambda: refresh(lake, ["position_facts"]))
    timed("compact", lambda: compact_lake(lake, retain_hours=0))
    partitions = connect(lake).sql("select distinct engine_id, depth from labels"
                                   ).to_arrow_table()
    for name, data in (("labels", partitions),
                       ("positions", pa.table({"position_key": pa.array([], pa.uint64())}))):
        writer = lake.writer(table(name))
        with write_lock(writer.folder):
            timed(f"{name}' key index rebuilt",
                  lambda w=writer, d=data: w.refresh_index(w.latest(), d))
    after = lake_bytes(home)
    print(f"{'':44}{'before':>16}{'now':>16}")
    for section in ("kinds", "columns"):
        for key in sorted(set(before[section]) | set(after[section])):
            if section == "columns" and not key.startswith(("labels.", "positions.")):
                continue
            print(f"  {key:42}{before[section].get(key, 0):>16,}{after[section].get(key, 0):>16,}")
    print(f"  {'total':42}{before['total']:>16,}{after['total']:>16,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home", type=Path)
    parser.add_argument("--files", type=int, default=2, help="the largest files of each table")
    parser.add_argument("--rewrite", action="store_true",
                        help="then write the whole home again as compact writes it now")
    args = parser.parse_args()
    lake = Lake(args.home)
    with tempfile.TemporaryDirectory(prefix="chesslab-sorted-") as scratch:
        for name in ("labels", "positions"):
            parts = sorted(lake.parts(name), key=lambda p: -p.stat().st_size)[:args.files]
            for path in parts:
                runs = {code: measure(path, settings[name], Path(scratch))
                        for code, settings in (("before", BEFORE), ("now", NOW))}
                rows = runs["now"]["rows"]
                assert runs["now"]["answers"] == runs["before"]["answers"], path
                print(f"{name} {path.relative_to(lake.table_dir(name))}: {rows:,} rows")
                for code, run in runs.items():
                    print(f"  {code:7} {run['file'] / rows:6.2f} B/row, key "
                          f"{run['key'] / rows:5.2f} B/row, write {run['cpu']:.2f} CPU s, "
                          f"key scan {run['scan']:.3f} s, 1/256 range {run['range']:.4f} s")
                before, now = runs["before"], runs["now"]
                print(f"  now/before: bytes {now['file'] / before['file']:.3f}x, "
                      f"key scan {now['scan'] / before['scan']:.2f}x")
    if args.rewrite:
        rewrite(args.home)


if __name__ == "__main__":
    main()
