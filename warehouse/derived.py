"""Derived tables: a query's result over lake tables, kept beside them and used while current.

Some facts every large query joins in are expensive to compute and rarely change: a
position's lowest game (an aggregate over every move) and that game's result, its side to
move (a split of its FEN). ``warehouse/sql/derived/<name>.sql`` defines such a table as a
query over the lake's views (``-- depends: a, b`` names the tables it reads; ``-- sorted by:
column`` the column its stored result is sorted by). :mod:`warehouse.refresh` (run by
``compact``) keeps its result in ``lake/_derived/<name>/<id>.parquet``, with ``<id>.json``
(written last) listing the data files of each input table it was computed from.
:func:`current_file` finds the result computed from exactly the input tables' current files:
:func:`warehouse.catalog.connect` names the view ``<name>`` over that file while there is
one, and over the defining query otherwise (after a write, until the next compact). Like
the key index, the file is a cache of immutable data files, never wrong, only stale.

A derived table whose rows are one per row of a lake table can be *kept in* that table
(``-- kept in: positions``): its result, which then also carries the table's own columns
(those named by ``-- stored only: a, b`` are left out of the view), is written as the
table's files, replacing them (sorted as the definition says), instead of a file beside
the lake, so what both hold is stored once: position_facts' FENs were a second copy of
every position's (issue 51). The table's readers (its view, ``Lake.read``, ingest's
lookups) read its own columns and ignore the others, which are no part of its Delta
schema; the manifest ``<id>.json`` alone stays in ``lake/_derived/<name>/``, naming the
table's files it wrote among its inputs, so a write to the table (new files) or a
compaction of it makes the result stale like any other input's change.

Kept in a table, a derived table is also brought up to date without being computed whole:
when rows were only added to its inputs since (Delta's log says so, :func:`warehouse.refresh.
changes_since`), ``warehouse/sql/derived/increments/<name>.sql`` gives the rows that change,
and they go to an *overlay* ``<id>.parquet`` beside the manifest, which then names the table's
files holding the rest (``kept``) and the overlay; the view reads the kept files' rows the
overlay does not replace, and the overlay's. The overlay is folded in (the table computed
whole, its files rewritten) once it passes a fraction of the rows kept. So ``compact`` after
an ingest of 1% costs about that 1%, not the whole table (issue 51 §2). An overlay replaced
stays one refresh longer (a connection opened before still reads it), and every manifest
records a digest of the definition and increment queries (:func:`definition`): a result
made under other queries is not used.

A derived table may read others (``-- depends:`` names them beside lake tables): it is
refreshed after them, over their kept results, and is stale when any lake table under them
changes. A connection also names, for a derived table kept in a table, ``<name>_kept`` (the
rows in the table's files, as computed whole last: the overlay's changes not applied) and
``<name>_overlay`` (the overlay's rows); both are the query and nothing while it is not kept.

A *summary* (``-- grouped by: a, b``: one row per group, its other columns counts and sums
that add up across rows) kept beside the lake is brought up to date the same way: when rows
were only added to the inputs its increment takes (``-- increments over: labels, ...``; the
others unchanged), ``increments/<name>.sql`` gives the rows to add (counts may be negative),
or (``-- linear in: labels``: each row of that table counted alone) its own query over the
rows added to that table; they are added group by group to the rows kept. Both only while the
kept derived tables it reads hold the files they were computed whole into (their ``_kept``
rows unchanged). Computed whole, a summary marked ``-- by key range`` (a sum over positions,
each joined with its own rows only) is computed key range by key range when its inputs are
large, each range's joins in memory, and the ranges' rows added up. A report over a whole
depth (issue 51 §2) then adds up a few rows instead of joining every label with its
position: label_counts counts every label by its position's
facts as kept (linear in labels), label_counts_overlay (computed whole, small) corrects the
labels of the positions the overlay changed and counts the annotations, and the view
label_summary adds both; label_depth_pairs counts pairs of an engine's labels of a position
at two depths. A derived table whose inputs' files were only rewritten (a compaction: the
same rows) keeps its result under a new manifest.

This module reads definitions and manifests only; it imports nothing from the catalog or
the lake, which build on it.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

DERIVED_DIR = "_derived"
SQL_DIR = Path(__file__).parent / "sql" / "derived"
INCREMENTS_DIR = SQL_DIR / "increments"
DEPENDS = re.compile(r"^--\s*depends:(.*)$", re.MULTILINE)
SORTED = re.compile(r"^--\s*sorted by:\s*(\w+)\s*$", re.MULTILINE)
KEPT = re.compile(r"^--\s*kept in:\s*(\w+)\s*$", re.MULTILINE)
STORED_ONLY = re.compile(r"^--\s*stored only:(.*)$", re.MULTILINE)
GROUPED = re.compile(r"^--\s*grouped by:(.*)$", re.MULTILINE)
INCREMENTS_OVER = re.compile(r"^--\s*increments over:(.*)$", re.MULTILINE)
LINEAR = re.compile(r"^--\s*linear in:\s*(\w+)\s*$", re.MULTILINE)
BY_RANGE = re.compile(r"^--\s*by key range\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Derived:
    """One derived table: its name, defining select and the lake tables it reads."""

    name: str
    sql: str
    inputs: tuple[str, ...]
    sort_by: str | None = None
    kept_in: str | None = None      # the lake table whose files hold the result
    stored_only: tuple[str, ...] = ()   # columns the result stores, its view leaves out
    needs: tuple[str, ...] = ()     # the derived tables it reads (refreshed before it)
    grouped_by: tuple[str, ...] = ()    # a summary: its other columns add up across rows
    increments_over: tuple[str, ...] = ()   # inputs whose added rows its increment takes
    upstream: str = ""      # the definitions of the derived tables it reads (digested)
    linear_in: str | None = None    # its increment: its query over that table's rows added
    by_key_range: bool = False  # a sum over positions: computed key range by key range

    @property
    def increment_sql(self) -> str | None:
        """The query of the rows that change when rows are added to the inputs
        (``warehouse/sql/derived/increments/<name>.sql``, or the defining query itself for
        a summary linear in a table, run over that table's added rows; None: computed
        whole again)."""
        if self.linear_in is not None:
            return self.sql
        path = INCREMENTS_DIR / f"{self.name}.sql"
        return path.read_text().strip().rstrip(";") if path.is_file() else None

    @property
    def view_sql(self) -> str:
        """The view's select over the defining query (without the stored-only columns)."""
        if not self.stored_only:
            return self.sql
        return f"select * exclude ({', '.join(self.stored_only)}) from ({self.sql}\n)"


