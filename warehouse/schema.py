"""Rows as a table stores them: checked against its declared schema, in Delta's types.

:func:`conform` gives a batch exactly its table's schema (:mod:`warehouse.tables`): an
unknown column, or a missing or null required one, is a WarehouseError naming the table and
the column. Delta has no unsigned integers: :func:`to_storage` stores a ``uint64`` column
(position keys) as the signed 64-bit integer with the same bits, which :meth:`Lake.read` and
the views give back unsigned. :func:`check_partition_values` refuses a partition value that
cannot name a folder.

>>> storage_schema(pa.schema([("position_key", pa.uint64()), ("fen", pa.string())])).types
[DataType(int64), DataType(string)]
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from warehouse.errors import WarehouseError
from warehouse.tables import Table


def conform(spec: Table, rows: pa.Table | Sequence[Mapping[str, Any]]) -> pa.Table:
    """Rows as an Arrow table with exactly the table's schema; WarehouseError naming the
    table and column for an unknown column or a missing (or null) required one."""
    given = rows.column_names if isinstance(rows, pa.Table) \
        else list(dict.fromkeys(name for row in rows for name in row))
    unknown = [c for c in given if c not in spec.schema.names]
    if unknown:
        raise WarehouseError(f"table {spec.name!r}: unknown column {unknown[0]!r}")
    if isinstance(rows, pa.Table):
        data = rows
    else:
        data = pa.Table.from_pylist(list(rows), schema=spec.schema) if rows \
            else spec.schema.empty_table()
    if data.num_rows == 0:
        return spec.schema.empty_table()
    for column in spec.required_columns:
        if column not in given or data.column(column).null_count:
            raise WarehouseError(f"table {spec.name!r}: required column {column!r} is "
                                 f"{'missing' if column not in given else 'null'}")
    return pa.Table.from_arrays([
        data.column(f.name).cast(f.type) if f.name in data.column_names
        else pa.nulls(data.num_rows, f.type)
        for f in spec.schema], schema=spec.schema)


def check_partition_values(spec: Table, column: str, values: list[Any]) -> None:
    for value in values:
        if value is None or "/" in str(value) or str(value) in ("", ".", ".."):
            raise WarehouseError(f"table {spec.name!r}: bad partition value {column}={value!r}")


def storage_type(kind: pa.DataType) -> pa.DataType:
    """The Delta-storable type: unsigned 64-bit integers become signed (same bits)."""
    return pa.int64() if kind == pa.uint64() else kind


def storage_schema(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f.with_type(storage_type(f.type)) for f in schema])


def to_storage(data: pa.Table) -> pa.Table:
    return data.cast(storage_schema(data.schema), safe=False)
