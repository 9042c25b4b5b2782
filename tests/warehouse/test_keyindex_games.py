"""The key index of games and moves: ``game_id`` (a string) indexed by its hash.

A keyed write of games or moves reads only the files the index names (a hash hit is
confirmed there, a miss is certain), so it costs the same however many files are stored.
Expected values come from Python sets of the rows written; the files are read back with
pyarrow, not through the lake.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pytest

import warehouse.dedupe
import warehouse.keyindex
from warehouse import Lake
from warehouse.keyindex import INDEX_DIR, KeyIndex

PARTS = 10
PER_PART = 8


def game_ids(rng: random.Random, count: int) -> list[str]:
    """``count`` game ids like ingest's (32 hex digits of a hash)."""
    return [f"{rng.getrandbits(128):032x}" for _ in range(count)]


def game_rows(ids: list[str], source: str) -> pa.Table:
    return pa.table({"game_id": ids, "source_id": [source] * len(ids),
                     "game_index": pa.array(range(len(ids)), pa.int32())})


def move_rows(pairs: list[tuple[str, int]], uci: str) -> pa.Table:
    return pa.table({"game_id": [g for g, _ in pairs],
                     "ply": pa.array([p for _, p in pairs], pa.int32()),
                     "position_key": pa.array([p + 1 for _, p in pairs], pa.uint64()),
                     "uci": [uci] * len(pairs)})


def stored(lake: Lake, name: str, columns: list[str]) -> pa.Table:
    return ds.dataset([str(p) for p in lake.parts(name)]).to_table(columns=columns)


def files_holding(lake: Lake, name: str, ids: set[str]) -> set[str]:
    """The names of the table's files holding any of ``ids`` (read with pyarrow)."""
    return {p.name for p in lake.parts(name)
            if ids & set(ds.dataset(str(p)).to_table(columns=["game_id"])
                         .column("game_id").to_pylist())}


@pytest.fixture
def scanned(monkeypatch: pytest.MonkeyPatch) -> list[set[str]]:
    """The names of the files each keyed write's key scan read."""
    reads: list[set[str]] = []
    scan = warehouse.dedupe.absent_rows

    def recorded(spec, uris, group):  # type: ignore[no-untyped-def]
        reads.append({uri.rsplit("/", 1)[-1] for uri in uris})
        return scan(spec, uris, group)

    monkeypatch.setattr(warehouse.dedupe, "absent_rows", recorded)
    return reads


def fill_games(lake: Lake, rng: random.Random) -> list[list[str]]:
    parts = []
    for number in range(PARTS):
        ids = game_ids(rng, PER_PART)
        assert lake.write("games", game_rows(ids, f"s{number}")) == PER_PART
        parts.append(ids)
    return parts


def test_a_games_write_reads_only_the_files_the_index_names(
        home: Path, scanned: list[set[str]]) -> None:
    """Over ten stored files, new games are written without reading any stored file, and
    a batch with a game of the 1st and one of the 7th file reads those two files only: the
    stored games are refused (keeping their first source), the new ones stored."""
    rng = random.Random(35)
    lake = Lake(home)
    parts = fill_games(lake, rng)
    scanned.clear()
    new = game_ids(rng, 5)
    assert lake.write("games", game_rows(new, "fresh")) == 5
    assert scanned == [set()]
    scanned.clear()
    old = [parts[0][3], parts[6][0]]
    holding = files_holding(lake, "games", set(old))
    assert len(holding) == 2
    more = game_ids(rng, 2)
    assert lake.write("games", game_rows([*old, *more], "again")) == 2
    assert scanned == [holding]
    rows = stored(lake, "games", ["game_id", "source_id"]).to_pylist()
    assert sorted(r["game_id"] for r in rows) == sorted(
        [g for part in parts for g in part] + new + more)
    sources = {r["game_id"]: r["source_id"] for r in rows}
    assert (sources[old[0]], sources[old[1]]) == ("s0", "s6")


