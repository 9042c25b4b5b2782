"""Key ranges (issue 35 §3: at 100M positions every query over a whole depth, the snapshot's
join and the epoch's sort among them, needs memory and time that grow with the warehouse).

``compact`` sorts labels (each engine and depth) and position_facts (kept in positions' files)
by position_key, so a
query for a key range reads the row groups of that range only; the training snapshot is
written range by range (each range's join and sort alone) and must be the whole-depth
query's file row for row; an epoch reads the snapshot range by range, and its rows must be
exactly those of the whole-split query (``order by hash(position_key, seed) limit
max_positions`` over the snapshot, written out here as the reference), each range query
reading its own row groups, the first batch coming from one range.

The home: the bundled sample's 400 games ingested (their ``[%eval]`` annotations are
examples of engine ``pgn:[%eval]``) and 400 of its positions labelled by Stockfish at depth 1,
then compacted with small row groups (16 labels, 1024 position_facts rows), so that a small
home has many.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from flows.ingest import INGEST, IngestJob
from flows.label import LABEL
from flows.step import run_step
from pipelines.ingest import IngestConfig
from pipelines.kinds.nnue import data as nnue_data
from pipelines.kinds.nnue.config import NnueConfig
from pipelines.kinds.nnue.data import keep_examples, snapshot_parameters, snapshot_ranges
from pipelines.label import LabelConfig
from pipelines.train.dataset import (
    NO_LIMIT,
    WHOLE,
    SplitQuery,
    key_ranges,
    range_parameters,
    stream_batches,
    write_snapshot,
)
from warehouse import Lake, compaction, connect
from warehouse import refresh as refresh_module
from warehouse.catalog import connect_files, named_query
from warehouse.refresh import refresh
from warehouse.tables import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample" / "games.pgn.zst"
ANNOTATIONS = ("pgn:[%eval]", 0)
RANGE_ROWS = 4096          # about 12 ranges of the annotations' training split
ROW_GROUP = 1024           # the snapshot's rows per row group (write_snapshot's read batch)
LABEL_GROUP = 16           # compact's labels rows per row group
FACTS_GROUP = 1024         # position_facts rows per row group
REFERENCE = """
    select position_key, fen, score_cp, result, split_key, in_check,
        hash(position_key, $seed) as h
    from read_parquet($snapshot)
    where validation = $validation
    order by hash(position_key, $seed)
    limit $max_positions
