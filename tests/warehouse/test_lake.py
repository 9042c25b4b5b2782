"""The Delta Lake writer: each key once, schema enforcement, versions, compaction, refusals."""
from __future__ import annotations

import json
import random
from collections.abc import Collection
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

from warehouse import Lake, WarehouseError, compaction, connect
from warehouse.commits import WRITE_LOCK
from warehouse.datafiles import file_index
from warehouse.dedupe import candidate_files
from warehouse.schema import conform, to_storage
from warehouse.tables import table

START_KEY = 0x463B96181691FC9C  # Polyglot key of the start position (Polyglot spec value)
START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"
HIGH_KEY = 0xF3A4B5C6D7E8F901  # above 2**63: Delta's signed long holds it by its bits
KINGS_FEN = "8/8/8/8/8/8/8/K6k w - -"


def label_row(depth: int, score: int, engine: str = "sf-15.1-abc",
              key: int = START_KEY) -> dict[str, object]:
    return {"position_key": key, "engine_id": engine, "depth": depth, "score_cp": score}


def test_a_fact_written_twice_is_stored_once_in_the_files(home: Path) -> None:
    """Keyed tables drop stored keys: a second write of the same key stores nothing, so
    any reader of the raw files (pyarrow here) counts one row, not two."""
    lake = Lake(home)
    row = {"position_key": START_KEY, "fen": START_FEN, "source_id": "s1"}
    assert lake.write("positions", [row]) == 1
    assert lake.write("positions", [row, {"position_key": HIGH_KEY, "fen": KINGS_FEN}]) == 1
    assert ds.dataset([str(p) for p in lake.parts("positions")]).count_rows() == 2
    con = connect(lake)
    assert con.execute("select position_key, fen from positions order by position_key"
                       ).fetchall() == [(START_KEY, START_FEN), (HIGH_KEY, KINGS_FEN)]
    assert sorted(lake.read("positions").column("position_key").to_pylist()) == \
        [START_KEY, HIGH_KEY]


def test_first_row_of_a_key_wins_within_one_write(home: Path) -> None:
    lake = Lake(home)
    lake.write("positions", [{"position_key": 9, "fen": START_FEN},
                             {"position_key": 9, "fen": KINGS_FEN}])
    assert lake.read("positions", columns=["fen"]).to_pylist() == [{"fen": START_FEN}]


def test_first_label_of_a_key_wins_within_one_write_of_several_partitions(home: Path) -> None:
    """The key is (position, engine, depth): a row repeating all three is dropped, rows that
    differ in the engine (a string) or the depth are kept, the first of a key wins."""
    lake = Lake(home)
    rows = [label_row(5, 1), label_row(5, 2), label_row(5, 3, engine="other"), label_row(6, 4),
            label_row(5, 5, key=HIGH_KEY), label_row(6, 6)]
    assert lake.write("labels", rows) == 4
    got = connect(lake).execute("select position_key, engine_id, depth, score_cp from labels "
                                "order by all").fetchall()
    assert got == sorted([(START_KEY, "sf-15.1-abc", 5, 1), (START_KEY, "other", 5, 3),
                          (START_KEY, "sf-15.1-abc", 6, 4), (HIGH_KEY, "sf-15.1-abc", 5, 5)])


def test_labels_are_partitioned_by_engine_and_depth(home: Path) -> None:
    """labels live in engine_id=/depth= folders and depth reads back as an integer."""
    lake = Lake(home)
    lake.write("labels", [label_row(5, 30), label_row(6, 25), label_row(7, 28)])
    parts = lake.parts("labels")
    assert sorted(p.parent.name for p in parts) == ["depth=5", "depth=6", "depth=7"]
    assert {p.parent.parent.name for p in parts} == {"engine_id=sf-15.1-abc"}
    lake.write("labels", [label_row(5, 99), label_row(5, 11, engine="other")])
    con = connect(lake)
    rows = con.execute("select engine_id, depth, score_cp from labels order by all").fetchall()
    assert rows == [("other", 5, 11), ("sf-15.1-abc", 5, 30), ("sf-15.1-abc", 6, 25),
                    ("sf-15.1-abc", 7, 28)]


def test_versions_pin_what_a_reader_saw(home: Path) -> None:
    """Each commit is a version; reading an old version gives exactly its rows (a training
    set pinned to it reads the same rows later)."""
    lake = Lake(home)
    assert lake.version("labels") == -1
    lake.write("labels", [label_row(5, 30)])
    pinned = lake.version("labels")
    lake.write("labels", [label_row(6, 25)])
    assert lake.version("labels") == pinned + 1
    assert lake.read("labels", columns=["depth"], version=pinned).to_pylist() == [{"depth": 5}]
    assert lake.read("labels").num_rows == 2
    with pytest.raises(WarehouseError, match="'labels' at version 99"):
        lake.read("labels", version=99)


