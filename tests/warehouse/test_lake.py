"""The lake writer and the DuckDB catalog over it."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from warehouse import Lake, WarehouseError, connect
from warehouse.catalog import QueryError, query

START_KEY = 0x463B96181691FC9C  # Polyglot key of the start position (Polyglot spec value)
START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"


def label_row(depth: int, score: int, engine: str = "sf-15.1-abc") -> dict[str, object]:
    return {"position_key": START_KEY, "engine_id": engine, "depth": depth, "score_cp": score}


def test_write_is_atomic_parts_and_views_dedupe(home: Path) -> None:
    """Two writers of the same fact leave two parts; the view shows one row per key."""
    lake = Lake(home)
    row = {"position_key": START_KEY, "fen": START_FEN, "source_id": "s1"}
    first = lake.write("positions", [row])
    second = lake.write("positions", [row])
    assert first != second and len(lake.parts("positions")) == 2
    assert not list(lake.table_dir("positions").glob(".*.tmp"))
    con = connect(lake)
    assert con.execute("select count(*), any_value(fen) from positions").fetchone() == (1, START_FEN)
    # UBIGINT keys survive the round trip (the start key is above 2**62).
    assert con.execute("select position_key from positions").fetchone()[0] == START_KEY


def test_partitioned_labels_are_hive_folders_with_typed_columns(home: Path) -> None:
    """labels are partitioned by engine and depth, and depth reads back as an integer."""
    lake = Lake(home)
    parts = lake.write("labels", [label_row(5, 30), label_row(6, 25), label_row(7, 28)])
    assert sorted(p.parent.name for p in parts) == ["depth=5", "depth=6", "depth=7"]
    assert {p.parent.parent.name for p in parts} == {"engine_id=sf-15.1-abc"}
    con = connect(lake)
    rows = con.execute("select depth, score_cp from labels where depth >= 6 order by depth").fetchall()
    assert rows == [(6, 25), (7, 28)]
    coverage = con.execute("select engine_id, depth, positions from label_coverage").fetchall()
    assert coverage == [("sf-15.1-abc", 5, 1), ("sf-15.1-abc", 6, 1), ("sf-15.1-abc", 7, 1)]


def test_empty_tables_have_typed_views(home: Path) -> None:
    """A fresh home answers queries on every table with zero rows, not an error."""
    con = connect(home)
    assert con.execute("select count(*) from games").fetchone() == (0,)
    assert con.execute("select count(*) from label_coverage").fetchone() == (0,)


def test_compact_merges_parts_and_drops_duplicate_keys(home: Path) -> None:
    lake = Lake(home)
    for depth in (5, 5, 6):
        lake.write("labels", [label_row(depth, 10)])
    assert lake.compact("labels") == (3, 2)
    assert lake.read("labels").num_rows == 2


def test_unknown_columns_and_bad_partitions_are_refused(home: Path) -> None:
    lake = Lake(home)
    with pytest.raises(WarehouseError, match="unknown columns"):
        lake.write("positions", pa.table({"position_key": [1], "colour": ["w"]}))
    with pytest.raises(WarehouseError, match="bad partition value"):
        lake.write("labels", [label_row(5, 0, engine="../escape")])


def test_sql_is_read_only(home: Path) -> None:
    con = connect(home)
    assert query(con, "select 1 as x").to_pylist() == [{"x": 1}]
    for statement in ("create table t(a int)", "copy (select 1) to 'x.csv'",
                      "select 1; drop view games"):
        with pytest.raises(QueryError, match="read-only"):
            query(con, statement)
    with pytest.raises(QueryError, match="query failed"):
        query(con, "select no_such_column from games")


def test_volatility_examples_follow_paper_003_formula_3_1(home: Path) -> None:
    """stable = |V7 - V6| < 18 cp; delta = V6 - V5; pv_change compares depth 5 and 6 moves."""
    lake = Lake(home)
    lake.write("positions", [{"position_key": START_KEY, "fen": START_FEN},
                             {"position_key": 7, "fen": "8/8/8/8/8/8/8/K6k w - -"}])
    rows = [(START_KEY, 5, 20, None, "e2e4"), (START_KEY, 6, 35, None, "d2d4"),
            (START_KEY, 7, 52, None, "d2d4"),    # |52 - 35| = 17 < 18: stable
            (7, 5, 0, None, "a1b1"), (7, 6, 0, None, "a1b1"), (7, 7, None, 3, "a1b2")]
    lake.write("labels", [{"position_key": k, "engine_id": "sf", "depth": d, "score_cp": cp,
                           "score_mate": mate, "best_move": move} for k, d, cp, mate, move in rows])
    got = connect(lake).execute(
        "select position_key, delta_value, pv_change, change_67, stable "
        "from volatility_examples order by position_key").fetchall()
    assert got == [(7, 0, False, 10000, False), (START_KEY, 15, True, 17, True)]


def test_compact_sweeps_temporary_parts_of_killed_writers(home: Path) -> None:
    """A writer killed between write and rename leaves a hidden .tmp; compact removes it once
    it is stale, and a fresh one (a writer still at work) is left alone."""
    import os

    lake = Lake(home)
    lake.write("positions", [{"position_key": 1, "fen": START_FEN}])
    folder = lake.table_dir("positions")
    stale, fresh = folder / ".part-dead.parquet.tmp", folder / ".part-live.parquet.tmp"
    stale.write_bytes(b"PAR1 half")
    fresh.write_bytes(b"PAR1 half")
    os.utime(stale, (0, 0))
    lake.compact("positions")
    assert not stale.exists() and fresh.exists()
    assert connect(lake).execute("select count(*) from positions").fetchall() == [(1,)]
