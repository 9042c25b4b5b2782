"""Refreshing derived tables: each one's result computed again when the lake's files changed.

:func:`refresh` (run by ``compact``) computes each derived table (:mod:`warehouse.derived`)
whose stored result is not the one of the input tables' current files, over a catalog
connection whose derived views read their defining queries, and streams it into a new
``lake/_derived/<name>/<id>.parquet`` (sorted as the definition says, so that each row group
covers a narrow range of that column and a query for a range reads those row groups only).
Its manifest ``<id>.json`` is written last, then older results are removed: a writer killed
anywhere leaves at worst an unused file.

A derived table kept in a lake table (``-- kept in``: position_facts in positions) is
written as that table's files instead: staged, then committed under the table's write lock
in one commit that removes the files it was computed from (files committed meanwhile stay,
and make it stale until the next refresh), with the key-index run of the new files saved
from the rows as they stream by (they come sorted by the stored key); then its manifest.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable, WriterProperties, write_deltalake
from deltalake.transaction import RemoveAction

from warehouse import compaction
from warehouse.catalog import (
    UNSIGNED,
    connect_with_files,
    kept_view_sql,
    sql_strings,
    table_view_sql,
)
from warehouse.commits import DELTA_LOG, Staged, with_retries, write_lock
from warehouse.datafiles import basename
from warehouse.derived import (
    DERIVED_DIR,
    Derived,
    current_file,
    definition,
    derived_tables,
    file_names,
    folder,
    kept_files,
)
from warehouse.encoding import COMPACT_LEVEL, derived_options, sorted_properties
from warehouse.keyindex import (
    CHECK_DTYPE,
    CHECKED,
    KeyIndex,
    Run,
    check_prints,
    file_numbers,
    prune,
)
from warehouse.schema import storage_type
from warehouse.tablecache import forget_table
from warehouse.tables import REGISTRY, Table, table

if TYPE_CHECKING:
    import duckdb

    from warehouse.lake import Lake

log = logging.getLogger(__name__)

BATCH_ROWS = 1 << 17
# A derived table kept in a table (position_facts) is brought up to date by an overlay of the
# rows that changed (extend_kept) while the overlay holds at most 1/FOLD as many rows as the
# table's files hold and the table has at most MAX_PLAIN files written since without its
# columns; past either it is computed whole again, which folds the overlay in.
FOLD: float = 8
MAX_PLAIN = 64
# A summary computed whole "-- by key range": one key range per this many rows of its largest
# input (16M: a range's join of labels with position facts is about 1 GB in memory)
RANGE_ROWS = 1 << 24
# A derived table kept in a lake table: rows per data file it writes (about 100 MB of
# positions at 25 bytes a row), each file one write of a staged table.
FILE_ROWS = 1 << 22


def refresh(lake: Lake, names: Sequence[str] | None = None,
            retain_hours: float | None = None) -> dict[str, int]:
    """Compute each derived table (``names``: all by default) not current for the lake's
    current files and keep it; older results are removed. Returns rows written per table
    (0: it was current already, or its input tables are empty). ``retain_hours``: vacuum a
    table a derived table is kept in after rewriting it, keeping the files of versions newer
    than that (compact's retention; None: no vacuum)."""
    written = {}
    specs = derived_tables()
    if names is None:   # the results of derived tables no longer defined (an older version's)
        defined = {spec.name for spec in specs}
        for old in (lake.root / DERIVED_DIR).glob("*"):
            if old.is_dir() and old.name not in defined:
                shutil.rmtree(old, ignore_errors=True)
    for spec in specs:
        if names is not None and spec.name not in names:
            continue
        versions = input_versions(lake, spec)
        # a derived table that reads others reads them as kept (refreshed before it)
        con, files = connect_with_files(lake, derived=bool(spec.needs))
        try:
            if current_file(lake.root, spec, files, sorted_as_defined=True) is not None or \
                    not any(files.get(t) for t in spec.inputs):   # current, or nothing to keep
                written[spec.name] = 0
                continue
            if spec.kept_in:
                rows = extend_kept(lake, spec, files, versions)
                written[spec.name] = rows if rows is not None else \
                    keep_in_table(lake, spec, con, files, retain_hours, versions)
            else:
                state = {"versions": dict(versions),
                         "bases": kept_bases(lake, spec, files, specs)}
                rows = extend_summary(lake, spec, files, state)
                written[spec.name] = rows if rows is not None else \
                    write(lake, spec, con, files, state)
        finally:
            con.close()
    return written


def compact_lake(lake: Lake, names: Sequence[str] | None = None,
                 retain_hours: float = compaction.DEFAULT_RETAIN_HOURS
                 ) -> tuple[dict[str, tuple[int, int]], dict[str, int]]:
    """``chesslab compact``: :func:`refresh` the derived tables, compact the tables
    ``names`` (all by default), then refresh again. A table a derived table is kept in is compacted
    after the refresh (which rewrites it when it changed), so its files are rewritten once,
    not merged first and then rewritten, and not merged at all while the derived table they
    hold is current. Returns ((files before, after) per table, in
    ``names``' order; rows written per derived table)."""
    names = list(names) if names is not None else sorted(REGISTRY)
    kept = {spec.kept_in for spec in derived_tables() if spec.kept_in}
    files: dict[str, tuple[int, int]] = {}
    # first over the files written since (extend_kept reads the rows added), then again once
    # they are merged: the same rows, only the files the manifests name change
    before = {name: len(lake.parts(name)) for name in names if name in kept}
    rows = refresh(lake, retain_hours=retain_hours)
    for name in [n for n in names if n not in kept]:
        files[name] = lake.compact(name, retain_hours=retain_hours)
    rows = {name: count + rows.get(name, 0)
            for name, count in refresh(lake, retain_hours=retain_hours).items()}
    for name, count in before.items():
        merge = not holds_current(lake, name)
        files[name] = (count, lake.compact(name, retain_hours=retain_hours, merge=merge)[1])
    return {name: files[name] for name in names}, rows


def holds_current(lake: Lake, name: str) -> bool:
    """Whether table ``name``'s files hold a derived table kept in it that is current: they
    are sorted and written at compaction's level already, and merging them (Delta optimize
    reads a table's own columns) would drop the derived columns and make it stale, so
    ``compact`` only vacuums such a table."""
    return any(spec.kept_in == name and current_file(
        lake.root, spec, {t: lake.parts(t) for t in spec.inputs}) is not None
        for spec in derived_tables())


def write(lake: Lake, spec: Derived, con: duckdb.DuckDBPyConnection,
          files: Mapping[str, Sequence[Path]], state: Mapping[str, object]) -> int:
    """Stream the defining query's result into a new file, then its manifest (with
    ``state``: the inputs' versions and the kept derived tables' bases, what
    :func:`extend_summary` checks from; :func:`write_manifest` drops the rest). A summary computed ``-- by key
    range`` is computed range by range (:func:`summed_by_range`) when its inputs are large."""
    root = lake.root
    ranges = key_ranges(lake, spec)
    if ranges is None:
        sql = spec.sql if spec.sort_by is None else \
            f"select * from ({spec.sql}\n) order by {spec.sort_by}"
        reader = con.sql(sql).to_arrow_reader(BATCH_ROWS)
    else:
        found = summed_by_range(lake, spec, files, ranges, con)
        if found is None:
            log.warning("derived %s: its inputs changed while it was computed; the next "
                        "compact computes it", spec.name)
            return 0
        reader = found
    out = folder(root, spec.name)
    out.mkdir(parents=True, exist_ok=True)
    ident = uuid.uuid4().hex
    rows = write_result(out / f"{ident}.parquet", reader, spec.sort_by)
    inputs = {t: file_names(files.get(t, ()), root / t) for t in spec.inputs}
    write_manifest(root, spec, {"inputs": inputs, "rows": rows, "sorted_by": spec.sort_by,
                                **state}, ident)
    return rows


def write_result(path: Path, reader: pa.RecordBatchReader, sort_by: str | None) -> int:
    """Stream a derived table's rows into its Parquet file; returns the rows written."""
    rows = 0
    with pq.ParquetWriter(path, reader.schema,
                          **derived_options(reader.schema.names, sort_by)) as writer:
        for batch in reader:
            writer.write_batch(batch)
            rows += batch.num_rows
    return rows


def key_ranges(lake: Lake, spec: Derived) -> list[tuple[int, int]] | None:
    """The key ranges a summary computed ``-- by key range`` is computed in: one per
    RANGE_ROWS rows of its largest input; None for one query (a small warehouse, or a
    derived table that is no such summary)."""
    if not spec.by_key_range or not spec.grouped_by:
        return None
    rows = max(sum(pq.ParquetFile(p).metadata.num_rows for p in lake.parts(t))
               for t in spec.inputs)
    count = rows // RANGE_ROWS
    if count < 2:
        return None
    bounds = [(1 << 64) * i // count for i in range(count + 1)]
    return [(lo, hi - 1) for lo, hi in zip(bounds, bounds[1:], strict=False)]


def summed_by_range(lake: Lake, spec: Derived, files: Mapping[str, Sequence[Path]],
                    ranges: Sequence[tuple[int, int]], con: duckdb.DuckDBPyConnection
                    ) -> pa.RecordBatchReader | None:
    """A summary's rows computed key range by key range (a connection whose views hold
    the range's rows: each range's joins fit in memory, where the whole query's would
    spill), added up group by group on ``con``; None if the inputs' files changed from
    ``files`` meanwhile."""
    parts = []
    for lo, hi in ranges:
        part, now = connect_with_files(lake, derived=True, key_range=(lo, hi))
        try:
            if any(now.get(t, []) != list(files.get(t, [])) for t in spec.inputs):
                return None
            parts.append(part.sql(spec.sql).to_arrow_table())
        finally:
            part.close()
    con.register("summed_ranges", pa.concat_tables(parts))
    return con.sql(added_up_sql(spec, parts[0].schema.names, "select * from summed_ranges")
                   ).to_arrow_reader(BATCH_ROWS)


def added_up_sql(spec: Derived, columns: Sequence[str], source: str) -> str:
    """``select`` of a summary's rows from ``source`` (rows of its ``columns``) added up
    group by group, the groups adding up to nothing left out."""
    keys = ", ".join(f'"{c}"' for c in spec.grouped_by)
    sums = [c for c in columns if c not in spec.grouped_by]
    added_up = ", ".join(f'sum("{c}")::bigint as "{c}"' for c in sums)
    nonzero = " or ".join(f'sum("{c}") <> 0' for c in sums)
    return f"select {keys}, {added_up} from ({source}) group by all having {nonzero}"


def keep_in_table(lake: Lake, spec: Derived, con: duckdb.DuckDBPyConnection,
                  files: Mapping[str, Sequence[Path]], retain_hours: float | None,
                  versions: Mapping[str, int]) -> int:
    """Stream the defining query's result, sorted by the stored (signed) key, into staged
    files of the table ``spec.kept_in``, then commit them in place of the files it was
    computed from, with their key-index run, and write the manifest. Returns the rows
    written (0: the table's files changed under it, nothing committed)."""
    assert spec.kept_in is not None and spec.sort_by is not None
    name, key = spec.kept_in, spec.sort_by
    sql = f"select * from ({spec.sql}\n) order by {key} < {1 << 63}, {key}"   # signed order
    reader = con.sql(sql).to_arrow_reader(BATCH_ROWS)
    unsigned = [f.name for f in reader.schema if f.type == pa.uint64()]
    storage = kept_schema(reader.schema, table(name))
    writer = lake.writer(table(name))
    staged = Staged(writer.folder)
    keys: list[np.ndarray] = []
    checks: list[np.ndarray] = []
    numbers: list[np.ndarray] = []
    try:
        for number, chunk in enumerate(file_chunks(reader, storage)):
            write_deltalake(str(staged.folder), chunk, mode="append", target_file_size=1 << 40,
                            writer_properties=kept_properties(name, key))
            for batch in chunk.to_batches():
                keys.append(batch.column(key).to_numpy())
                checks.append(check_prints(batch.column(CHECKED[name])) if name in CHECKED
                              else np.zeros(0, CHECK_DTYPE))
                numbers.append(np.full(batch.num_rows, number, np.int32))
        run_parts = (keys, checks, numbers)
        new = commit_kept(lake, name, files[name], staged, run_parts)
    finally:
        staged.discard()
    if new is None:
        return 0
    if retain_hours is not None:
        DeltaTable(str(writer.folder)).vacuum(retention_hours=int(retain_hours),
                                              enforce_retention_duration=False, dry_run=False)
    root = lake.root
    inputs = {t: file_names(files.get(t, ()), root / t) for t in spec.inputs}
    inputs[name] = sorted(new)
    view = [c for c in reader.schema.names if c not in spec.stored_only]
    rows = int(sum(len(k) for k in keys))
    write_manifest(root, spec, {"inputs": inputs, "rows": rows, "sorted_by": key,
                                "kept_in": name, "columns": view,
                                "unsigned": [c for c in unsigned if c in view],
                                "versions": dict(versions)})
    return rows


def input_versions(lake: Lake, spec: Derived) -> dict[str, int]:
    """The Delta version of each input table but the one the derived table is kept in (-1:
    not created yet), read before their files: what :func:`changes_since` checks from."""
    versions = {}
    for name in spec.inputs:
        if name != spec.kept_in:
            delta = lake.delta(name)
            versions[name] = delta.version() if delta is not None else -1
    return versions


def changes_since(lake: Lake, name: str, since: int) -> str | None:
    """What the commits to table ``name`` after version ``since`` did, from the actions in
    its Delta log: "none"; "appends" (files added with ``dataChange``: rows added only);
    "rewrites" (files added and removed without ``dataChange``, as Delta optimize does: the
    same rows in other files); or None: both, a file removed with ``dataChange`` (rows
    removed or changed), or a commit whose log is gone."""
    delta = lake.delta(name)
    now = delta.version() if delta is not None else -1
    if now == since:
        return "none"
    if now < since:
        return None
    kinds = set()
    for version in range(since + 1, now + 1):
        log = lake.table_dir(name) / DELTA_LOG / f"{version:020d}.json"
        try:
            lines = log.read_text().splitlines()
        except OSError:
            return None
        for line in lines:
            action = json.loads(line) if line.strip() else {}
            if "remove" in action and action["remove"].get("dataChange", True):
                return None
            if "add" in action:
                kinds.add("appends" if action["add"].get("dataChange", True) else "rewrites")
    return None if len(kinds) > 1 else kinds.pop() if kinds else "none"


def extend_kept(lake: Lake, spec: Derived, files: Mapping[str, Sequence[Path]],
                versions: Mapping[str, int]) -> int | None:
    """Bring a derived table kept in a lake table up to date for the rows added to its
    inputs since its manifest, without computing it whole: its increment query
    (``warehouse/sql/derived/increments/<name>.sql``) gives the rows that change, which
    replace the earlier overlay's rows of the same keys in a new overlay file beside the
    manifest (the table's files are not rewritten); an input whose files were only
    rewritten since (a compaction: the same rows) adds nothing, and the manifest then names
    its new files. Returns the rows the increment gave, or None where it does not apply: no
    increment query or earlier manifest, the kept table's files rewritten, another input's
    rows removed or changed, or both added and rewritten, since (:func:`changes_since`), or
    the overlay past 1/FOLD of the rows kept in the table or its files without the derived
    columns past MAX_PLAIN (then it is computed whole again, which folds the overlay in)."""
    increment = spec.increment_sql
    assert spec.kept_in is not None and spec.sort_by is not None
    found = previous_manifest(lake.root, spec) if increment is not None else None
    if increment is None or found is None:
        return None
    root, name, key = lake.root, spec.kept_in, spec.sort_by
    manifest, before = found
    inputs = {t: file_names(files.get(t, ()), root / t) for t in spec.inputs}
    kept = before.get("kept", before["inputs"][name])
    changes = {t: changes_since(lake, t, before["versions"].get(t, -1)) for t in versions}
    if not set(before["inputs"][name]) <= set(inputs[name]) or None in changes.values():
        return None
    added = {t: [root / t / n for n in sorted(set(inputs[t]) - set(before["inputs"].get(t, ())))]
             if changes.get(t, "appends") == "appends" else [] for t in spec.inputs}
    new_rows = sum(pq.ParquetFile(p).metadata.num_rows for p in added[name])
    if (int(before.get("overlay_rows", 0)) + new_rows) * FOLD > int(before["rows"]) or \
            len(set(inputs[name]) - set(kept)) > MAX_PLAIN:
        return None
    meta = {**before, "inputs": inputs, "kept": kept, "versions": dict(versions)}
    earlier = manifest.parent / before["overlay"] if before.get("overlay") else None
    if not any(added.values()):     # rewritten only: the same rows, in the files named now
        write_manifest(root, spec, meta, earlier.stem if earlier is not None else None)
        return 0
    con, _ = connect_with_files(lake, readable=[earlier] if earlier else [], derived=False)
    try:
        stored = [*before["columns"], *spec.stored_only, "replaces"]
        con.execute("create view facts_before as "
                    f"{kept_view_sql(spec, manifest, lake.table_dir(name), stored=True)}")
        added_views(con, added)
        con.execute(f"create temp table changed as {increment}")
        [(changed,)] = con.sql("select count(*) from changed").fetchall()
        sql = "select * from changed"
        if earlier is not None:     # the earlier overlay's rows not changed again
            select = ", ".join(UNSIGNED.format(c=c) if c in before["unsigned"] else c
                               for c in stored)
            sql += (f" union all select * from (select {select} from "
                    f"read_parquet({sql_strings([earlier])})) "
                    f"where {key} not in (select {key} from changed)")
        reader = con.sql(f"select * from ({sql}) order by {key} < {1 << 63}, {key}"
                         ).to_arrow_reader(BATCH_ROWS)
        storage = kept_schema(reader.schema, table(name))
        out = folder(root, spec.name)
        ident = uuid.uuid4().hex
        rows = 0
        with pq.ParquetWriter(out / f"{ident}.parquet", storage,
                              **derived_options(storage.names, key)) as writer:
            for chunk in file_chunks(reader, storage):
                writer.write_table(chunk)
                rows += chunk.num_rows
    finally:
        con.close()
    write_manifest(root, spec, {**meta, "overlay": f"{ident}.parquet", "overlay_rows": rows},
                   ident)
    return int(changed)


def kept_bases(lake: Lake, spec: Derived, files: Mapping[str, Sequence[Path]],
               specs: Sequence[Derived]) -> dict[str, list[str] | None]:
    """For each derived table kept in a lake table that ``spec`` reads (among ``specs``,
    every derived table): the table's files
    its current result was computed whole into (what its ``<name>_kept`` view reads), or
    None while it is not current (its view is its query)."""
    bases: dict[str, list[str] | None] = {}
    for need in specs:
        if need.name in spec.needs and need.kept_in:
            manifest = current_file(lake.root, need, files)
            table_dir = lake.table_dir(need.kept_in)
            bases[need.name] = None if manifest is None else \
                file_names(kept_files(manifest, table_dir)[0], table_dir)
    return bases


def extend_summary(lake: Lake, spec: Derived, files: Mapping[str, Sequence[Path]],
                   state: Mapping[str, Any]) -> int | None:
    """Bring a derived table kept beside the lake up to date without computing it whole.
    When its inputs' files were only rewritten since its manifest (a compaction: the same
    rows), its result stands: the manifest is written again naming the new files. A summary
    (``-- grouped by``) whose inputs had rows added only to the tables its increment takes
    (``-- increments over``; the others unchanged or only rewritten) adds its increment
    query's rows (``warehouse/sql/derived/increments/<name>.sql`` over ``<table>_new``
    views of the rows added and the lake's views as they are now; or, ``-- linear in:
    table``, its own query with that table's view holding the rows added) to the rows
    kept, group by group, into a new file. Either only while the kept derived tables it
    reads (``state["bases"]``, :func:`kept_bases`) hold the files they held, computed whole
    into. Returns the rows the increment gave (0: rewritten only), or None where neither
    applies or the inputs were written to since ``files`` (then it is computed whole, over
    ``files``)."""
    found = previous_manifest(lake.root, spec)
    if found is None or spec.sort_by is not None:
        return None
    manifest, before = found
    data = manifest.with_suffix(".parquet")
    root = lake.root
    inputs = {t: file_names(files.get(t, ()), root / t) for t in spec.inputs}
    changes = {t: changes_since(lake, t, before["versions"].get(t, -1)) for t in spec.inputs}
    if not data.is_file() or None in changes.values() or any(
            kind == "appends" and t not in spec.increments_over for t, kind in changes.items()
            ) or before.get("bases", {}) != state["bases"] or None in state["bases"].values():
        return None
    added = {t: [root / t / n for n in sorted(set(inputs[t]) - set(before["inputs"].get(t, ())))]
             if changes[t] == "appends" else [] for t in spec.inputs}
    meta = {**before, "inputs": inputs, **state}
    if not any(added.values()) or (spec.linear_in is not None and not added[spec.linear_in]):
        # rewritten only, or no row added to what it sums: the same rows, the files named now
        write_manifest(root, spec, meta, manifest.stem)
        return 0
    increment = spec.increment_sql
    if not spec.grouped_by or increment is None:
        return None
    con, now = connect_with_files(lake, readable=[data], derived=True)
    try:
        if any(now.get(t, []) != list(files.get(t, [])) for t in spec.inputs):
            return None     # written to meanwhile: computed whole over the files named
        added_views(con, added)
        if spec.linear_in is not None:  # its own query, over the rows added to that table
            con.execute(f"create or replace view {spec.linear_in} as "
                        + table_view_sql(table(spec.linear_in), added[spec.linear_in]))
        con.execute(f"create temp table increment as {increment}")
        [(changed,)] = con.sql("select count(*) from increment").fetchall()
        names = pq.read_schema(data).names
        columns = ", ".join(f'"{c}"' for c in names)
        reader = con.sql(added_up_sql(
            spec, names, f"select {columns} from read_parquet({sql_strings([data])}) "
            f"union all select {columns} from increment")).to_arrow_reader(BATCH_ROWS)
        ident = uuid.uuid4().hex
        rows = write_result(data.with_name(f"{ident}.parquet"), reader, None)
    finally:
        con.close()
    write_manifest(root, spec, {**meta, "rows": rows}, ident)
    return int(changed)


def added_views(con: duckdb.DuckDBPyConnection, added: Mapping[str, Sequence[Path]]) -> None:
    """A view ``<table>_new`` per input table over its ``added`` files (none: no rows)."""
    for name, paths in added.items():
        con.execute(f"create view {name}_new as " + (
            table_view_sql(table(name), paths) if paths else
            f"select * from {name} where false"))


def previous_manifest(root: Path, spec: Derived) -> tuple[Path, dict[str, Any]] | None:
    """The newest manifest of a derived table that :func:`extend_kept` or
    :func:`extend_summary` can extend (one that records its inputs' versions), with what it
    holds; None if none."""
    found = []
    for manifest in folder(root, spec.name).glob("*.json"):
        try:
            meta = json.loads(manifest.read_text())
            stamp = manifest.stat().st_mtime
        except (OSError, ValueError):
            continue
        overlay = meta.get("overlay")
        if meta.get("kept_in") == spec.kept_in and "versions" in meta and \
                meta.get("definition") == definition(spec) and \
                meta.get("sorted_by") == spec.sort_by and \
                (overlay is None or (manifest.parent / overlay).is_file()):
            found.append((stamp, manifest, meta))
    if not found:
        return None
    _, manifest, meta = max(found, key=lambda f: f[0])
    return manifest, meta


def kept_schema(result: pa.Schema, spec: Table) -> pa.Schema:
    """The schema a derived table kept in table ``spec`` is stored with: the table's columns
    in its storage types (and its timestamp type), then the derived table's others as the
    query gives them."""
    own = {f.name: f.with_type(storage_type(f.type)) for f in spec.schema}
    return pa.schema([own.get(f.name, f) for f in result])


def file_chunks(reader: pa.RecordBatchReader, schema: pa.Schema
                ) -> Iterator[pa.Table]:
    """The query's batches cast to ``schema``, about FILE_ROWS rows a table (a file), each
    table one chunk: deltalake's writer spreads a table's batches over its threads, and the
    file's row groups would then not come in the batches' (sorted) order."""
    batches: list[pa.RecordBatch] = []
    rows = 0
    for batch in reader:
        batches.append(pa.RecordBatch.from_arrays(
            [batch.column(f.name).cast(f.type, safe=False) for f in schema], schema=schema))
        rows += batch.num_rows
        if rows >= FILE_ROWS:
            yield pa.Table.from_batches(batches, schema).combine_chunks()
            batches, rows = [], 0
    if batches:
        yield pa.Table.from_batches(batches, schema).combine_chunks()


def kept_properties(name: str, key: str) -> WriterProperties:
    """The table's compaction settings for files sorted by ``key``, in row groups of
    BATCH_ROWS rows (a key range reads the row groups that overlap it)."""
    return sorted_properties(name, key, COMPACT_LEVEL.get(name, 3), BATCH_ROWS)


def commit_kept(lake: Lake, name: str, computed_from: Sequence[Path], staged: Staged,
                run_parts: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]
                ) -> list[str] | None:
    """Under table ``name``'s write lock: commit the staged files in place of the files
    ``computed_from`` (None when one of them is gone: a compaction meanwhile), their run
    saved before the commit and merged after, the runs of the files removed dropped.
    Returns the new files' names (relative to the table's folder)."""
    writer = lake.writer(table(name))
    folder = writer.folder
    with write_lock(folder):
        delta = writer.latest()
        live = {basename(uri): uri for uri in delta.file_uris()}
        removed = file_names(computed_from, folder)
        if not {basename(p) for p in removed} <= live.keys():
            log.info("derived %s: %s changed meanwhile, not rewritten", name, name)
            return None
        adds = staged.actions()
        stamp = int(time.time() * 1000)
        actions = [*[RemoveAction(p, True, stamp) for p in removed], *adds]
        names = tuple(basename(a.path) for a in adds)
        index = KeyIndex(folder, {}) if writer.index is not None else None
        saved = index.save(run_of(names, *run_parts)) if index is not None else None
        try:
            with_retries(name, lambda: staged.commit(delta, actions))
        except BaseException:
            forget_table(folder)
            if index is not None and saved is not None:
                index.remove(saved.name)
            raise
        prune(folder, set(live) - {basename(p) for p in removed} | set(names))
        if index is not None and saved is not None:
            index.adopt(saved)
    return [a.path for a in adds]


def run_of(files: tuple[str, ...], keys: list[np.ndarray], checks: list[np.ndarray],
           numbers: list[np.ndarray]) -> Run:
    """The key-index run of rows written sorted by their (stored, signed) key."""
    ordered = np.concatenate(keys) if keys else np.zeros(0, np.int64)
    assert (ordered[1:] > ordered[:-1]).all(), "kept rows must come sorted by their key"
    prints = np.concatenate(checks) if checks else np.zeros(0, CHECK_DTYPE)
    ids = np.concatenate(numbers) if numbers else np.zeros(0, np.int32)
    return Run("", ordered, file_numbers(ids, len(files)), files,
               prints if len(prints) == len(ordered) else None)


def write_manifest(root: Path, spec: Derived, meta: dict[str, object],
                   ident: str | None = None) -> None:
    """Write a derived table's manifest (atomically), then drop its older results (all but
    ``ident``'s, the data file the manifest names when given), except the overlays the
    manifests it replaces name: a connection opened before reads them until the next
    refresh replaces this one (one generation of grace)."""
    out = folder(root, spec.name)
    out.mkdir(parents=True, exist_ok=True)
    ident = ident if ident is not None else uuid.uuid4().hex
    manifest = out / f"{ident}.json"
    replaced = set()
    for old in out.glob("*.json"):
        with contextlib.suppress(OSError, ValueError):
            replaced.add(json.loads(old.read_text()).get("overlay"))
    staged = manifest.with_suffix(".json.tmp")
    staged.write_text(json.dumps({**meta, "definition": definition(spec)}))
    os.replace(staged, manifest)
    for old in out.iterdir():
        if old.stem != ident and old.suffix in (".json", ".parquet", ".tmp") and \
                old.name not in replaced:
            old.unlink(missing_ok=True)
