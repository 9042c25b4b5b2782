"""Table definitions. Each module here declares ``TABLES: list[Table]``; they are all
collected into :data:`REGISTRY`, so an area adds a table by adding a module, not by editing
a shared file."""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field

import pyarrow as pa


@dataclass(frozen=True)
class Table:
    """One Parquet table of the lake.

    name: the folder under ``lake/`` and the DuckDB view name.
    schema: the Arrow schema of every part, partition columns included.
    key: columns that identify a row; the view keeps one row per key (parallel writers may
        write the same fact twice) and ``compact`` drops the duplicates on disk.
    partition_by: hive partition columns (``lake/labels/engine_id=.../depth=7/part-*.parquet``).
    """

    name: str
    schema: pa.Schema
    key: tuple[str, ...] = ()
    partition_by: tuple[str, ...] = ()
    doc: str = ""
    columns_doc: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = set(self.schema.names)
        for column in (*self.key, *self.partition_by):
            if column not in names:
                raise ValueError(f"table {self.name!r}: unknown column {column!r}")


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
