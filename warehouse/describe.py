"""What a table or view holds, column by column (``chesslab sql --describe NAME``).

A table's columns and their meanings are its declaration in ``warehouse/tables/``; a named
view's are the ``-- column NAME: meaning`` lines of its ``.sql`` file, and its types come from
DuckDB over empty tables, so no warehouse is needed. The text printed is the text the code
declares: the two cannot drift.

>>> print(describe("engines"))  # doctest: +ELLIPSIS
table engines: Engine identities: name, version and canonical options, hashed into engine_id;
labels.engine_id and tournament_players.engine_id reference it.
key: engine_id
<BLANKLINE>
engine_id   VARCHAR                   name-version-<8 hex of sha256(name, version, options)>
name        VARCHAR                   the engine's name: its UCI id name without the version, or
                                      the own program (chesslab alphabeta)
...
created_at  TIMESTAMP WITH TIME ZONE  when the identity was first recorded
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import duckdb

from warehouse.catalog import KEPT_PARTS, SQL_DIR, computed_part_sql, create_macros, named_views
from warehouse.derived import derived_tables
from warehouse.errors import WarehouseError
from warehouse.tables import REGISTRY

COLUMN_DOC = re.compile(r"^--\s*column\s+(\w+):\s*(.+?)\s*$", re.MULTILINE)
#: Width of the text of a meaning before it wraps.
WIDTH = 100


class UnknownNameError(WarehouseError):
    """``--describe`` of a name that is neither a table nor a named view."""


@dataclass(frozen=True)
class ColumnDoc:
    """One column: its name, SQL type and meaning."""

    name: str
    type: str
    meaning: str


@dataclass(frozen=True)
class Description:
    """A table or view: what one row is, its key (tables) and its columns."""

    kind: str                 # table or view
    name: str
    doc: str
    columns: tuple[ColumnDoc, ...]
    key: tuple[str, ...] = ()
    partition_by: tuple[str, ...] = ()


def describe(name: str) -> str:
    """The description of table or view ``name`` as text; UnknownNameError naming the
    tables and views otherwise."""
    return render(table_description(name) if name in REGISTRY else view_description(name))


def table_description(name: str) -> Description:
    spec = REGISTRY[name]
    types = empty_catalog().execute(f"describe {name}").fetchall()
    sql_types = {row[0]: row[1] for row in types}
    columns = tuple(ColumnDoc(column, sql_types[column], spec.columns_doc[column])
                    for column in spec.schema.names)
    return Description("table", name, spec.doc, columns, spec.key, spec.partition_by)


def view_description(name: str) -> Description:
    texts = dict(named_views())
    if name not in texts:
        known = ", ".join([*sorted(REGISTRY), *sorted(texts)])
        raise UnknownNameError(f"no table or view called {name!r}; there are: {known}")
    text = (SQL_DIR / "views" / f"{name}.sql").read_text()
    meanings = dict(COLUMN_DOC.findall(text))
    rows = empty_catalog().execute(f"describe {name}").fetchall()
    columns = tuple(ColumnDoc(row[0], row[1], meanings.get(row[0], "")) for row in rows)
    return Description("view", name, view_doc(text), columns)


def view_doc(text: str) -> str:
    """The header comment of a view file, without its ``depends`` and ``column`` lines."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("--"):
            break
        if not COLUMN_DOC.match(line) and not line.lstrip("- ").startswith("depends:"):
            lines.append(line[2:].strip())
    return " ".join(lines)


def view_columns_documented(name: str) -> tuple[list[str], list[str]]:
    """(columns of view ``name`` without a ``-- column`` line, ``-- column`` lines naming no
    column of the view): both empty when its documentation matches its select."""
    description = view_description(name)
    text = (SQL_DIR / "views" / f"{name}.sql").read_text()
    names = {column.name for column in description.columns}
    undocumented = [column.name for column in description.columns if not column.meaning]
    stray = [column for column, _ in COLUMN_DOC.findall(text) if column not in names]
    return undocumented, stray


def empty_catalog() -> duckdb.DuckDBPyConnection:
    """Every table empty, with the named views over them: the types without a warehouse."""
    con = duckdb.connect(":memory:")
    create_macros(con)
    for spec in REGISTRY.values():
        con.register(spec.name, spec.schema.empty_table())
    for derived in derived_tables():
        con.execute(f"create or replace view {derived.name} as {derived.view_sql}")
        for part in KEPT_PARTS if derived.kept_in else ():
            con.execute(f"create or replace view {derived.name}_{part} as "
                        f"{computed_part_sql(derived, part)}")
    for view, sql in named_views():
        con.execute(f"create or replace view {view} as {sql}")
    return con


def render(description: Description) -> str:
    """``kind name: doc``, the key, then one line per column (name, type, meaning), the
    meaning wrapped under itself."""
    head = wrap(f"{description.kind} {description.name}: {description.doc}", WIDTH)
    if description.key:
        head.append(f"key: {', '.join(description.key)}")
    if description.partition_by:
        head.append(f"partitioned by: {', '.join(description.partition_by)}")
    name_width = max(len(c.name) for c in description.columns)
    type_width = max(len(c.type) for c in description.columns)
    indent = name_width + type_width + 4
    lines = [*head, ""]
    for column in description.columns:
        text = wrap(column.meaning or "(no description)", max(40, WIDTH - indent))
        lines.append(f"{column.name:<{name_width}}  {column.type:<{type_width}}  {text[0]}")
        lines += [" " * indent + rest for rest in text[1:]]
    return "\n".join(lines)


def wrap(text: str, width: int) -> list[str]:
    """Words of ``text`` in lines of at most ``width`` characters (a longer word alone)."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines or [""]
