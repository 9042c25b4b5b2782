"""An epoch of NNUE training reads its snapshot one key range at a time (issue 35 §3: at 100M
positions the epoch's whole-split sort made the first batch wait minutes). The rows of an
epoch must be exactly those of the whole-split query (``order by hash(position_key, seed)
limit max_positions`` over the snapshot, written out here as the reference), each range
query must read only its own row groups, and the first batch must come from one range.

The home: the bundled sample's 400 games ingested (their ``[%eval]`` annotations are
examples of engine ``pgn:[%eval]``) and 400 of its positions labelled by Stockfish at depth 1.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from flows.ingest import INGEST, IngestJob
from flows.label import LABEL
from flows.step import run_step
from pipelines.ingest import IngestConfig
from pipelines.label import LabelConfig
from pipelines.train.config import NnueConfig
from pipelines.train.dataset import (
    NO_LIMIT,
    SplitQuery,
    key_ranges,
    range_parameters,
    stream_batches,
    write_snapshot,
)
from pipelines.train.nnue_data import keep_examples, snapshot_parameters
from warehouse import Lake, connect
from warehouse.catalog import connect_files, named_query

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample" / "games.pgn.zst"
ANNOTATIONS = ("pgn:[%eval]", 0)
RANGE_ROWS = 4096          # about 12 ranges of the annotations' training split
ROW_GROUP = 1024           # the snapshot's rows per row group (write_snapshot's read batch)
REFERENCE = """
    select position_key, fen, score_cp, result, split_key, in_check,
        hash(position_key, $seed) as h
    from read_parquet($snapshot)
    where validation = $validation
    order by hash(position_key, $seed)
    limit $max_positions
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, stockfish_path: str) -> tuple[Lake, str]:
    """The sample ingested, 400 positions labelled at depth 1; returns the lake and the
    Stockfish engine id."""
    lake = Lake(tmp_path_factory.mktemp("keyrange") / "home")
    run_step(INGEST, IngestJob((SAMPLE,), IngestConfig.tiny()), lake)
    summary = run_step(LABEL, LabelConfig.tiny(depths=(1,), limit=400, batch_size=200,
                                               workers=2), lake)
    assert summary.errors == 0 and summary.labels >= 390
    engine = connect(lake).sql("select distinct engine_id from labels").fetchall()
    return lake, str(engine[0][0])


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
        home: tuple[Lake, str], source: str) -> None:
    """Same rows as the whole-split query (every column; with and without max_positions, both
    splits, two epochs); each key range comes once, in one piece, its rows in hash order."""
    lake, engine = home
    engine_id, depth = ANNOTATIONS if source == "annotations" else (engine, 1)
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


def test_the_first_range_query_reads_its_own_row_groups(home: tuple[Lake, str]) -> None:
    """The epoch's first query (what its first batch waits for) reads the row groups of one
    key range of the snapshot, not all of them, and the first record batch holds keys of
    that range only."""
    lake, _ = home
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
