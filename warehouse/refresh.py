"""Refreshing derived tables: each one's result computed again when the lake's files changed.

:func:`refresh` (run by ``compact``) computes each derived table (:mod:`warehouse.derived`)
whose stored result is not the one of the input tables' current files, over a catalog
connection whose derived views read their defining queries, and streams it into a new
``lake/_derived/<name>/<id>.parquet`` (sorted as the definition says, so that each row group
covers a narrow range of that column and a query for a range reads those row groups only).
Its manifest ``<id>.json`` is written last, then older results are removed: a writer killed
anywhere leaves at worst an unused file.
"""
from __future__ import annotations

import json
import os
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow.parquet as pq

from warehouse.catalog import connect_with_files
from warehouse.derived import Derived, current_file, derived_tables, file_names, folder
from warehouse.encoding import derived_options

if TYPE_CHECKING:
    import duckdb

    from warehouse.lake import Lake

BATCH_ROWS = 1 << 17


def refresh(lake: Lake, names: Sequence[str] | None = None) -> dict[str, int]:
    """Compute each derived table (``names``: all by default) not current for the lake's
    current files and keep it; older results are removed. Returns rows written per table
    (0: it was current already, or its input tables are empty)."""
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
    options = derived_options(reader.schema.names, spec.sort_by)
    with pq.ParquetWriter(data, reader.schema, **options) as writer:
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
