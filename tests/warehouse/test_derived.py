"""Derived tables (warehouse/derived.py): position_facts kept by compact is read only while
positions, moves and games hold exactly the files it was computed from. It is kept in the
positions table itself (issue 51: its FENs were a second copy of every position's): positions'
files rewritten sorted by key with its columns beside positions' own, which positions' readers
still read as they were."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import chess
import chess.polyglot
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

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
    assert refresh(lake, ["position_facts"]) == {"position_facts": 7}
    assert refresh(lake, ["position_facts"]) == {"position_facts": 0}   # current: nothing to do
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
    assert refresh(lake, ["position_facts"]) == {"position_facts": 10}
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
    assert set(written.values()) == {0}     # every derived table current since the first
    assert lake.read("positions").num_rows == 10


@pytest.mark.parametrize("overlay", [False, True])
def test_a_key_range_connection_holds_the_range_of_facts_kept_or_computed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, overlay: bool) -> None:
    """On a connection for a key range, position_facts holds the rows of that range, as
    Python filters them, both computed by its query and read from positions' files (below
    2^63, above it: stored negative, and across it), with and without an overlay."""
    monkeypatch.setattr(refresh_module, "FOLD", 0.5)
    lake = Lake(tmp_path / "home")
    ingest(lake, tmp_path, "first.pgn", FIRST)
    if overlay:     # kept from FIRST's positions, SECOND's in the overlay
        refresh(lake)
    ingest(lake, tmp_path, "second.pgn", SECOND)
    every = facts(lake, derived=False)[0]
    ranges = ((0, (1 << 63) - 1), (1 << 63, (1 << 64) - 1), (1 << 62, 3 << 62))
    for kept in (False, True):
        if kept:
            refresh(lake)
            assert ("overlay" in manifest_of(lake)) == overlay
        assert (facts(lake)[1] is not None) == kept
        for lo, hi in ranges:
            want = [row for row in every if lo <= row[0] <= hi]
            assert 0 < len(want) < len(every)
            con = connect_with_files(lake, key_range=(lo, hi))[0]
            assert con.sql(ROWS).fetchall() == want, (lo, hi, kept)


def ordered_by_game_id(tmp_path: Path) -> tuple[str, str]:
    """FIRST and SECOND, the one whose game_id is higher first (ingested into a scratch home
    to learn their ids): a position both play then has its lowest game changed by the second."""
    scratch = Lake(tmp_path / "scratch")
    ingest(scratch, tmp_path, "first.pgn", FIRST)
    [(first_id,)] = connect_with_files(scratch)[0].sql("select game_id from games").fetchall()
    ingest(scratch, tmp_path, "second.pgn", SECOND)
    ids = [g for g, in connect_with_files(scratch)[0].sql("select game_id from games").fetchall()]
    [second_id] = [g for g in ids if g != first_id]
    return (FIRST, SECOND) if first_id > second_id else (SECOND, FIRST)


def manifest_of(lake: Lake) -> dict[str, object]:
    [manifest] = (lake.root / DERIVED_DIR / "position_facts").glob("*.json")
    return json.loads(manifest.read_text())


def test_facts_are_brought_up_to_date_from_the_rows_added_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After rows are only added, refresh computes the rows that change (new positions,
    positions played in a lower game, games whose row came after their moves) into an
    overlay instead of rewriting positions: the view then gives the defining query's rows."""
    monkeypatch.setattr(refresh_module, "FOLD", 0.5)   # an overlay up to twice the rows kept
    high, low = ordered_by_game_id(tmp_path)
    lake = Lake(tmp_path / "home")
    ingest(lake, tmp_path, "high.pgn", high)
    assert refresh(lake, ["position_facts"]) == {"position_facts": 7}
    kept = lake.parts("positions")
    assert "overlay" not in manifest_of(lake)
    ingest(lake, tmp_path, "low.pgn", low)
    # its 3 new positions, and the 4 both games play (before 1. e4 ... 2. Nf3), whose
    # lowest game is now the second's
    assert refresh(lake, ["position_facts"]) == {"position_facts": 3 + 4}
    rows, current = facts(lake)
    assert current is not None and rows == facts(lake, derived=False)[0]
    assert len(rows) == 10 and set(kept) < set(lake.parts("positions"))   # not rewritten
    event = "one" if low == FIRST else "two"
    [(low_id,)] = connect_with_files(lake)[0].sql(
        f"select game_id from games where event = '{event}'").fetchall()
    # the 6 positions the low game moves from (its last has no move: no game, as the high's)
    assert sum(row[4] == low_id for row in rows) == 6
    assert sum(row[4] is None for row in rows) == 2
    meta = manifest_of(lake)
    assert meta["overlay_rows"] == 7 and meta["kept"] == [p.name for p in kept]
    # compact leaves positions' files as they are while the facts they hold are current
    assert compact_lake(lake, retain_hours=0)[1]["position_facts"] == 0
    assert facts(lake)[0] == rows
    earlier = connect_with_files(lake)[0]      # a reader of this overlay, opened before

    # a game's moves stored before its position and game rows (ingest's order, a compact
    # between them): game "0", lower than any hash, plays the start and a new position
    start = chess.Board()
    board = chess.Board()
    board.push_uci("d2d4")
    new_key = chess.polyglot.zobrist_hash(board)
    lake.write("moves", [{"game_id": "0", "ply": 0, "position_key": chess.polyglot.zobrist_hash(
        start), "uci": "d2d4", "san": "d4"}, {"game_id": "0", "ply": 1, "position_key": new_key,
                                               "uci": "g8f6", "san": "Nf6"}])
    assert refresh(lake, ["position_facts"]) == {"position_facts": 1}      # the start, now in game "0"
    assert earlier.sql(ROWS).fetchall() == rows        # still reads the overlay it named
    lake.write("positions", [{"position_key": new_key, "fen": board.fen(), "source_id": "s"}])
    assert refresh(lake, ["position_facts"]) == {"position_facts": 1}      # the new position, in game "0"
    lake.write("games", [{"game_id": "0", "result": "1/2-1/2"}])
    assert refresh(lake, ["position_facts"]) == {"position_facts": 2}      # both: game "0"'s result now known
    rows = facts(lake)[0]
    assert rows == facts(lake, derived=False)[0] and len(rows) == 11
    assert sorted((r[0], r[4], r[5]) for r in rows if r[4] == "0") == sorted(
        [(chess.polyglot.zobrist_hash(start), "0", "1/2-1/2"), (new_key, "0", "1/2-1/2")])
    assert manifest_of(lake)["overlay_rows"] == 3 + 4 + 1     # keys changed twice once


