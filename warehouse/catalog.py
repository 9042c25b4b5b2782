"""The DuckDB catalog: one view per lake table plus the named views in ``warehouse/sql``.

Views read the Parquet parts directly, so a connection always sees every committed part and
never blocks a writer. A table's view keeps one row per key, which hides the duplicates that
parallel writers or a resumed run may leave until ``compact`` removes them.
"""
from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from warehouse.lake import Lake, WarehouseError
from warehouse.tables import REGISTRY, Table

log = logging.getLogger(__name__)

SQL_DIR = Path(__file__).parent / "sql"
READ_ONLY_STATEMENTS = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}
DUCKDB_TYPES = {pa.int32(): "INTEGER", pa.int64(): "BIGINT", pa.string(): "VARCHAR"}


class QueryError(WarehouseError):
    """A query was refused or failed: quotes the query's first line."""


def connect(home: str | os.PathLike[str] | Lake | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the warehouse's views over ``home``'s lake."""
    lake = home if isinstance(home, Lake) else Lake(home)
    con = duckdb.connect(":memory:")
    for spec in REGISTRY.values():
        create_table_view(con, lake, spec)
    for name, sql in named_views():
        con.execute(f"create or replace view {name} as {sql}")
    return con


def create_table_view(con: duckdb.DuckDBPyConnection, lake: Lake, spec: Table) -> None:
    if not lake.parts(spec.name):
        con.register(spec.name, spec.schema.empty_table())
        return
    con.execute(f"create or replace view {spec.name} as {table_view_sql(lake, spec)}")


def table_view_sql(lake: Lake, spec: Table) -> str:
    """``select`` over a table's parts (built from the registry, never from user text)."""
    options = ["union_by_name = true"]
    if spec.partition_by:
        types = ", ".join(
            f"'{c}': '{DUCKDB_TYPES[spec.schema.field(c).type]}'" for c in spec.partition_by)
        options += ["hive_partitioning = true", f"hive_types = {{{types}}}"]
    columns = ", ".join(spec.schema.names)
    source = f"read_parquet('{lake.glob(spec.name)}', {', '.join(options)})"
    if not spec.key:
        return f"select {columns} from {source}"
    return f"select distinct on ({', '.join(spec.key)}) {columns} from {source}"


def named_views() -> list[tuple[str, str]]:
    """(view name, select) for every ``warehouse/sql/views/*.sql``, in file-name order."""
    folder = SQL_DIR / "views"
    return [(p.stem, p.read_text().strip().rstrip(";")) for p in sorted(folder.glob("*.sql"))]


def named_query(name: str) -> str:
    """The text of ``warehouse/sql/queries/<name>.sql``."""
    path = SQL_DIR / "queries" / f"{name}.sql"
    if not path.is_file():
        raise QueryError(f"no named query {name!r} in {path.parent}")
    return path.read_text()


def check_read_only(sql: str) -> None:
    """Refuse anything but SELECT/EXPLAIN statements."""
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryError(f"cannot parse query: {first_line(str(exc))}") from None
    if not statements:
        raise QueryError("empty query")
    for statement in statements:
        if statement.type not in READ_ONLY_STATEMENTS:
            raise QueryError(
                f"only read-only queries are allowed, got {statement.type.name}: "
                f"{first_line(statement.query)!r}")


def query(con: duckdb.DuckDBPyConnection, sql: str,
          params: Sequence[Any] | dict[str, Any] | None = None) -> pa.Table:
    """Run a read-only query and return Arrow; QueryError with DuckDB's reason otherwise."""
    check_read_only(sql)
    try:
        relation = con.sql(sql, params=params)
        return relation.to_arrow_table() if relation is not None else pa.table({})
    except duckdb.Error as exc:
        raise QueryError(f"query failed: {first_line(str(exc))}") from None


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""
