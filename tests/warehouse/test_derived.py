"""Derived tables (warehouse/derived.py): position_facts kept by compact is read only while
positions, moves and games hold exactly the files it was computed from. It is kept in the
positions table itself (issue 51: its FENs were a second copy of every position's): positions'
files rewritten sorted by key with its columns beside positions' own, which positions' readers
still read as they were."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flows.ingest import INGEST, IngestJob
from flows.step import run_step
from pipelines.ingest import IngestConfig
from warehouse import Lake
from warehouse import refresh as refresh_module
from warehouse.catalog import connect_with_files
from warehouse.derived import DERIVED_DIR, current_file, derived_tables, kept_columns
from warehouse.refresh import compact_lake, refresh

FIRST = """[Event "one"]
[White "a"]
[Black "b"]
[Result "1-0"]

1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 1-0
"""
SECOND = """[Event "two"]
[White "c"]
[Black "d"]
[Result "0-1"]

1. e4 e5 2. Nf3 Nf6 3. Nxe5 d6 0-1
"""
ROWS = "select * from position_facts order by position_key"


def facts(lake: Lake, derived: bool = True) -> tuple[list[tuple[object, ...]], Path | None]:
    """position_facts' rows as connect names it (or computed by its query), and the kept
    file the view reads (None: computed)."""
    con, files = connect_with_files(lake, derived=derived)
    [spec] = [d for d in derived_tables() if d.name == "position_facts"]
    kept = current_file(lake.root, spec, files) if derived else None
    return con.sql(ROWS).fetchall(), kept


def kept_rows(lake: Lake, manifest: Path) -> list[dict[str, object]]:
    """The rows of a position_facts kept in positions, read from positions' files: its
    view's columns, the key unsigned."""
    columns, unsigned = kept_columns(manifest)
    data = pa.concat_tables(pq.read_table(p, columns=columns) for p in lake.parts("positions"))
    rows = data.cast(pa.schema([pa.field(c, pa.uint64()) if c in unsigned else data.schema.field(c)
                                for c in columns]), safe=False).to_pylist()
    return sorted(rows, key=lambda r: r["position_key"])


def ingest(lake: Lake, folder: Path, name: str, text: str) -> None:
    path = folder / name
    path.write_text(text)
    run_step(INGEST, IngestJob((path,), IngestConfig(workers=1)), lake)


def test_kept_facts_are_used_only_while_current(tmp_path: Path) -> None:
    lake = Lake(tmp_path / "home")
    ingest(lake, tmp_path, "first.pgn", FIRST)
    computed, kept = facts(lake)
    assert kept is None and len(computed) == 7      # 6 plies: 7 positions
    assert refresh(lake) == {"position_facts": 7}
    assert refresh(lake) == {"position_facts": 0}   # current: nothing to do
    rows, kept = facts(lake)
    assert kept is not None and rows == computed
    assert kept_rows(lake, kept) == [
        dict(zip(("position_key", "fen", "side_to_move", "in_check", "game_id", "game_result"),
                 row, strict=True)) for row in computed]
    positions = lake.read("positions")      # its own columns, as they were
    assert positions.column_names == ["position_key", "fen", "source_id", "first_seen",
                                      "in_check"]
    assert sorted(positions.column("fen").to_pylist()) == sorted(row[1] for row in computed)
    # a second game shares its first four positions: new files in positions, moves, games
    ingest(lake, tmp_path, "second.pgn", SECOND)
    rows, kept = facts(lake)
    live, _ = facts(lake, derived=False)
    assert kept is None and rows == live and len(rows) == 7 + 3
    ids = {g for g, in connect_with_files(lake)[0].sql("select game_id from games").fetchall()}
    first = {row[0] for row in computed}
    shared = [row for row in rows if row[0] in first and row[4] != computed[0][4]]
    # the four positions both games played (before 1. e4, 1... e5, 2. Nf3, 2... Nc6/Nf6) have
    # the lower of the two games; the others keep their one game
    assert len(ids) == 2 and {row[4] for row in rows if row[4]} == ids
    assert [row[4] for row in rows if row[0] in first and row[4] is not None].count(min(ids)) >= 4
    assert shared == [] or min(ids) != computed[0][4]
    assert refresh(lake) == {"position_facts": 10}
    rows, kept = facts(lake)
    assert kept is not None and rows == live
    assert list((lake.root / DERIVED_DIR / "position_facts").iterdir()) == [kept]  # its manifest
    assert lake.read("positions").num_rows == 10


def test_a_file_without_its_manifest_is_not_used(tmp_path: Path) -> None:
    """A refresh killed before its manifest leaves files that are never read as the
    derived table's."""
    lake = Lake(tmp_path / "home")
    ingest(lake, tmp_path, "first.pgn", FIRST)
    refresh(lake)
    folder = lake.root / DERIVED_DIR / "position_facts"
    [manifest] = folder.glob("*.json")
    manifest.unlink()
    rows, kept = facts(lake)
    assert kept is None and rows == facts(lake, derived=False)[0]


def test_compact_keeps_facts_written_in_several_files(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``compact`` (compact_lake) after a refresh that wrote positions as several files (as at
    scale: FILE_ROWS rows a file) does not merge them: a merge would rewrite positions with
    its own columns only, and position_facts would never be kept."""
    monkeypatch.setattr(refresh_module, "FILE_ROWS", 3)
    monkeypatch.setattr(refresh_module, "BATCH_ROWS", 2)
    lake = Lake(tmp_path / "home")
    ingest(lake, tmp_path, "first.pgn", FIRST)
    ingest(lake, tmp_path, "second.pgn", SECOND)
    live = facts(lake, derived=False)[0]
    for _ in range(2):
        files, written = compact_lake(lake, retain_hours=0)
        rows, kept = facts(lake)
        assert kept is not None and rows == live
        # 10 rows in batches of 2, a file once it has 3 or more: 4, 4, 2
        assert len(lake.parts("positions")) == files["positions"][1] == 3
    assert written == {"position_facts": 0}     # current since the first
    assert lake.read("positions").num_rows == 10


def test_a_key_range_connection_holds_the_range_of_facts_kept_or_computed(
        tmp_path: Path) -> None:
    """On a connection for a key range, position_facts holds the rows of that range, as
    Python filters them, both computed by its query and read from positions' files (below
    2^63, above it: stored negative, and across it)."""
    lake = Lake(tmp_path / "home")
    ingest(lake, tmp_path, "first.pgn", FIRST)
    ingest(lake, tmp_path, "second.pgn", SECOND)
    every = facts(lake, derived=False)[0]
    ranges = ((0, (1 << 63) - 1), (1 << 63, (1 << 64) - 1), (1 << 62, 3 << 62))
    for kept in (False, True):
        if kept:
            refresh(lake)
        assert (facts(lake)[1] is not None) == kept
        for lo, hi in ranges:
            want = [row for row in every if lo <= row[0] <= hi]
            assert 0 < len(want) < len(every)
            con = connect_with_files(lake, key_range=(lo, hi))[0]
            assert con.sql(ROWS).fetchall() == want, (lo, hi, kept)