def names(line: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in line.split(",") if n.strip())


def derived_tables() -> list[Derived]:
    """Every ``warehouse/sql/derived/*.sql``, each after the derived tables it reads."""
    paths = {path.stem: path for path in sorted(SQL_DIR.glob("*.sql"))}
    parsed: dict[str, tuple[Path, str, tuple[str, ...]]] = {}
    for name, path in paths.items():
        text = path.read_text()
        found = DEPENDS.findall(text)
        if len(found) != 1:
            raise ValueError(f"{path}: needs exactly one '-- depends: ...' line")
        parsed[name] = (path, text, names(found[0]))
    tables: dict[str, Derived] = {}

    def load(name: str, chain: tuple[str, ...]) -> Derived:
        if name in tables:
            return tables[name]
        path, text, depends = parsed[name]
        if name in chain:
            raise ValueError(f"{path}: its '-- depends:' tables read it back: "
                             + " -> ".join((*chain, name)))
        needs = tuple(sorted(n for n in depends if n in parsed))
        upstream = [load(n, (*chain, name)) for n in needs]
        inputs = {n for n in depends if n not in parsed} | {
            t for spec in upstream for t in spec.inputs}
        sort, kept = SORTED.findall(text), KEPT.findall(text)
        only = [n for line in STORED_ONLY.findall(text) for n in names(line)]
        grouped = [n for line in GROUPED.findall(text) for n in names(line)]
        over = [n for line in INCREMENTS_OVER.findall(text) for n in names(line)]
        linear = LINEAR.findall(text)
        if linear and linear[0] not in over:
            raise ValueError(f"{path}: linear in {linear[0]!r}, which it increments not over")
        if kept and kept[0] not in depends:
            raise ValueError(f"{path}: kept in {kept[0]!r}, which it does not depend on")
        if not set(over) <= inputs:
            raise ValueError(f"{path}: increments over {sorted(set(over) - inputs)}, "
                             "which it does not depend on")
        tables[name] = Derived(
            name, text.strip().rstrip(";"), tuple(sorted(inputs)), sort[0] if sort else None,
            kept[0] if kept else None, tuple(only), needs, tuple(grouped), tuple(over),
            "".join(definition(spec) for spec in upstream), linear[0] if linear else None,
            bool(BY_RANGE.search(text)))
        return tables[name]

    for name in parsed:
        load(name, ())
    return list(tables.values())


