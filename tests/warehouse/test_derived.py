"""Derived tables (warehouse/derived.py): position_facts kept by compact is read only while
positions, moves and games hold exactly the files it was computed from."""
from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from flows.ingest import INGEST, IngestJob
from flows.step import run_step
from pipelines.ingest import IngestConfig
from warehouse import Lake
from warehouse.catalog import connect_with_files
from warehouse.derived import DERIVED_DIR, current_file, derived_tables
from warehouse.refresh import refresh

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
    assert sorted(pq.read_table(kept).to_pylist(), key=lambda r: r["position_key"]) == [
        dict(zip(("position_key", "fen", "side_to_move", "in_check", "game_id", "game_result"),
                 row, strict=True)) for row in computed]
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
    assert len(list((lake.root / DERIVED_DIR / "position_facts").iterdir())) == 2


def test_a_file_without_its_manifest_is_not_used(tmp_path: Path) -> None:
    """A refresh killed before its manifest leaves a Parquet file that is never read."""
    lake = Lake(tmp_path / "home")
    ingest(lake, tmp_path, "first.pgn", FIRST)
    refresh(lake)
    folder = lake.root / DERIVED_DIR / "position_facts"
    [manifest] = folder.glob("*.json")
    manifest.unlink()
    rows, kept = facts(lake)
    assert kept is None and rows == facts(lake, derived=False)[0]