def test_facts_are_computed_whole_after_a_row_removed_or_past_the_overlay_bounds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A removal from moves (not an append or a compaction's rewrite) makes the refresh
    compute the facts whole, and so does an overlay that would pass 1/FOLD of the rows
    kept, or more than MAX_PLAIN files of positions written since: positions' files are then
    rewritten with the overlay folded in."""
    monkeypatch.setattr(refresh_module, "FOLD", 1)
    lake = Lake(tmp_path / "home")
    ingest(lake, tmp_path, "first.pgn", FIRST)
    refresh(lake)
    ingest(lake, tmp_path, "second.pgn", SECOND)
    DeltaTable(str(lake.table_dir("moves"))).delete("ply = 5")
    assert refresh(lake, ["position_facts"]) == {"position_facts": 10}     # whole
    assert "overlay" not in manifest_of(lake)
    assert facts(lake)[0] == facts(lake, derived=False)[0]
    monkeypatch.setattr(refresh_module, "FOLD", 20)    # 10 kept: no overlay of 1 row
    ingest(lake, tmp_path, "third.pgn", FIRST.replace('"one"', '"three"').replace(
        "a6 1-0", "Nf6 1-0"))
    assert refresh(lake, ["position_facts"]) == {"position_facts": 11}     # 1 new position (+ lowered, maybe)
    assert "overlay" not in manifest_of(lake)
    assert facts(lake)[0] == facts(lake, derived=False)[0]
    monkeypatch.setattr(refresh_module, "FOLD", 0.01)  # any overlay, but no file of
    monkeypatch.setattr(refresh_module, "MAX_PLAIN", 0)    # positions without the facts
    ingest(lake, tmp_path, "fourth.pgn", FIRST.replace('"one"', '"four"').replace(
        "a6 1-0", "d6 1-0"))
    assert refresh(lake, ["position_facts"]) == {"position_facts": 12}
    assert "overlay" not in manifest_of(lake)
    assert facts(lake)[0] == facts(lake, derived=False)[0]


SUMMARY = ("select kind, engine_id, depth, side_to_move, in_game, result, positions, "
           "score_cp_sum from label_summary order by all")


def test_label_counts_by_kept_facts_and_the_overlays_corrections(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """label_summary adds up label_counts (every label by its position's facts as kept in
    positions' files) and label_counts_overlay (the labels of the positions position_facts'
    overlay changed: by the overlay's facts, less by the kept ones). A game that plays a
    labelled position held before changes that label's facts (now in a game, with the
    game's result): label_counts is only brought up to date (no label added: the same
    counts) and label_counts_overlay, computed again, moves the label to its new group."""
    board = chess.Board()
    board.push_san("e4")
    lake = Lake(tmp_path / "home")
    text = tmp_path / "labels.txt"
    text.write_text(f"{board.fen()} | 30 | 1.0\n")
    run_step(INGEST, IngestJob((text,), IngestConfig(
        workers=1, format="text", engine_id="sf-text", depth=9)), lake)
    assert refresh(lake) == {"label_depth_pairs": 0, "pgn_annotations": 0, "position_facts": 1,
                             "label_counts": 1, "label_counts_overlay": 0}
    con, _ = connect_with_files(lake)
    # the text's result is White's (1.0): Black to move after 1. e4, so 0 for the side to move
    assert con.sql(SUMMARY).fetchall() == [("label", "sf-text", 9, "b", False, 0.0, 1, -30)]
    whole: list[str] = []
    computed = refresh_module.write

    def recorded(*args: Any) -> int:
        whole.append(args[1].name)
        return computed(*args)
    monkeypatch.setattr(refresh_module, "write", recorded)
    # position_facts brought up to date by its overlay (positions' files not rewritten, which
    # would make label_counts computed whole)
    monkeypatch.setattr(refresh_module, "FOLD", 1e-9)
    ingest(lake, tmp_path, "first.pgn", FIRST)      # plays 1. e4: the label's position
    refresh(lake)
    assert manifest_of(lake).get("overlay") is not None
    assert "label_counts" not in whole and "label_counts_overlay" in whole
    con, _ = connect_with_files(lake)
    assert con.sql(SUMMARY).fetchall() == [("label", "sf-text", 9, "b", True, 0.0, 1, -30)]
    overlay = "select in_game, positions from label_counts_overlay order by all"
    assert con.sql(overlay).fetchall() == [(False, -1), (True, 1)]
    live = connect_with_files(lake, derived=False)[0].sql(SUMMARY).fetchall()
    assert con.sql(SUMMARY).fetchall() == live
    # computed whole beside the overlay: label_counts still by the facts as kept
    for path in (lake.root / DERIVED_DIR / "label_counts").iterdir():
        path.unlink()
    assert refresh(lake)["label_counts"] == 1
    assert connect_with_files(lake)[0].sql(SUMMARY).fetchall() == live


def test_a_full_refresh_drops_the_results_of_derived_tables_no_longer_defined(
        tmp_path: Path) -> None:
    """A home kept by an older version holds the results of derived tables this one does
    not define (label_summary was one, now a view): a refresh of every derived table removes
    them; one of some tables leaves them."""
    lake = Lake(tmp_path / "home")
    ingest(lake, tmp_path, "first.pgn", FIRST)
    old = lake.root / DERIVED_DIR / "label_summary"
    old.mkdir(parents=True)
    (old / "0123.json").write_text("{}")
    refresh(lake, ["position_facts"])
    assert old.is_dir()
    refresh(lake)
    assert not old.exists()
    assert (lake.root / DERIVED_DIR / "position_facts").is_dir()


def test_labels_written_while_a_summary_is_brought_up_to_date_are_counted_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """label_depth_pairs' increment reads the labels of the positions the new labels touch:
    a label written between the refresh's look at the files and the increment's own
    connection is not taken in then (it is computed whole over the files the refresh named),
    and the next refresh adds it once."""
    board = chess.Board()
    lake = Lake(tmp_path / "home")

    def label(name: str, depth: int, move: str) -> None:
        path = tmp_path / name
        path.write_text(json.dumps({"fen": board.epd(), "evals": [
            {"pvs": [{"cp": 20, "line": move}], "knodes": 1, "depth": depth}]}) + "\n")
        run_step(INGEST, IngestJob((path,), IngestConfig(workers=1, format="lichess-eval")),
                 lake)
    label("d10.jsonl", 10, "e2e4")
    refresh(lake)
    label("d12.jsonl", 12, "d2d4")
    connect = refresh_module.connect_with_files
    late: list[int] = []

    def written_meanwhile(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("readable") and not late:     # extend_summary's own connection
            late.append(1)
            label("d14.jsonl", 14, "e2e4")
        return connect(*args, **kwargs)
    monkeypatch.setattr(refresh_module, "connect_with_files", written_meanwhile)
    refresh(lake, ["label_depth_pairs"])
    assert late
    monkeypatch.undo()
    refresh(lake)
    pairs = ("select shallow, deep, agree, positions from label_depth_pairs order by all")
    kept = connect_with_files(lake)[0].sql(pairs).fetchall()
    assert kept == connect_with_files(lake, derived=False)[0].sql(pairs).fetchall()
    assert kept == [(10, 10, True, 1), (10, 12, False, 1), (10, 14, True, 1), (12, 12, True, 1),
                    (12, 14, False, 1), (14, 14, True, 1)]


def test_games_written_while_the_facts_are_brought_up_to_date_are_taken_in_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """extend_kept's increment reads moves and games whole on its own connection, opened
    after the refresh's look at the files: a game written in between may be seen early (its
    moves' lowest game, its result), and the next refresh, which takes its files as added,
    gives the same facts as the query (a row's game is a minimum and its result a lookup:
    seeing a row twice changes neither)."""
    monkeypatch.setattr(refresh_module, "FOLD", 0.5)
    high, low = ordered_by_game_id(tmp_path)
    lake = Lake(tmp_path / "home")
    ingest(lake, tmp_path, "high.pgn", high)
    refresh(lake, ["position_facts"])
    ingest(lake, tmp_path, "low.pgn", low)
    start, board = chess.Board(), chess.Board()
    board.push_uci("d2d4")
    new_key = chess.polyglot.zobrist_hash(board)
    connect = refresh_module.connect_with_files
    late: list[int] = []

    def written_meanwhile(*args: Any, **kwargs: Any) -> Any:
        if "readable" in kwargs and not late:       # extend_kept's own connection
            late.append(1)
            lake.write("moves", [
                {"game_id": "0", "ply": 0, "position_key": chess.polyglot.zobrist_hash(start),
                 "uci": "d2d4", "san": "d4"},
                {"game_id": "0", "ply": 1, "position_key": new_key, "uci": "g8f6",
                 "san": "Nf6"}])
            lake.write("positions", [{"position_key": new_key, "fen": board.fen(),
                                      "source_id": "s"}])
            lake.write("games", [{"game_id": "0", "result": "1/2-1/2"}])
        return connect(*args, **kwargs)
    monkeypatch.setattr(refresh_module, "connect_with_files", written_meanwhile)
    refresh(lake, ["position_facts"])
    assert late
    monkeypatch.undo()
    monkeypatch.setattr(refresh_module, "FOLD", 0.5)
    assert "overlay" in manifest_of(lake)
    refresh(lake, ["position_facts"])
    rows, current = facts(lake)
    assert current is not None and "overlay" in manifest_of(lake)
    assert rows == facts(lake, derived=False)[0] and len(rows) == 11
    assert sorted((r[0], r[4], r[5]) for r in rows if r[4] == "0") == sorted(
        [(chess.polyglot.zobrist_hash(start), "0", "1/2-1/2"), (new_key, "0", "1/2-1/2")])
