"""Compaction: a table's small files merged (sorted, where the table says), old files vacuumed.

A table with ``sort_by`` has each partition rewritten as files sorted by that column, in row
groups of SORTED_ROW_GROUP rows (a key range then reads only the row groups that overlap
it), but only a partition that needs it (:func:`unsorted_partitions`: more files than its
bytes make, or row groups whose ranges overlap); a table without is compacted by Delta's
optimize. The vacuum keeps the files of versions newer than the retention (time travel).

>>> disjoint([(0, 9), (10, 19)]), disjoint([(0, 10), (10, 19)]), disjoint([(0, 9), None])
(True, False, False)
"""
from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from deltalake import DeltaTable, WriterProperties

from warehouse.commits import STAGING, with_retries
from warehouse.datafiles import file_index
from warehouse.encoding import compact_options
from warehouse.tables import Table

# compact's sort of a table with ``sort_by`` (a one-column z-order is a sort): rows per row
# group (a key range reads the row groups that overlap it), bytes per file (Delta's default),
# and DataFusion's memory before it spills to disk.
SORTED_ROW_GROUP = 1 << 17
SORTED_FILE_BYTES = 100 << 20
SORTED_PROPERTIES = WriterProperties(compression="ZSTD", max_row_group_size=SORTED_ROW_GROUP)
SORT_SPILL_BYTES = 512 << 20
# Delta's own default: files of versions older than this survive a vacuum (time travel).
DEFAULT_RETAIN_HOURS = 168



def compact(spec: Table, folder: Path, retain_hours: float = DEFAULT_RETAIN_HOURS,
            merge: bool = True) -> int:
    """Compact the table ``spec`` in ``folder`` (which has a commit); returns its files after.

    ``merge`` False: no optimize, only what follows it (a table a derived table was just
    written into, warehouse/refresh.py: merging its files would drop the derived columns).
    Delta optimize (small files into large ones, per partition; a table with ``sort_by``:
    each partition not yet one sorted file rewritten sorted by that column, in row groups of
    SORTED_ROW_GROUP rows) then vacuum files no version newer than ``retain_hours`` uses,
    checkpoint, and remove the staging folders of killed writers older than that."""
    name = spec.name
    if merge and spec.sort_by is None:
        with_retries(name, lambda: DeltaTable(str(folder)).optimize.compact(
            **compact_options(name)))
    elif merge and spec.sort_by is not None:  # the sort makes a file of each partition
        key = spec.sort_by
        for filters in unsorted_partitions(spec, DeltaTable(str(folder))):
            with_retries(name, lambda f=filters: DeltaTable(  # type: ignore[misc]
                str(folder)).optimize.z_order(
                    [key], partition_filters=f or None, target_size=SORTED_FILE_BYTES,
                    max_spill_size=SORT_SPILL_BYTES, writer_properties=SORTED_PROPERTIES))
    delta = DeltaTable(str(folder))
    delta.vacuum(retention_hours=int(retain_hours), enforce_retention_duration=False,
                 dry_run=False)
    # a checkpoint of the compacted version, then the log before it that is older than
    # the table's log retention (Delta's delta.logRetentionDuration, 30 days) goes
    delta.create_checkpoint()
    delta.cleanup_metadata()
    for staged in (folder / STAGING).glob("*"):   # of killed writers
        if time.time() - staged.stat().st_mtime > retain_hours * 3600:
            shutil.rmtree(staged, ignore_errors=True)
    return len(delta.file_uris())


def unsorted_partitions(spec: Table, delta: DeltaTable) -> list[list[tuple[str, str, str]]]:
    """The partitions (as Delta partition filters) of a table with ``sort_by`` to sort: those
    of more files than their bytes make at SORTED_FILE_BYTES a file (small files to merge),
    and those whose row groups do not hold disjoint ranges of that column (SORTED_ROW_GROUP
    rows at most each, so that an unsorted file of one large row group is sorted too)."""
    assert spec.sort_by is not None
    by_partition: dict[tuple[tuple[str, str], ...], list[tuple[str, int]]] = {}
    for row in file_index(delta).to_pylist():
        values = tuple((c, str(row[f"partition.{c}"])) for c in spec.partition_by)
        by_partition.setdefault(values, []).append((row["uri"], int(row["size_bytes"])))
    return [[(c, "=", v) for c, v in values] for values, files in sorted(by_partition.items())
            if len(files) > 1 + sum(size for _, size in files) // SORTED_FILE_BYTES
            or not disjoint([g for uri, _ in files for g in row_group_ranges(uri, spec.sort_by)])]


def row_group_ranges(uri: str, column: str) -> list[tuple[int, int] | None]:
    """(min, max) of ``column`` in each row group of a Parquet file (from its footer), None
    for a group without statistics or of more than SORTED_ROW_GROUP rows."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(uri).metadata
    index = meta.schema.to_arrow_schema().get_field_index(column)
    ranges: list[tuple[int, int] | None] = []
    for group in range(meta.num_row_groups):
        stats = meta.row_group(group).column(index).statistics
        small = meta.row_group(group).num_rows <= SORTED_ROW_GROUP
        ranges.append((stats.min, stats.max) if small and stats is not None and
                      stats.has_min_max else None)
    return ranges


def disjoint(ranges: Sequence[tuple[int, int] | None]) -> bool:
    """Whether the ranges (None: unknown) are known and overlap nowhere."""
    if any(r is None for r in ranges):
        return False
    known = sorted(r for r in ranges if r is not None)
    return all(a[1] < b[0] for a, b in zip(known, known[1:], strict=False))