"""


@dataclass
class Home:
    lake: Lake
    engine_id: str                           # Stockfish's
    before: dict[str, list[tuple[Any, ...]]]  # labels and position_facts before compact
    files: dict[str, int]                    # labels files before compact


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, stockfish_path: str) -> Home:
    """The sample ingested, 400 positions labelled at depth 1 (in several files), compacted
    with small row groups."""
    lake = Lake(tmp_path_factory.mktemp("keyrange") / "home")
    run_step(INGEST, IngestJob((SAMPLE,), IngestConfig.tiny()), lake)
    run_step(INGEST, IngestJob((SAMPLE.with_name("suite.epd"),), IngestConfig.tiny()), lake)
    summary = run_step(LABEL, LabelConfig.tiny(depths=(1,), limit=400, batch_size=50,
                                               workers=2), lake)
    assert summary.errors == 0 and summary.labels >= 390
    con = connect(lake)
    engine = con.sql("select distinct engine_id from labels where depth = 1").fetchall()
    before = {name: sorted(con.sql(f"select * from {name}").fetchall(), key=repr)
              for name in ("labels", "position_facts")}
    files = {"labels": len(lake.parts("labels"))}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compaction, "SORTED_ROW_GROUP", LABEL_GROUP)
        patch.setattr(refresh_module, "BATCH_ROWS", FACTS_GROUP)
        for name in REGISTRY:
            lake.compact(name)
        refresh(lake)
    return Home(lake, str(engine[0][0]), before, files)


def row_groups(uri: str | Path) -> list[tuple[int, int]]:
    """(min, max) position_key of each row group of a Parquet file (signed as stored)."""
    meta = pq.ParquetFile(uri).metadata
    index = meta.schema.to_arrow_schema().get_field_index("position_key")
    return [(meta.row_group(g).column(index).statistics.min,
             meta.row_group(g).column(index).statistics.max) for g in range(meta.num_row_groups)]


def scanned(con: Any, sql: str, params: dict[str, Any] | None = None) -> tuple[int, int]:
    """Row groups a query's Parquet scans read, and the row groups of the files they scan
    (summed over scans: DuckDB's EXPLAIN ANALYZE)."""
    plan = con.sql("explain analyze " + sql, params=params).fetchall()[0][1]
    found = [tuple(map(int, m)) for m in re.findall(r"Row Groups Scanned: (\d+) / (\d+)", plan)]
    assert found, plan
    return sum(a for a, _ in found), sum(b for _, b in found)


def increasing(groups: list[tuple[int, int]]) -> bool:
    return all(a <= b < c for (a, b), (c, _) in zip(groups, groups[1:], strict=False))


def test_compact_sorts_labels_and_position_facts_by_key(home: Home) -> None:
    """Each labels partition (Stockfish's, the suite's EPD labels) is one file and
    position_facts one file, their row groups holding increasing, disjoint key ranges; the
    rows are those before compact."""
    lake, con = home.lake, connect(home.lake)
    assert home.files["labels"] > 2
    parts = lake.parts("labels")
    assert sorted(p.parent.name for p in parts) == ["depth=1", "depth=14"]
    for part in parts:
        labels = row_groups(part)
        assert increasing(labels) and len(labels) >= (6 if part.parent.name == "depth=1" else 1)
    [facts] = lake.parts("positions")   # position_facts is kept in positions (issue 51)
    groups = row_groups(facts)
    assert len(groups) >= 40 and increasing(groups)
    for name in ("labels", "position_facts"):
        assert sorted(con.sql(f"select * from {name}").fetchall(), key=repr) == home.before[name]



RANGES = [*key_ranges(16, 1)[7:9], ((1 << 63) - (1 << 59), (1 << 63) + (1 << 59))]


def test_a_key_range_connection_reads_the_row_groups_of_its_range(home: Home) -> None:
    """On a connection for a sixteenth of the key space (below 2^63, above it: stored
    negative, and across it), the labels view holds the labels of that range (as Python
    filters them) read from a few row groups; position_facts, read by a filter on the range,
    reads a few of its row groups too."""
    for lo, hi in RANGES:
        con = connect(home.lake, key_range=(lo, hi))
        want = [row for row in home.before["labels"] if lo <= row[0] <= hi]
        assert want and sorted(con.sql("select * from labels").fetchall(), key=repr) == want
        read, total = scanned(con, "select * from labels")
        assert total >= 20 and read <= total // 8 + 2, (read, total)
        sql = "select count(*) from position_facts where position_key between $lo and $hi"
        count = con.sql(sql, params={"lo": lo, "hi": hi}).fetchall()[0][0]
        assert count == sum(lo <= row[0] <= hi for row in home.before["position_facts"]) > 0
        read, total = scanned(con, sql, {"lo": lo, "hi": hi})
        assert total >= 40 and read <= total // 16 + 3, (read, total)


@pytest.mark.parametrize("source", ["annotations", "stockfish"])
def test_the_snapshot_written_by_key_range_is_the_whole_querys(home: Home, source: str) -> None:
    """Written range by range, the snapshot is the whole-depth query's file row for row;
    its ranges count the labels of the depth (Delta's statistics)."""
    lake = home.lake
    engine_id, depth = ANNOTATIONS if source == "annotations" else (home.engine_id, 1)
    parameters = snapshot_parameters(NnueConfig(validation_percent=20.0), (engine_id,), depth)
    whole, ranged = (write_snapshot(lake, "nnue_snapshot", parameters,
                                    lake.home / f"{name}-{source}.parquet", keep_examples(True),
                                    ROW_GROUP, ranges)
                     for name, ranges in (("whole", WHOLE), ("ranged", key_ranges(100, 8))))
    assert pq.read_table(ranged).equals(pq.read_table(whole))
    assert pq.read_table(whole).num_rows > 200
    labels = connect(lake).sql("select count(*) from labels where engine_id = $e and depth = "
                               "$d", params={"e": engine_id, "d": depth}).fetchall()[0][0]
    assert snapshot_ranges(lake, (engine_id,), depth) == key_ranges(
        labels, nnue_data.SNAPSHOT_RANGE_ROWS)


def test_a_snapshot_range_query_reads_the_row_groups_of_its_range(home: Home) -> None:
    """The snapshot's query for one key range reads a few row groups of the labels and
    position_facts (and the moves and games of the annotations' branch, one group each)."""
    parameters = {**snapshot_parameters(NnueConfig(), (home.engine_id,), 1),
                  "key_lo": key_ranges(16, 1)[3][0], "key_hi": key_ranges(16, 1)[3][1]}
    con = connect(home.lake, key_range=key_ranges(16, 1)[3])
    read, total = scanned(con, named_query("nnue_snapshot"), parameters)
    assert total >= 50 and read <= total // 16 + 6, (read, total)


def snapshot(lake: Lake, engine_id: str, depth: int) -> Path:
    path = lake.home / f"snapshot-{engine_id.replace(':', '_')}-{depth}.parquet"
    if not path.is_file():
        write_snapshot(lake, "nnue_snapshot",
                       snapshot_parameters(NnueConfig(validation_percent=20.0), (engine_id,),
                                           depth),
                       path, keep_examples(True), ROW_GROUP)
    return path


def split(lake: Lake, path: Path, validation: bool, max_positions: int,
          range_rows: int = RANGE_ROWS) -> SplitQuery:
    return SplitQuery(str(lake.home), "nnue_dataset",
                      {"snapshot": str(path), "max_positions": max_positions}, validation,
                      range_rows)


def reference(path: Path, validation: bool, epoch: int, max_positions: int
              ) -> list[dict[str, Any]]:
    """The whole split's rows in the whole-split query's order (the code before key ranges)."""
    con = connect_files([path])
    return con.sql(REFERENCE, params={"snapshot": str(path), "validation": validation,
                                      "seed": epoch, "max_positions": max_positions}
                   ).to_arrow_table().to_pylist()


@pytest.mark.parametrize("source", ["annotations", "stockfish"])
def test_an_epoch_streams_the_whole_splits_rows_range_by_range(
        home: Home, source: str) -> None:
    """Same rows as the whole-split query (every column; with and without max_positions, both
    splits, two epochs); each key range comes once, in one piece, its rows in hash order."""
    lake = home.lake
    engine_id, depth = ANNOTATIONS if source == "annotations" else (home.engine_id, 1)
    path = snapshot(lake, engine_id, depth)
    total = pq.ParquetFile(path).metadata.num_rows
    range_rows = RANGE_ROWS if source == "annotations" else 32
    assert len(key_ranges(total, range_rows)) >= 6
    for validation in (False, True):
        for epoch in (0, 1):
            for max_positions in (NO_LIMIT, total // 7):
                want = reference(path, validation, epoch, max_positions)
                got = [row for batch in stream_batches(
                    split(lake, path, validation, max_positions, range_rows), epoch, 100)
                    for row in batch.to_pylist()]
                assert len(got) == len(want) > 0
                hashes = {r["position_key"]: r.pop("h") for r in want}
                assert sorted(map(row_tuple, got)) == sorted(map(row_tuple, want))
                runs = range_runs([r["position_key"] for r in got], total, range_rows)
                assert len(runs) == len({bounds for bounds, _ in runs})   # each range once
                for _, keys in runs:
                    assert [hashes[k] for k in keys] == sorted(hashes[k] for k in keys)
    # a new epoch, a new order of the same rows
    first, second = ([r["position_key"] for b in stream_batches(
        split(lake, path, False, NO_LIMIT, range_rows), epoch, 100) for r in b.to_pylist()]
        for epoch in (0, 1))
    assert first != second and sorted(first) == sorted(second)


def row_tuple(row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple((k, -1 if v is None else v) for k, v in row.items())


def range_runs(keys: list[int], total: int, range_rows: int
               ) -> list[tuple[tuple[int, int], list[int]]]:
    """``keys`` cut into maximal runs of keys of one key range: (range, keys) each."""
    ranges = key_ranges(total, range_rows)
    runs: list[tuple[tuple[int, int], list[int]]] = []
    for k in keys:
        bounds = next(r for r in ranges if r[0] <= k <= r[1])
        if runs and runs[-1][0] == bounds:
            runs[-1][1].append(k)
        else:
            runs.append((bounds, [k]))
    return runs


def test_the_first_range_query_reads_its_own_row_groups(home: Home) -> None:
    """The epoch's first query (what its first batch waits for) reads the row groups of one
    key range of the snapshot, not all of them, and the first record batch holds keys of
    that range only."""
    lake = home.lake
    path = snapshot(lake, *ANNOTATIONS)
    groups = pq.ParquetFile(path).metadata.num_row_groups
    assert groups >= 40
    query = split(lake, path, False, NO_LIMIT)
    con = connect_files([path])
    first = range_parameters(con, query, 3)[0]
    plan = con.sql("explain analyze " + named_query("nnue_dataset"),
                   params={**query.params(3), **first}).fetchall()[0][1]
    scanned, of = map(int, re.search(r"Row Groups Scanned: (\d+) / (\d+)", plan).groups())
    ranges = len(key_ranges(pq.ParquetFile(path).metadata.num_rows, RANGE_ROWS))
    assert of == groups and scanned <= groups // ranges + 2
    batch = next(iter(stream_batches(query, 3, 100_000)))
    keys = batch.column("position_key").to_pylist()
    assert keys and all(first["key_lo"] <= k <= first["key_hi"] for k in keys)


def test_the_snapshot_says_what_it_does_from_the_start(home: Home,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 49 §3: ``train nnue --preset tiny`` printed nothing for 4.5 minutes between
    "train: nnue nnue-tiny" and the trainer's first line while its snapshot was written: a
    line at once, then the key ranges and rows so far with the rate and the time left."""
    import pipelines.progress

    monkeypatch.setattr(pipelines.progress, "EVERY_S", 0.0)
    lines: list[str] = []
    parameters = snapshot_parameters(NnueConfig(validation_percent=20.0), (home.engine_id,), 1)
    # 8 ranges over the labelled keys' span (a labelling limit takes the lowest keys of the
    # key-sorted positions, so 8 ranges of the whole key space would put them all in one)
    keys = sorted(k for (k,) in connect(home.lake).sql(
        "select position_key from labels where depth = 1").fetchall())
    cuts = [keys[len(keys) * i // 8] for i in range(8)] + [keys[-1] + 1]
    ranges = [(cuts[i], cuts[i + 1] - 1) for i in range(8)]
    path = write_snapshot(home.lake, "nnue_snapshot", parameters,
                          home.lake.home / "reported.parquet", keep_examples(True), ROW_GROUP,
                          ranges, report=lines.append)
    assert lines[0] == (f"train: writing the data set snapshot (nnue_snapshot, 8 key ranges) "
                        f"to {path}")
    rows = pq.read_table(path).num_rows
    assert all(re.fullmatch(r"train: snapshot: \d/8 key ranges \(\d+%\)(, [\d.]+ key "
                            r"ranges/(s|min))?(, ETA [\w ]+)?; [\d,]+ rows", line)
               for line in lines[1:]), lines
    assert lines[-1].endswith(f"; {rows:,} rows") and len(lines) > 2
