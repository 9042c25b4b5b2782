"""The DuckDB catalog: one view per lake table plus the named views in ``warehouse/sql``.

A table's view reads the Parquet files of the table's current Delta version (its file list,
read from the Delta log when the connection opens), so it never sees a file that no commit
references. Named views declare what they depend on in a ``-- depends: a, b`` header line and
are created in dependency order.

Every connection is locked down once its views exist: file access is off except for reading
the files the views name (``allowed_paths``), and the configuration is locked, so neither a
query nor a function in it can read other files, write files, attach databases or load
extensions. :func:`query` further accepts only SELECT statements (and EXPLAIN of one).
"""
from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
from collections.abc import Sequence, Set
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from warehouse.connection import duckdb_connection, sql_strings
from warehouse.derived import Derived, current_file, derived_tables, kept_columns, kept_files
from warehouse.errors import WarehouseError, first_line
from warehouse.lake import Lake
from warehouse.tables import REGISTRY, Table

if TYPE_CHECKING:  # DuckDB (0.1 s to import) is imported where it is used: ingest workers
    import duckdb  # import this module and need DuckDB only to look up stored rows

log = logging.getLogger(__name__)

SQL_DIR = Path(__file__).parent / "sql"
DUCKDB_TYPES = {pa.int32(): "INTEGER", pa.int64(): "BIGINT", pa.string(): "VARCHAR"}
DEPENDS = re.compile(r"^--\s*depends:(.*)$", re.MULTILINE)
EXPLAIN = re.compile(r"^\s*explain\s+(?:analy[sz]e\s+)?(.*)$", re.IGNORECASE | re.DOTALL)
# What a query's first word may be, and the words of a statement that writes: for statements
# DuckDB parses into several (MULTI), whose kind it does not tell (see only_reads).
READ_STARTS = frozenset({"(", "select", "from", "with", "pivot", "unpivot", "values", "table",
                         "summarize", "describe", "show"})
WRITE_WORDS = frozenset({"insert", "update", "delete", "create", "copy", "attach", "detach",
                         "drop", "alter", "export", "import", "install", "load", "set", "reset",
                         "pragma", "call", "checkpoint", "vacuum", "analyze", "merge",
                         "truncate", "use", "prepare", "execute", "begin", "commit",
                         "rollback", "returning"})
# The lines of a DuckDB error worth keeping after its first: what it would have accepted.
HINT = re.compile(r"^(Candidate bindings|Did you mean|Candidates?)\b", re.IGNORECASE)
# An unsigned 64-bit key is stored as the signed integer with the same bits: the low 63 bits,
# plus 2**63 where the sign bit is set (bit operations: 15x cheaper than a hugeint modulo,
# which made every join on position_key pay more for the conversion than for the join).
UNSIGNED = ("(({c} & 9223372036854775807)::ubigint | (({c} < 0)::ubigint << 63)) as {c}")


class QueryError(WarehouseError):
    """A query was refused or failed: quotes the query's first line."""


class NoWarehouseError(WarehouseError):
    """A folder that holds no warehouse was given where one is read."""


def has_warehouse(home: str | os.PathLike[str] | Lake) -> bool:
    """Whether ``home`` holds a warehouse: its ``lake`` folder, made by
    :func:`create_warehouse` or the first write."""
    lake = home if isinstance(home, Lake) else Lake(home)
    return lake.root.is_dir()


def require_warehouse(home: str | os.PathLike[str] | Lake) -> Lake:
    """The lake of ``home``; NoWarehouseError (one line naming the folder) when it holds none,
    so a mistyped home is not read as an empty warehouse."""
    lake = home if isinstance(home, Lake) else Lake(home)
    if not has_warehouse(lake):
        what = "does not exist" if not lake.home.exists() else "holds no warehouse (no lake/)"
        raise NoWarehouseError(f"no warehouse at {lake.home}: the folder {what}")
    return lake