def test_a_games_moves_spread_over_files_are_all_found(
        home: Path, scanned: list[set[str]]) -> None:
    """A game whose moves were written in two parts (two files, other games between) is
    found in both: writing all its plies again stores none of them; a new game's moves are
    written without reading a stored file."""
    rng = random.Random(7)
    lake = Lake(home)
    long_game, = game_ids(rng, 1)
    assert lake.write("moves", move_rows([(long_game, p) for p in range(3)], "a")) == 3
    for _ in range(2):      # four writes: their runs merge into one, the game in it twice
        lake.write("moves", move_rows([(g, p) for g in game_ids(rng, 3) for p in range(4)], "b"))
    assert lake.write("moves", move_rows([(long_game, p) for p in range(3, 6)], "c")) == 3
    scanned.clear()
    fresh, = game_ids(rng, 1)
    assert lake.write("moves", move_rows([(fresh, p) for p in range(4)], "d")) == 4
    assert scanned == [set()]
    scanned.clear()
    holding = files_holding(lake, "moves", {long_game})
    assert len(holding) == 2
    assert lake.write("moves", move_rows([(long_game, p) for p in range(7)], "e")) == 1
    assert scanned == [holding]
    rows = stored(lake, "moves", ["game_id", "ply", "uci"]).to_pylist()
    mine = sorted((r["ply"], r["uci"]) for r in rows if r["game_id"] == long_game)
    assert mine == [(0, "a"), (1, "a"), (2, "a"), (3, "c"), (4, "c"), (5, "c"), (6, "e")]
    assert len(rows) == len({(r["game_id"], r["ply"]) for r in rows})


def test_a_hash_shared_by_different_games_is_confirmed_in_the_files(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With every game id hashed alike, each lookup hits: the files it names are read and
    the new games are still stored, the stored ones refused."""
    monkeypatch.setattr(warehouse.keyindex, "fingerprints",
                        lambda values: np.zeros(len(values), np.uint64))
    rng = random.Random(11)
    lake = Lake(home)
    parts = fill_games(lake, rng)
    new = game_ids(rng, 3)
    assert lake.write("games", game_rows([parts[2][1], *new, parts[9][7]], "x")) == 3
    ids = stored(lake, "games", ["game_id"]).column("game_id").to_pylist()
    assert sorted(ids) == sorted([g for part in parts for g in part] + new)


def test_games_runs_made_stale_by_compaction_or_another_hash_are_not_used(home: Path) -> None:
    """After compaction, and with a run claiming the live file holds no game, hashed under
    another DuckDB version: the stored games are still refused, the stale and foreign runs
    are removed, and the runs cover the live files."""
    rng = random.Random(5)
    lake = Lake(home)
    parts = fill_games(lake, rng)
    lake.compact("games", retain_hours=0)
    index = KeyIndex(lake.table_dir("games"), {})
    live = [p.name for p in lake.parts("games")]
    np.save(index.folder / "foreign.keys.npy", np.zeros(0, np.int64))
    np.save(index.folder / "foreign.files.npy", np.zeros(0, np.int32))
    (index.folder / "foreign.json").write_text(json.dumps({"files": live,
                                                           "hash": "duckdb-hash-0.0.0"}))
    again = [part[0] for part in parts]
    assert lake.write("games", game_rows([*again, "new"], "y")) == 1
    assert not (index.folder / "foreign.json").exists()
    assert all(set(run.files) <= {p.name for p in lake.parts("games")} for run in index.runs())
    assert sum(len(run.keys) for run in index.runs()) == PARTS * PER_PART + 1
    assert (lake.table_dir("games") / INDEX_DIR).is_dir()


def test_sources_key_files_name_only_the_file_holding_a_source(home: Path) -> None:
    """One sources row per file ingested, one file each: a source_id's lookup names the one
    file holding it, and none for a source not stored (ingest's already-ingested check)."""
    lake = Lake(home)
    ids = [f"{n:064x}" for n in range(PARTS)]
    for source_id in ids:
        lake.write("sources", [{"source_id": source_id, "path": f"/{source_id}.pgn"}])
    holding = lake.key_files("sources", pa.array([ids[4]]))
    assert len(holding) == 1
    assert ds.dataset(str(holding[0])).to_table().column("source_id").to_pylist() == [ids[4]]
    assert lake.key_files("sources", pa.array(["f" * 64])) == []
