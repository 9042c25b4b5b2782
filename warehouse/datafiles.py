"""The data files of a table's Delta version, as its log lists them.

:func:`file_index` gives one row per file of the version: its ``uri`` and Delta's
``partition.*``, ``min.*`` and ``max.*`` columns (the statistics the log keeps), from which a
keyed write picks the files that can hold a batch's keys and ``compact`` the partitions to
sort. A file is named by its :func:`basename`, unique in the table. Nothing here reads a data
file.

>>> basename("/home/lake/labels/engine_id=sf/depth=7/part-00001-c0ffee.zstd.parquet")
'part-00001-c0ffee.zstd.parquet'
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable

from warehouse.tables import Table


def file_index(delta: DeltaTable) -> pa.Table:
    """The current version's files: ``uri`` plus Delta's ``partition.*``, ``min.*`` and
    ``max.*`` columns (the log's statistics)."""
    actions = pa.table(delta.get_add_actions(flatten=True))
    uris = {basename(uri): uri for uri in delta.file_uris()}
    return actions.append_column("uri", pa.array(
        [uris[basename(path)] for path in actions.column("path").to_pylist()], pa.string()))


def basename(path: str) -> str:
    """A data file's name (``part-<n>-<uuid>...parquet``, unique in the table)."""
    return path.rsplit("/", 1)[-1]


def row_key(spec: Table) -> list[str]:
    """The key columns stored in the files (partition columns live in the folder names)."""
    return [c for c in spec.key if c not in spec.partition_by]


def partition_values(spec: Table, group: pa.Table) -> dict[str, Any]:
    """The partition values of a group of one partition ({} when unpartitioned)."""
    return {c: group.column(c)[0].as_py() for c in spec.partition_by}


def partition_combos(spec: Table, data: pa.Table) -> list[dict[str, Any]]:
    """The partition values ``data`` holds ([{}] when unpartitioned)."""
    if not spec.partition_by:
        return [{}]
    return data.select(list(spec.partition_by)).group_by(
        list(spec.partition_by)).aggregate([]).to_pylist()


def partition_groups(spec: Table, data: pa.Table) -> list[pa.Table]:
    """``data`` split by the table's partition values (one group when unpartitioned or when
    every row is in one partition)."""
    combos = partition_combos(spec, data)
    if len(combos) == 1:
        return [data]
    return [data.filter(matches(data, combo)) for combo in combos]


def matches(data: pa.Table, values: Mapping[str, Any]) -> pa.ChunkedArray:
    """A mask of the rows of ``data`` whose columns equal ``values``."""
    mask = None
    for column, value in values.items():
        equal = pc.equal(data.column(column), pa.scalar(value, data.schema.field(column).type))
        mask = equal if mask is None else pc.and_(mask, equal)
    return mask
