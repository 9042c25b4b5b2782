"""Table definitions. Each module here declares ``TABLES: list[Table]``; they are all
collected into :data:`REGISTRY`, so an area adds a table by adding a module, not by editing
a shared file.

Every column is declared with its meaning, which ``chesslab sql --describe TABLE`` prints
(:mod:`warehouse.describe`): the documentation of a column is its declaration.
"""
from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Sequence
from dataclasses import dataclass, field

import pyarrow as pa

#: The type of every timestamp column: microseconds, UTC (``engines.stamps.utc_now`` values).
NOW = pa.timestamp("us", tz="UTC")

#: One column: its name, Arrow type and meaning.
Column = tuple[str, pa.DataType, str]


@dataclass(frozen=True)
class Table:
    """One Delta Lake table of the lake.

    name: the folder under ``lake/`` and the DuckDB view name.
    columns: ``(name, Arrow type, meaning)`` of every column, partition columns included;
        ``schema`` (the Arrow schema) and ``columns_doc`` (name -> meaning) are made from them.
        A column without a meaning is an error.
    key: columns that identify a row; a keyed table stores each key once (a write drops the
        keys already stored), so a fact written twice (parallel writers, a resumed run) is
        stored once.
    partition_by: hive partition columns (``lake/labels/engine_id=.../depth=7/*.parquet``).
    required: columns every written row must give (not null) besides the key and the
        partition columns, which are always required.
    nullable_key: key columns that may be null (an EPD record has no game index); stored
        keys are matched null-safely (``is not distinct from``).
    sort_by: an unsigned 64-bit column ``compact`` sorts each partition's files by (so each
        row group covers a narrow key range); a connection for a key range
        (``connect(key_range=...)``) reads the row groups of that range only.
    """

    name: str
    columns: Sequence[Column]
    key: tuple[str, ...] = ()
    partition_by: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    nullable_key: tuple[str, ...] = ()
    sort_by: str | None = None
    doc: str = ""
    schema: pa.Schema = field(init=False, repr=False, compare=False)
    columns_doc: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", tuple(self.columns))
        for name, _, meaning in self.columns:
            if not meaning.strip():
                raise ValueError(f"table {self.name!r}: column {name!r} has no meaning")
        object.__setattr__(self, "schema", pa.schema([(n, t) for n, t, _ in self.columns]))
        object.__setattr__(self, "columns_doc", {n: m.strip() for n, _, m in self.columns})
        names = set(self.schema.names)
        if self.sort_by is not None and self.schema.field(self.sort_by).type != pa.uint64():
            raise ValueError(f"table {self.name!r}: sort_by {self.sort_by!r} must be uint64")
        for column in (*self.key, *self.partition_by, *self.required, *self.nullable_key):
            if column not in names:
                raise ValueError(f"table {self.name!r}: unknown column {column!r}")
        for column in self.nullable_key:
            if column not in self.key or column in self.partition_by:
                raise ValueError(f"table {self.name!r}: nullable key column {column!r} must be "
                                 f"a key column and not a partition column")

    @property
    def required_columns(self) -> tuple[str, ...]:
        """Key (but nullable key), partition and declared required columns, each once, in
        schema order."""
        wanted = {*self.key, *self.partition_by, *self.required} - set(self.nullable_key)
        return tuple(name for name in self.schema.names if name in wanted)


def _collect() -> dict[str, Table]:
    registry: dict[str, Table] = {}
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        for table in getattr(module, "TABLES", []):
            if table.name in registry:
                raise ValueError(f"table {table.name!r} declared twice")
            registry[table.name] = table
    return registry


REGISTRY: dict[str, Table] = _collect()


def table(name: str) -> Table:
    """The table called ``name``; KeyError naming it otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown warehouse table: {name!r}") from None