def test_keys_are_checked_in_their_partition_and_key_range(home: Path) -> None:
    """A stored key is dropped only where it is stored: the same position at a new depth or
    engine is new. Files whose key range lies outside the batch's are not read."""
    lake = Lake(home)
    assert lake.write("labels", [label_row(5, 30, key=k) for k in (10, 20)]) == 2
    assert lake.write("labels", [label_row(5, 31, key=20), label_row(6, 31, key=20),
                                 label_row(5, 31, key=20, engine="other"),
                                 label_row(5, 31, key=15)]) == 3
    rows = lake.read("labels", columns=["position_key", "engine_id", "depth", "score_cp"])
    assert sorted(tuple(r.values()) for r in rows.to_pylist()) == [
        (10, "sf-15.1-abc", 5, 30), (15, "sf-15.1-abc", 5, 31), (20, "other", 5, 31),
        (20, "sf-15.1-abc", 5, 30), (20, "sf-15.1-abc", 6, 31)]
    spec, files = table("labels"), file_index(DeltaTable(str(lake.table_dir("labels"))))
    batch = to_storage(conform(spec, [label_row(5, 0, key=k) for k in (11, 14)]))
    assert [Path(uri).parent.name for uri in candidate_files(spec, files, batch)] == ["depth=5"]
    batch = to_storage(conform(spec, [label_row(5, 0, key=k) for k in (21, 99)]))
    assert candidate_files(spec, files, batch) == []


def test_high_keys_are_found_by_their_stored_bits(home: Path) -> None:
    """Keys above 2**63 are stored signed; a second write of one still finds it."""
    lake = Lake(home)
    rows = [{"position_key": HIGH_KEY, "fen": KINGS_FEN}, {"position_key": 5, "fen": START_FEN}]
    assert lake.write("positions", rows) == 2
    assert lake.write("positions", rows[::-1]) == 0
    assert sorted(lake.read("positions").column("position_key").to_pylist()) == [5, HIGH_KEY]


def test_long_string_keys_are_found_despite_truncated_statistics(home: Path) -> None:
    """Delta's file statistics keep a 64-character prefix of a string (the maximum rounded
    up): keys longer than that, alike in their first 64 characters, are still found."""
    lake = Lake(home)
    stem = "f" * 70
    assert lake.write("sources", [{"source_id": stem + "5", "path": "a.pgn"}]) == 1
    assert lake.write("sources", [{"source_id": stem + s, "path": "b.pgn"}
                                  for s in ("5", "1", "9")]) == 2
    assert sorted(lake.read("sources", columns=["source_id", "path"]).to_pylist(),
                  key=lambda r: r["source_id"]) == [
        {"source_id": stem + "1", "path": "b.pgn"}, {"source_id": stem + "5", "path": "a.pgn"},
        {"source_id": stem + "9", "path": "b.pgn"}]


def test_schema_is_enforced_naming_table_and_column(home: Path) -> None:
    """A misspelled column used to be stored as NULL; now it is refused, as is a missing or
    null required column (keys and partitions always are)."""
    lake = Lake(home)
    with pytest.raises(WarehouseError, match="table 'positions': unknown column 'colour'"):
        lake.write("positions", pa.table({"position_key": [1], "colour": ["w"]}))
    with pytest.raises(WarehouseError, match="table 'labels': unknown column 'scroe_cp'"):
        lake.write("labels", [{**label_row(5, 0), "scroe_cp": 3}])
    with pytest.raises(WarehouseError, match="table 'labels': required column 'depth' is missing"):
        lake.write("labels", [{"position_key": 1, "engine_id": "sf"}])
    with pytest.raises(WarehouseError, match="table 'positions': required column 'fen' is null"):
        lake.write("positions", [{"position_key": 1, "fen": START_FEN}, {"position_key": 2}])
    with pytest.raises(WarehouseError, match="bad partition value"):
        lake.write("labels", [label_row(5, 0, engine="../escape")])
    assert lake.version("positions") == -1 and lake.version("labels") <= 0


