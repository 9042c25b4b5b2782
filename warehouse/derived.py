"""Derived tables: a query's result over lake tables, kept beside them and used while current.

Some facts every large query joins in are expensive to compute and rarely change: a
position's lowest game (an aggregate over every move) and that game's result, its side to
move (a split of its FEN). ``warehouse/sql/derived/<name>.sql`` defines such a table as a
query over the lake's views (``-- depends: a, b`` names the tables it reads);
:func:`refresh` (run by ``compact``) writes its result to ``lake/_derived/<name>/<id>.parquet``
(sorted by the column a ``-- sorted by: column`` line names, so that each row group covers a
narrow range of it and a query for a range reads those row groups only), with ``<id>.json``
(written last) listing the data files of each input table it was computed
from. :func:`connect` names the view ``<name>`` over that file only while every input table's
current files are exactly those listed, and over the defining query otherwise (after a write,
until the next compact): like the key index, the file is a cache of immutable data files,
never wrong, only stale, and a writer killed anywhere leaves at worst an unused file.
"""
from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow.parquet as pq

if TYPE_CHECKING:
    import duckdb

    from warehouse.lake import Lake

DERIVED_DIR = "_derived"
SQL_DIR = Path(__file__).parent / "sql" / "derived"
DEPENDS = re.compile(r"^--\s*depends:(.*)$", re.MULTILINE)
SORTED = re.compile(r"^--\s*sorted by:\s*(\w+)\s*$", re.MULTILINE)
BATCH_ROWS = 1 << 17


@dataclass(frozen=True)
class Derived:
    """One derived table: its name, defining select and the lake tables it reads."""

    name: str
    sql: str
    inputs: tuple[str, ...]
    sort_by: str | None = None


def derived_tables() -> list[Derived]:
    """Every ``warehouse/sql/derived/*.sql``."""
    tables = []
    for path in sorted(SQL_DIR.glob("*.sql")):
        text = path.read_text()
        found = DEPENDS.findall(text)
        if len(found) != 1:
            raise ValueError(f"{path}: needs exactly one '-- depends: ...' line")
        inputs = tuple(sorted(n.strip() for n in found[0].split(",") if n.strip()))
        sort = SORTED.findall(text)
        tables.append(Derived(path.stem, text.strip().rstrip(";"), inputs,
                              sort[0] if sort else None))
    return tables


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
    right, only unsorted)."""
    wanted = {t: file_names(files.get(t, ()), root / t) for t in spec.inputs}
    for manifest in sorted(folder(root, spec.name).glob("*.json")):
        try:
            meta = json.loads(manifest.read_text())
        except (OSError, ValueError):
            continue
        data = manifest.with_suffix(".parquet")
        if meta.get("inputs") == wanted and data.is_file() and (
                not sorted_as_defined or meta.get("sorted_by") == spec.sort_by):
            return data
    return None


def refresh(lake: Lake, names: Sequence[str] | None = None) -> dict[str, int]:
    """Compute each derived table (``names``: all by default) not current for the lake's
    current files and keep it; older results are removed. Returns rows written per table
    (0: it was current already, or its input tables are empty)."""
    from warehouse.catalog import connect_with_files

    written = {}
    for spec in derived_tables():
        if names is not None and spec.name not in names:
            continue
        con, files = connect_with_files(lake, derived=False)
        try:
            if current_file(lake.root, spec, files, sorted_as_defined=True) is not None or \
                    not any(files.get(t) for t in spec.inputs):   # current, or nothing to keep
                written[spec.name] = 0
                continue
            written[spec.name] = write(lake.root, spec, con, files)
        finally:
            con.close()
    return written


def write(root: Path, spec: Derived, con: duckdb.DuckDBPyConnection,
          files: Mapping[str, Sequence[Path]]) -> int:
    """Stream the defining query's result into a new file, then its manifest; drop the rest."""
    out = folder(root, spec.name)
    out.mkdir(parents=True, exist_ok=True)
    ident = uuid.uuid4().hex
    data, manifest = out / f"{ident}.parquet", out / f"{ident}.json"
    sql = spec.sql if spec.sort_by is None else \
        f"select * from ({spec.sql}\n) order by {spec.sort_by}"
    reader = con.sql(sql).to_arrow_reader(BATCH_ROWS)
    rows = 0
    with pq.ParquetWriter(data, reader.schema, compression="zstd") as writer:
        for batch in reader:
            writer.write_batch(batch)
            rows += batch.num_rows
    inputs = {t: file_names(files.get(t, ()), root / t) for t in spec.inputs}
    staged = manifest.with_suffix(".json.tmp")
    staged.write_text(json.dumps({"inputs": inputs, "rows": rows, "sorted_by": spec.sort_by}))
    os.replace(staged, manifest)
    for old in out.iterdir():
        if old.stem != ident and old.suffix in (".json", ".parquet", ".tmp"):
            old.unlink(missing_ok=True)
    return rows