def definition(spec: Derived) -> str:
    """A digest of the derived table's queries (its definition and increment, and those of
    the derived tables it reads), kept in its manifests: a result made under another
    definition is not used."""
    text = f"{spec.sql}\n--\n{spec.increment_sql or ''}" + (
        f"\n--\n{spec.upstream}" if spec.upstream else "")
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def folder(root: Path, name: str) -> Path:
    return root / DERIVED_DIR / name


def file_names(files: Sequence[Path], table_dir: Path) -> list[str]:
    """Data files as paths relative to their table's folder, sorted (as the Delta log names
    them, partition folders included)."""
    return sorted(str(Path(f).relative_to(table_dir)) for f in files)


def current_file(root: Path, spec: Derived, files: Mapping[str, Sequence[Path]],
                 sorted_as_defined: bool = False) -> Path | None:
    """The derived table's Parquet file computed from exactly ``files`` (the input tables'
    current data files, by table), or None. ``sorted_as_defined``: only a file sorted as the
    definition says now (``refresh`` writes the others again; reading, an older file is
    right, only unsorted). A table kept in a lake table (``kept_in``): its manifest, whose
    data are that table's current files (:func:`kept_columns` reads what they hold)."""
    wanted = {t: file_names(files.get(t, ()), root / t) for t in spec.inputs}
    for manifest in sorted(folder(root, spec.name).glob("*.json")):
        try:
            meta = json.loads(manifest.read_text())
        except (OSError, ValueError):
            continue
        data = manifest if spec.kept_in else manifest.with_suffix(".parquet")
        overlay = meta.get("overlay")
        if overlay is not None and not (manifest.parent / overlay).is_file():
            continue
        if meta.get("inputs") == wanted and meta.get("definition") == definition(spec) and meta.get("kept_in") == spec.kept_in and \
                data.is_file() and (not sorted_as_defined or meta.get("sorted_by") == spec.sort_by):
            return data
    return None


def kept_files(manifest: Path, table_dir: Path) -> tuple[list[Path], Path | None]:
    """(the files of the lake table a derived table is kept in that hold its rows, its
    overlay file or None) as its ``manifest`` names them: the files it wrote into the table
    (all of the table's files it was computed from, when it has no overlay), and the file
    beside the manifest holding the rows added or changed since (see
    :func:`warehouse.refresh.extend_kept`)."""
    meta = json.loads(manifest.read_text())
    kept = meta.get("kept", meta["inputs"][meta["kept_in"]])
    overlay = meta.get("overlay")
    return [table_dir / name for name in kept], \
        (manifest.parent / overlay if overlay is not None else None)


def kept_columns(manifest: Path) -> tuple[list[str], list[str]]:
    """(the view's columns, those of them stored as signed 64-bit integers and given back
    unsigned) of a derived table kept in a lake table, from its manifest."""
    meta = json.loads(manifest.read_text())
    return list(meta["columns"]), list(meta.get("unsigned", []))