def test_compact_optimizes_and_vacuums(home: Path) -> None:
    """Small files become one per partition, the replaced files are vacuumed, no row lost."""
    lake = Lake(home)
    for key in range(1, 4):
        lake.write("labels", [label_row(5, key, key=key), label_row(6, key, key=key)])
    assert lake.compact("labels", retain_hours=0) == (6, 2)
    data_files = [p for p in lake.table_dir("labels").rglob("*.parquet")
                  if "_delta_log" not in p.parts]    # not the log's checkpoints
    assert len(data_files) == 2
    assert lake.read("labels").num_rows == 6
    assert (lake.table_dir("labels") / WRITE_LOCK).is_file()   # vacuum leaves the lock file
    assert lake.write("labels", [label_row(5, 0, key=2), label_row(5, 0, key=4)]) == 1


@pytest.mark.parametrize("engine", ["sf-15.1-abc", "sf:1@x+y"])   # the second escaped on disk
def test_compact_sorts_only_the_labels_added_since_into_a_run_of_their_own(
        home: Path, monkeypatch: pytest.MonkeyPatch, engine: str) -> None:
    """Issue 51 §2, compact proportional to what changed: a partition sorted once is not
    sorted again for a few labels added; while a key is in at most two row groups nothing is
    rewritten, past that the files added since become one sorted run (the sorted files stay
    as they are), and only past 1/8 of the partition's bytes is it sorted whole. Every row
    is kept, each file's row groups hold disjoint key ranges, and the rewrites are marked as
    Delta marks optimize's (no data change)."""
    monkeypatch.setattr(compaction, "SORTED_FILE_BYTES", 1)       # no partition "small"
    monkeypatch.setattr(compaction, "SORTED_ROW_GROUP", 64)
    lake = Lake(home)
    rng = random.Random(5)
    held = rng.sample(range(1, 1 << 62), 2000)

    def label_rows(keys: list[int]) -> list[dict[str, object]]:
        return [label_row(5, key % 1000, engine=engine, key=key) for key in keys]

    lake.write("labels", label_rows(held[:1000]))
    lake.write("labels", label_rows(held[1000:1600]))   # two files: sorted whole
    compact_labels = lambda: lake.compact("labels", retain_hours=0)   # noqa: E731
    compact_labels()
    run = set(lake.parts("labels"))
    assert one_run(run)
    lake.write("labels", label_rows(held[1600:1650]))
    assert compact_labels() == (len(run) + 1,) * 2          # a key in two row groups: kept
    lake.write("labels", label_rows(held[1650:1700]))
    version = lake.version("labels")
    files = compact_labels()                # the two new sorted into one run of their own
    added = set(lake.parts("labels")) - run
    assert files[0] == len(run) + 2 and files[1] == len(run) + len(added)
    assert run < set(lake.parts("labels")) and one_run(added)
    assert sum(pq.ParquetFile(path).metadata.num_rows for path in added) == 100
    logs = lake.table_dir("labels") / "_delta_log"
    changes = [action[kind].get("dataChange")
               for number in range(version + 1, lake.version("labels") + 1)
               for action in map(json.loads, (logs / f"{number:020d}.json").read_text().splitlines())
               for kind in ("add", "remove") if kind in action]
    assert len(changes) == 2 + len(added) and not any(changes)   # two removed, the run added
    assert stored_keys(lake, engine) == sorted(held[:1700])
    lake.write("labels", label_rows(held[1700:]))            # 300 more: past 1/8, whole
    compact_labels()
    assert not run & set(lake.parts("labels"))
    assert one_run(lake.parts("labels"))
    assert stored_keys(lake, engine) == sorted(held)


