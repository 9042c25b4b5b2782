#!/usr/bin/env python3
"""compact's sort of a labels partition: DuckDB's sort streamed into files one after another
(``warehouse.compaction.sort_files``, compact now) against the one-column Delta z-order compact
ran before (deltalake's ``optimize.z_order``, DataFusion's sort spilling past 2 GB, the same
writer settings), in one run on one partition of a home.

Each arm runs in a child process (its peak RSS is its own) on a copy of the table (the
partition's files copied, the others linked, the log copied), sorts the partition whole and
prints its wall and CPU seconds, peak RSS, the files and bytes it wrote, whether their row
groups are one run (disjoint key ranges) and a digest of the rows, which must agree.

    .venv/bin/python benchmarks/sort_partition.py HOME/lake/labels engine_id=sf-text/depth=9
"""
from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import duckdb  # noqa: E402
from deltalake import DeltaTable  # noqa: E402

from warehouse import compaction  # noqa: E402
from warehouse.encoding import sorted_properties  # noqa: E402
from warehouse.tables import table  # noqa: E402

ARMS = ("z-order (before)", "sort_files (now)")
SPILL_BYTES = 2 << 30   # compact's DataFusion pool before (SORT_SPILL_BYTES)


def copy_table(source: Path, partition: str, into: Path) -> Path:
    """The table at ``source`` with ``partition``'s files copied and the others linked."""
    target = into / "table"
    shutil.copytree(source / "_delta_log", target / "_delta_log")
    for folder in source.glob("*=*/*=*"):
        name = str(folder.relative_to(source))
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        if name == partition:
            shutil.copytree(folder, target / name)
        else:
            (target / name).symlink_to(folder)
    return target


def run_arm(arm: int, source: Path, partition: str) -> dict[str, object]:
    """One arm, in this process."""
    spec = table("labels")
    values = dict(part.split("=", 1) for part in partition.split("/"))
    filters = [(c, "=", v) for c, v in values.items()]
    with tempfile.TemporaryDirectory(dir=source.parent) as scratch:
        folder = copy_table(source, partition, Path(scratch))
        usage = resource.getrusage(resource.RUSAGE_SELF)
        began, cpu = time.perf_counter(), usage.ru_utime + usage.ru_stime
        if arm == 0:
            DeltaTable(str(folder)).optimize.z_order(
                ["position_key"], partition_filters=filters,   # type: ignore[arg-type]
                target_size=compaction.SORTED_FILE_BYTES, max_spill_size=SPILL_BYTES,
                writer_properties=sorted_properties("labels", "position_key", None,
                                                    compaction.SORTED_ROW_GROUP))
        else:
            [files] = [files for found, files in compaction.sorted_partitions(
                spec, DeltaTable(str(folder))) if found == filters]
            compaction.sort_files(spec, folder, files, values)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        wall, cpu = time.perf_counter() - began, usage.ru_utime + usage.ru_stime - cpu
        uris = [u.removeprefix("file://") for u in DeltaTable(str(folder)).file_uris()
                if f"/{partition}/" in u]
        digest = duckdb.connect().execute(
            "select count(*), sum(hash(position_key, score_cp, best_move, pv))::varchar "
            "from read_parquet($files)", {"files": uris}).fetchone()
        ranges = [r for uri in uris for r in compaction.row_group_ranges(uri, "position_key")]
        return {"seconds": wall, "cpu_seconds": cpu, "peak_gib": usage.ru_maxrss / 2**20,
                "files": len(uris), "bytes": sum(Path(u).stat().st_size for u in uris),
                "one_run": compaction.disjoint(ranges), "rows": digest}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table", type=Path, help="a lake's labels folder")
    parser.add_argument("partition", help="engine_id=.../depth=...")
    parser.add_argument("--arm", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.arm is not None:
        print(json.dumps(run_arm(args.arm, args.table.resolve(), args.partition)))
        return
    results = []
    for arm, title in enumerate(ARMS):
        done = subprocess.run([sys.executable, __file__, str(args.table), args.partition,
                               "--arm", str(arm)], capture_output=True, text=True, check=False)
        if done.returncode:
            raise SystemExit(f"{title} failed:\n{done.stderr[-3000:]}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        results.append(result)
        print(f"{title}: {result['seconds']:.1f} s ({result['cpu_seconds']:.1f} s CPU), peak RSS "
              f"{result['peak_gib']:.2f} GiB; {result['files']} files, {result['bytes']:,} "
              f"bytes, one run: {result['one_run']}; rows {result['rows']}", flush=True)
    before, now = results
    if before["rows"] != now["rows"] or not now["one_run"]:
        raise SystemExit("the arms' rows differ, or the sort is not one run")
    print(f"ratio before / now: {before['seconds'] / now['seconds']:.2f}x wall, "
          f"{before['cpu_seconds'] / now['cpu_seconds']:.2f}x CPU, peak RSS "
          f"{now['peak_gib'] / before['peak_gib']:.2f}x")


if __name__ == "__main__":
    main()
