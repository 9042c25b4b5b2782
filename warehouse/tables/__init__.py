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
    """One Delta Lake table of the lake.

    name: the folder under ``lake/`` and the DuckDB view name.
    schema: the Arrow schema of the table, partition columns included.
    key: columns that identify a row; a keyed table stores each key once (a write drops the
        keys already stored), so a fact written twice (parallel writers, a resumed run) is
        stored once.
    partition_by: hive partition columns (``lake/labels/engine_id=.../depth=7/*.parquet``).
    required: columns every written row must give (not null) besides the key and the
        partition columns, which are always required.
    nullable_key: key columns that may be null (an EPD record has no game index); stored
        keys are matched null-safely (``is not distinct from``).
    """

    name: str
    schema: pa.Schema
    key: tuple[str, ...] = ()
    partition_by: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    nullable_key: tuple[str, ...] = ()
    doc: str = ""
    columns_doc: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = set(self.schema.names)
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