def test_a_small_partition_sorted_into_several_files_is_not_sorted_again(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows wide in memory make a sort write several files where their bytes on disk would
    make one (FILE_MEMORY before SORTED_FILE_BYTES): the partition, small, is then one run,
    and the next compact leaves it as it is instead of sorting it again every time."""
    monkeypatch.setattr(compaction, "SORTED_ROW_GROUP", 64)
    monkeypatch.setattr(compaction, "FILE_MEMORY", 64 << 10)      # ~1,000 label rows
    lake = Lake(home)
    keys = random.Random(9).sample(range(1, 1 << 62), 3000)
    lake.write("labels", [label_row(5, key % 1000, key=key) for key in keys[:1500]])
    lake.write("labels", [label_row(5, key % 1000, key=key) for key in keys[1500:]])
    lake.compact("labels", retain_hours=0)
    sorted_files = set(lake.parts("labels"))
    assert len(sorted_files) > 1 and one_run(sorted_files)
    assert lake.compact("labels", retain_hours=0) == (len(sorted_files),) * 2
    assert set(lake.parts("labels")) == sorted_files      # the same files: not rewritten
    assert stored_keys(lake, "sf-15.1-abc") == sorted(keys)


def test_compact_sorts_files_written_before_a_column_existed(home: Path) -> None:
    """A labels partition whose first file predates the ``result`` and ``bound`` columns (an
    older chesslab's) and whose second has them is sorted whole into one run: the old rows'
    new columns null, the new rows' kept, every other column as written (the PV a list), the
    engine and depth from the folder."""
    spec = table("labels")
    old = to_storage(conform(spec, [
        {**label_row(7, 10 * k, key=k), "pv": ["e2e4", "e7e5"], "nodes": 1 << 40}
        for k in (5, 3, 9)])).drop_columns(["result", "bound"])
    folder = home / "lake" / "labels"
    write_deltalake(str(folder), old, partition_by=["engine_id", "depth"])
    lake = Lake(home)
    lake.write("labels", [{**label_row(7, 10 * k, key=k), "result": 0.5, "bound": "lower"}
                          for k in (4, 8)])
    assert len(lake.parts("labels")) == 2
    assert lake.compact("labels", retain_hours=0) == (2, 1)
    assert one_run(lake.parts("labels"))
    [path] = lake.parts("labels")
    assert pq.read_table(path).column("position_key").to_pylist() == [3, 4, 5, 8, 9]
    rows = connect(lake).execute(
        "select position_key, engine_id, depth, score_cp, pv, nodes, result, bound "
        "from labels order by position_key").fetchall()
    assert rows == [(3, "sf-15.1-abc", 7, 30, ["e2e4", "e7e5"], 1 << 40, None, None),
                    (4, "sf-15.1-abc", 7, 40, None, None, 0.5, "lower"),
                    (5, "sf-15.1-abc", 7, 50, ["e2e4", "e7e5"], 1 << 40, None, None),
                    (8, "sf-15.1-abc", 7, 80, None, None, 0.5, "lower"),
                    (9, "sf-15.1-abc", 7, 90, ["e2e4", "e7e5"], 1 << 40, None, None)]


def one_run(paths: Collection[Path]) -> bool:
    """The files' row groups, all together, hold disjoint ranges of position_key."""
    return compaction.disjoint([r for path in paths
                                for r in compaction.row_group_ranges(str(path), "position_key")])


def stored_keys(lake: Lake, engine: str) -> list[int]:
    """The labels' keys, each checked to be stored with its score under its engine and depth."""
    rows = connect(lake).execute("select position_key, score_cp, engine_id, depth "
                                 "from labels").fetchall()
    assert {r[2] for r in rows} == {engine} and all(r[1] == r[0] % 1000 and r[3] == 5
                                                   for r in rows)
    return sorted(r[0] for r in rows)


def test_old_part_layout_is_refused_naming_the_folder(home: Path) -> None:
    folder = home / "lake" / "positions"
    folder.mkdir(parents=True)
    (folder / "part-0123.parquet").write_bytes(b"PAR1")
    with pytest.raises(WarehouseError, match=f"{folder} holds Parquet parts without a Delta log"):
        connect(home)
    with pytest.raises(WarehouseError, match="without a Delta log"):
        Lake(home).write("positions", [{"position_key": 1, "fen": START_FEN}])


def test_nullable_key_columns_match_null_safely(home: Path) -> None:
    """An EPD error has no game index: written twice (a rerun), it is still stored once,
    while a null in a plain key column is refused."""
    lake = Lake(home)
    error = {"source_id": "s", "game_index": None, "line": 3, "kind": "bad_fen", "message": "x"}
    assert lake.write("ingest_errors", [error]) == 1
    assert lake.write("ingest_errors", [error, {**error, "line": None}]) == 1
    assert lake.read("ingest_errors").num_rows == 2
    with pytest.raises(WarehouseError, match="required column 'source_id' is null"):
        lake.write("ingest_errors", [{**error, "source_id": None}])


def test_a_table_another_process_is_creating_reads_as_not_there_yet(home: Path) -> None:
    """Between a writer creating ``_delta_log`` and its first commit landing, a reader (a
    dashboard, a test polling progress) sees no table rather than an error."""
    lake = Lake(home)
    (lake.table_dir("labels") / "_delta_log").mkdir(parents=True)
    assert lake.delta("labels") is None and lake.parts("labels") == []


def test_a_key_of_two_columns_is_found_whatever_its_first_column_holds(home: Path) -> None:
    """Moves (game_id, ply): a batch mixing moves stored already, new plies of a stored game
    and moves of new games stores exactly the keys a set of the stored keys lacks; a batch of
    new games only stores all of it."""
    lake = Lake(home)

    def moves(keys: list[tuple[str, int]], uci: str) -> list[dict[str, object]]:
        return [{"game_id": g, "ply": p, "position_key": 1, "uci": uci} for g, p in keys]

    stored = [("a", 0), ("a", 1), ("b", 0)]
    assert lake.write("moves", moves(stored, "e2e4")) == 3
    assert lake.write("moves", moves([("c", 0), ("d", 0), ("d", 1)], "e2e4")) == 3
    batch = [("a", 1), ("a", 2), ("b", 0), ("e", 0), ("c", 1), ("d", 1)]
    assert lake.write("moves", moves(batch, "d2d4"), unique=True) == 3
    assert lake.write("moves", moves([("f", 0), ("g", 3)], "d2d4"), unique=True) == 2
    rows = lake.read("moves", columns=["game_id", "ply", "uci"]).to_pylist()
    assert sorted((r["game_id"], r["ply"], r["uci"]) for r in rows) == [
        ("a", 0, "e2e4"), ("a", 1, "e2e4"), ("a", 2, "d2d4"), ("b", 0, "e2e4"),
        ("c", 0, "e2e4"), ("c", 1, "d2d4"), ("d", 0, "e2e4"), ("d", 1, "e2e4"),
        ("e", 0, "d2d4"), ("f", 0, "d2d4"), ("g", 3, "d2d4")]


def test_positions_and_moves_files_are_compressed_without_key_dictionaries(home: Path) -> None:
    """The Parquet settings of positions and moves (warehouse.encoding.WRITER_PROPERTIES): every
    column compressed (naming a setting leaves Parquet's own default, no compression, unless
    the codec is named too), no dictionary for the nearly distinct key and FEN columns, a
    dictionary still for the rest; the values read back as written."""
    import pyarrow.parquet as pq

    lake = Lake(home)
    fens = [f"8/8/8/8/8/8/8/{n} w - -" for n in range(50)]
    lake.write("positions", [{"position_key": n * 7919, "fen": fen, "source_id": "s",
                              "in_check": False} for n, fen in enumerate(fens)])
    lake.write("moves", [{"game_id": "g", "ply": n, "position_key": n * 7919, "uci": "e2e4",
                          "san": "e4"} for n in range(50)])
    for name, plain, coded in (("positions", {"position_key", "fen"}, "source_id"),
                               ("moves", {"position_key"}, "game_id")):
        [part] = lake.parts(name)
        meta = pq.ParquetFile(part).metadata.row_group(0)
        columns = {meta.column(i).path_in_schema: meta.column(i) for i in range(meta.num_columns)}
        assert all(c.compression != "UNCOMPRESSED" for c in columns.values()), name
        assert {n for n in plain if "RLE_DICTIONARY" in columns[n].encodings} == set()
        assert "RLE_DICTIONARY" in columns[coded].encodings
    assert lake.read("positions", ["fen"]).column("fen").to_pylist() == fens
    assert lake.read("moves", ["ply"]).column("ply").to_pylist() == list(range(50))


def test_files_sorted_by_key_store_it_delta_encoded(home: Path) -> None:
    """compact's sorted files (labels' sorted partitions, positions' files holding
    position_facts) store the key delta-encoded without a dictionary: 20,000 random keys
    over the whole unsigned range, sorted, take under 7 bytes each (as written, a random key
    takes 8 bytes or more: no codec shrinks it), and read back as written."""
    from warehouse.refresh import compact_lake

    lake = Lake(home)
    rng = random.Random(51)
    keys = list({rng.getrandbits(64) for _ in range(20_000)})
    fens = [f"8/8/8/8/8/8/8/{n} w - -" for n in range(len(keys))]
    fen_of = dict(zip(keys, fens, strict=True))
    for half in (keys[:10_000], keys[10_000:]):   # two files each: sorted whole by compact
        lake.write("labels", [label_row(9, key % 1000, key=key) for key in half])
        lake.write("positions", [{"position_key": key, "fen": fen_of[key], "source_id": "s"}
                                 for key in half])
    compact_lake(lake, retain_hours=0)
    for name in ("labels", "positions"):
        size = 0
        for part in lake.parts(name):
            meta = pq.ParquetFile(part).metadata
            for group in range(meta.num_row_groups):
                chunk = meta.row_group(group).column(0)
                assert chunk.path_in_schema == "position_key"
                assert "DELTA_BINARY_PACKED" in chunk.encodings, (name, chunk.encodings)
                assert "RLE_DICTIONARY" not in chunk.encodings, name
                size += chunk.total_compressed_size
        assert size < 7 * len(keys), (name, size / len(keys))
        con = connect(lake)
        assert [k for k, in con.sql(f"select position_key from {name} order by 1").fetchall()
                ] == sorted(keys)
    assert sorted(connect(lake).sql("select position_key, fen from position_facts").fetchall()
                  ) == sorted(zip(keys, fens, strict=True))