def create_warehouse(home: str | os.PathLike[str] | Lake) -> Path | None:
    """Make ``home``'s warehouse if it holds none; its home when it was made, else None."""
    lake = home if isinstance(home, Lake) else Lake(home)
    if has_warehouse(lake):
        return None
    if lake.home.exists() and not lake.home.is_dir():
        raise NoWarehouseError(f"cannot create a warehouse at {lake.home}: not a folder")
    lake.root.mkdir(parents=True, exist_ok=True)
    return lake.home


def remove_empty_warehouse(home: str | os.PathLike[str]) -> bool:
    """Undo :func:`create_warehouse` when nothing was written: its empty ``lake`` folder,
    then the home itself if that is empty too. Whether the warehouse was removed."""
    lake = Lake(home)
    try:
        lake.root.rmdir()          # only an empty folder
    except OSError:
        return False
    with contextlib.suppress(OSError):
        lake.home.rmdir()
    return True


DERIVED_NAMES = frozenset(spec.name for spec in derived_tables())


class ViewOrderError(WarehouseError):
    """The named views' ``-- depends:`` headers name an unknown view or form a cycle."""


def connect(home: str | os.PathLike[str] | Lake,
            readable: Sequence[str | os.PathLike[str]] = (),
            key_range: tuple[int, int] | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the warehouse's views over ``home``'s lake,
    locked to reading the tables' current files (and the ``readable`` files: a training
    run's snapshot). ``key_range``: (lo, hi), unsigned, inclusive: the views of the tables
    with ``sort_by`` hold the rows of that key range only, read from the row groups that
    can hold them (a connection for one range of a query run range by range), and so does
    a derived table kept in a table (position_facts: its ``sorted by`` column), whether read
    from it or computed by its query."""
    return connect_with_files(home, readable, key_range=key_range)[0]


def connect_with_files(home: str | os.PathLike[str] | Lake,
                       readable: Sequence[str | os.PathLike[str]] = (), derived: bool = True,
                       key_range: tuple[int, int] | None = None
                       ) -> tuple[duckdb.DuckDBPyConnection, dict[str, list[Path]]]:
    """:func:`connect`, and the data files each table's view reads. ``derived``: False to
    name every derived table's view over its defining query (what ``refresh`` computes)."""
    lake = home if isinstance(home, Lake) else Lake(home)
    con = duckdb_connection()
    create_macros(con)
    tables = {spec.name: create_table_view(con, lake, spec, key_range)
              for spec in REGISTRY.values()}
    files = [path for paths in tables.values() for path in paths]
    files += [Path(path) for path in readable]
    for spec in derived_tables():
        stored = current_file(lake.root, spec, tables) if derived else None
        if stored is None:
            source = spec.view_sql
            if key_range is not None and spec.kept_in and spec.sort_by is not None:
                # as when read from the table it is kept in: the rows of the range only
                source = (f"select * from ({source}\n) where {spec.sort_by} "
                          f"between {key_range[0]} and {key_range[1]}")
        elif spec.kept_in:
            source = kept_view_sql(spec, stored, lake.table_dir(spec.kept_in), key_range)
            overlay = kept_files(stored, lake.table_dir(spec.kept_in))[1]
            files += [overlay] if overlay is not None else []
        else:
            source = f"select * from read_parquet({sql_strings([stored])})"
            files.append(stored)
        con.execute(f"create or replace view {spec.name} as {source}")
        if spec.kept_in:    # its rows as kept in the table's files, and its overlay's
            for part in KEPT_PARTS:
                con.execute(f"create or replace view {spec.name}_{part} as " + (
                    kept_view_sql(spec, stored, lake.table_dir(spec.kept_in), key_range,
                                  part=part) if stored is not None else
                    computed_part_sql(spec, part)))
    for name, sql in named_views():
        con.execute(f"create or replace view {name} as {sql}")
    lock_down(con, files)
    return con, tables


KEPT_PARTS = ("kept", "overlay")


def create_macros(con: duckdb.DuckDBPyConnection) -> None:
    """The macros the views and derived tables use (``warehouse/sql/macros.sql``)."""
    con.execute((SQL_DIR / "macros.sql").read_text())


def computed_part_sql(spec: Derived, part: str) -> str:
    """``<name>_<part>`` of a derived table kept in a table while it is computed by its
    query: every row kept, none in an overlay."""
    return f"select * from {spec.name}" + (" where false" if part == "overlay" else "")


def connect_files(readable: Sequence[str | os.PathLike[str]]) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection without the warehouse's views, locked to reading the
    ``readable`` files: for a query that reads only them (a training run's snapshot, once per
    epoch), without :func:`connect`'s cost of a view per table and named view."""
    con = duckdb_connection()
    lock_down(con, [Path(path) for path in readable])
    return con


def lock_down(con: duckdb.DuckDBPyConnection, files: Sequence[Path]) -> None:
    """No file access but reading ``files``; configuration locked."""
    con.execute(f"set allowed_paths = [{sql_strings(files)}]")
    con.execute("set enable_external_access = false")
    con.execute("set autoinstall_known_extensions = false")
    con.execute("set autoload_known_extensions = false")
    con.execute("set lock_configuration = true")


def create_table_view(con: duckdb.DuckDBPyConnection, lake: Lake, spec: Table,
                      key_range: tuple[int, int] | None = None) -> list[Path]:
    """The table's view over its current files; returns the files."""
    delta = lake.delta(spec.name)
    files = sorted(Path(uri) for uri in delta.file_uris()) if delta else []
    if delta is None or not files:
        con.register(spec.name, spec.schema.empty_table())
        return []
    absent = set(spec.schema.names) - set(delta.schema().to_arrow().names)
    con.execute(f"create or replace view {spec.name} as "
                f"{table_view_sql(spec, files, absent, key_range)}")
    return files


def table_view_sql(spec: Table, files: Sequence[Path], absent: Set[str] = frozenset(),
                   key_range: tuple[int, int] | None = None) -> str:
    """``select`` over a table's files (built from the registry and the Delta log, never from
    user text); the ``absent`` columns (added to the schema after every file was written) are
    null. A table with ``sort_by`` and a ``key_range``: the rows whose key is in the range,
    filtered on the stored (signed) column, whose row-group statistics DuckDB then prunes
    by (a filter on the unsigned expression hides them)."""
    options = ["union_by_name = true"]
    if spec.partition_by:
        types = ", ".join(
            f"'{c}': '{DUCKDB_TYPES[spec.schema.field(c).type]}'" for c in spec.partition_by)
        options += ["hive_partitioning = true", f"hive_types = {{{types}}}"]
    else:
        options.append("hive_partitioning = false")
    columns = ", ".join(
        f"null::{DUCKDB_TYPES.get(f.type, 'VARCHAR')} as {f.name}" if f.name in absent
        else UNSIGNED.format(c=f.name) if f.type == pa.uint64() else f.name
        for f in spec.schema)
    source = f"read_parquet([{sql_strings(files)}], {', '.join(options)})"
    if key_range is not None and spec.sort_by is not None and spec.sort_by not in absent:
        return " union all ".join(
            f"select {columns} from {source} where {spec.sort_by} between {lo} and {hi}"
            for lo, hi in stored_intervals(*key_range))
    return f"select {columns} from {source}"


def kept_view_sql(spec: Derived, manifest: Path, table_dir: Path,
                  key_range: tuple[int, int] | None = None, stored: bool = False,
                  part: str = "current") -> str:
    """``select`` of a derived table kept in a lake table (``spec.kept_in``, in
    ``table_dir``) as its ``manifest`` says: the rows of that table's files it wrote but
    those its overlay replaces (rows changed since, see :func:`warehouse.refresh.extend_kept`;
    the overlay's rows marked ``replaces``), and the overlay's rows; its view's columns
    (``stored``: its stored-only ones too, and ``replaces``), unsigned where stored signed;
    with a ``key_range``, the rows of that range of its sorted column, filtered on the stored
    column (see :func:`table_view_sql`). Only the overlay's replacing rows are looked up
    for each kept row (a new position's row replaces none): few, so that lookup is cheap.
    ``part``: "kept" for the rows of the table's files alone (as computed whole last, the
    overlay's changes not applied), "overlay" for the overlay's rows alone (none without
    one)."""
    view, unsigned = kept_columns(manifest)
    select = ", ".join(UNSIGNED.format(c=c) if c in unsigned else c
                       for c in ([*view, *spec.stored_only] if stored else view))
    kept, overlay = kept_files(manifest, table_dir)
    key = spec.sort_by
    # (source, its columns, condition): the kept files' rows the overlay does not replace,
    # the overlay's rows
    parts = [(f"read_parquet([{sql_strings(kept)}], union_by_name = true, "
              f"hive_partitioning = false)", select + (", true as replaces" if stored else ""),
              "true")]
    if overlay is not None and part != "kept":
        changed = f"read_parquet({sql_strings([overlay])})"
        parts = [(parts[0][0], parts[0][1],
                  f"{key} not in (select {key} from {changed} where replaces)"),
                 (changed, select + (", replaces" if stored else ""), "true")]
    if part == "overlay":
        parts = parts[1:] or [(parts[0][0], parts[0][1], "false")]
    ranges = ["true"] if key_range is None or key is None else \
        [f"{key} between {lo} and {hi}" for lo, hi in stored_intervals(*key_range)]
    return " union all ".join(
        f"select {columns} from {source}" + "".join(
            f" {'where' if i == 0 else 'and'} {c}" for i, c in enumerate(
                c for c in (condition, where) if c != "true"))
        for source, columns, condition in parts for where in ranges)


def stored_intervals(lo: int, hi: int) -> list[tuple[int, int]]:
    """The unsigned key range lo..hi (inclusive) as ranges of the stored signed keys (the
    same bits): one, or two when it spans 2^63 (where the stored keys turn negative)."""
    if not 0 <= lo <= hi < 1 << 64:
        raise WarehouseError(f"key range {lo}..{hi}: not an unsigned 64-bit range")
    half = 1 << 63
    if hi < half:
        return [(lo, hi)]
    if lo >= half:
        return [(lo - (1 << 64), hi - (1 << 64))]
    return [(lo, half - 1), (-half, hi - (1 << 64))]


def named_views() -> list[tuple[str, str]]:
    """(view name, select) for every ``warehouse/sql/views/*.sql``, dependencies first."""
    folder = SQL_DIR / "views"
    texts = {p.stem: p.read_text() for p in sorted(folder.glob("*.sql"))}
    order = view_order({name: depends(name, text) for name, text in texts.items()})
    return [(name, texts[name].strip().rstrip(";")) for name in order]


def depends(name: str, text: str) -> tuple[str, ...]:
    """The names in a view's ``-- depends: a, b`` header (required, may be empty)."""
    found = DEPENDS.findall(text)
    if len(found) != 1:
        raise ViewOrderError(f"view {name!r}: needs exactly one '-- depends: ...' line, "
                             f"found {len(found)}")
    return tuple(n.strip() for n in found[0].split(",") if n.strip())


def view_order(graph: dict[str, tuple[str, ...]]) -> list[str]:
    """Views ordered so each comes after the views it depends on (tables are always there).

    >>> view_order({"b": ("a", "labels"), "a": ("positions",)})
    ['a', 'b']
    """
    order: list[str] = []
    visiting: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        if name in visiting:
            cycle = " -> ".join([*visiting[visiting.index(name):], name])
            raise ViewOrderError(f"views depend on each other in a cycle: {cycle}")
        visiting.append(name)
        for dependency in graph[name]:
            if dependency in graph:
                visit(dependency)
            elif dependency not in REGISTRY and dependency not in DERIVED_NAMES:
                raise ViewOrderError(f"view {name!r} depends on unknown {dependency!r}")
        visiting.pop()
        order.append(name)

    for name in sorted(graph):
        visit(name)
    return order


def named_query(name: str) -> str:
    """The text of ``warehouse/sql/queries/<name>.sql``."""
    path = SQL_DIR / "queries" / f"{name}.sql"
    if not path.is_file():
        raise QueryError(f"no named query {name!r} in {path.parent}")
    return path.read_text()


def check_read_only(sql: str, con: duckdb.DuckDBPyConnection) -> None:
    """Refuse anything but SELECT statements and EXPLAIN (ANALYZE) of a SELECT (a PIVOT that
    DuckDB parses into several statements included, when it only reads); ``con`` parses."""
    import duckdb

    for statement in parse_statements(sql, con):
        inner = EXPLAIN.match(statement.query) if statement.type in (
            duckdb.StatementType.EXPLAIN, duckdb.StatementType.MULTI) else None
        if inner:
            check_read_only(inner.group(1), con)
        elif statement.type == duckdb.StatementType.MULTI and only_reads(statement.query):
            continue
        elif statement.type != duckdb.StatementType.SELECT:
            raise QueryError(
                f"only read-only queries are allowed, got {statement.type.name}: "
                f"{first_line(statement.query)!r}")


def only_reads(sql: str) -> bool:
    """Whether a statement DuckDB parsed into several (a MULTI: ``PIVOT t ON c`` without an
    ``IN`` list looks up the values of ``c`` first) is a query: it starts as a SELECT does
    and no word of a write stands at its top level, outside parentheses (``create table t as
    pivot ...``, ``with x as (pivot ...) insert into ...``, ``copy (pivot ...) to ...`` do).

    >>> only_reads("pivot games on result using count(*)")
    True
    >>> only_reads("create table t as pivot games on result using count(*)")
    False
    """
    words = top_level_words(sql)
    return bool(words) and words[0] in READ_STARTS and not set(words) & WRITE_WORDS


def top_level_words(sql: str) -> list[str]:
    """The keywords of ``sql`` outside parentheses, lowercase, in order; an opening
    parenthesis that starts the statement is taken as ``(``."""
    import duckdb

    tokens = duckdb.tokenize(sql)
    ends = [start for start, _ in tokens[1:]] + [len(sql)]
    depth, words = 0, list[str]()
    for (start, kind), end in zip(tokens, ends, strict=True):
        text = sql[start:end].strip().lower()
        if kind == duckdb.token_type.operator:
            if not words and depth == 0 and text.startswith("("):
                words.append("(")
            depth += text.count("(") - text.count(")")
        elif kind == duckdb.token_type.keyword and depth == 0:
            words.append(text)
    return words


def parse_statements(sql: str, con: duckdb.DuckDBPyConnection) -> list[duckdb.Statement]:
    """The statements of ``sql`` as ``con`` parses them. Not ``duckdb.extract_statements``:
    that opens DuckDB's module-wide default connection, whose database and threads nothing
    closes, alive until the interpreter has shut down (issue 48)."""
    import duckdb

    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryError(f"cannot parse query: {with_hints(str(exc))}") from None
    if not statements:
        raise QueryError("empty query")
    return statements


def with_hints(message: str) -> str:
    """DuckDB's error in one line: its first line and the hints below it ("Candidate
    bindings", "Did you mean"), without the query excerpt and caret lines.

    >>> with_hints('Catalog Error: Table with name gmes does not exist!\\nDid you mean "games"?')
    'Catalog Error: Table with name gmes does not exist! Did you mean "games"?'
    """
    lines = [line.strip() for line in message.strip().splitlines()]
    hints = [line for line in lines[1:] if HINT.match(line)]
    return " ".join([lines[0] if lines else message, *hints])


def query(con: duckdb.DuckDBPyConnection, sql: str,
          params: Sequence[Any] | dict[str, Any] | None = None,
          timeout_s: float | None = None) -> pa.Table:
    """Run a read-only query and return Arrow; QueryError with DuckDB's reason otherwise.

    ``timeout_s``: interrupt the query after that many seconds (QueryError saying so).
    """
    import duckdb

    check_read_only(sql, con)
    timer = threading.Timer(timeout_s, con.interrupt) if timeout_s else None
    if timer:
        timer.start()
    try:
        relation = con.sql(sql, params=params)
        return relation.to_arrow_table() if relation is not None else pa.table({})
    except duckdb.InterruptException:
        raise QueryError(f"query timed out after {timeout_s:g} s: "
                         f"{first_line(sql)!r}") from None
    except duckdb.Error as exc:
        raise QueryError(f"query failed: {with_hints(str(exc))}") from None
    finally:
        if timer:
            timer.cancel()
