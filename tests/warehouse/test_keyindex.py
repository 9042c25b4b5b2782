"""The key index of keyed writes: many stored parts, each key still stored once.

Expected values come from Python sets of the keys written, never from the lake; the files
are read back with pyarrow, not through the index.
"""
from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pytest
from deltalake import DeltaTable

from warehouse import Lake, keyindex
from warehouse.keyindex import INDEX_DIR, KeyIndex, Run, fingerprints

PARTS = 12
PER_PART = 300


def random_keys(rng: random.Random, count: int) -> list[int]:
    """``count`` distinct random 64-bit keys (Zobrist keys are uniform like these)."""
    keys: dict[int, None] = {}
    while len(keys) < count:
        keys[rng.getrandbits(64)] = None
    return list(keys)


def position_rows(keys: list[int], fen: str) -> pa.Table:
    return pa.table({"position_key": pa.array(keys, pa.uint64()),
                     "fen": [f"{fen} {k}" for k in keys], "source_id": ["s"] * len(keys)})


def stored(lake: Lake, name: str, columns: list[str]) -> pa.Table:
    return ds.dataset([str(p) for p in lake.parts(name)]).to_table(columns=columns)


def unsigned(values: pa.ChunkedArray) -> list[int]:
    return [v & (2**64 - 1) for v in values.to_pylist()]


def fill(lake: Lake, rng: random.Random) -> list[list[int]]:
    """PARTS commits of random 64-bit keys (each part spans the whole key range)."""
    parts = []
    for _ in range(PARTS):
        keys = random_keys(rng, PER_PART)
        assert lake.write("positions", position_rows(keys, "first")) == PER_PART
        parts.append(keys)
    return parts


def test_a_keyed_write_over_many_parts_refuses_every_stored_key(home: Path) -> None:
    """Keys from every stored part (the first, the last, all between) mixed with new keys:
    only the new ones are stored, the stored keys keep their first FEN, and the index that
    answered covers every part in a logarithmic number of runs."""
    rng = random.Random(35)
    lake = Lake(home)
    parts = fill(lake, rng)
    old = [key for part in parts for key in rng.sample(part, 25)]
    new = random_keys(rng, 200)
    batch = old + new
    rng.shuffle(batch)
    assert lake.write("positions", position_rows(batch, "second")) == len(set(new) - set(old))
    files = stored(lake, "positions", ["position_key", "fen"])
    keys = unsigned(files.column("position_key"))
    assert len(keys) == len(set(keys)) == PARTS * PER_PART + len(new)
    fens = dict(zip(keys, files.column("fen").to_pylist(), strict=True))
    assert all(fens[key] == f"first {key}" for key in old)
    assert all(fens[key] == f"second {key}" for key in new)
    runs = KeyIndex(lake.table_dir("positions"), {}).runs()
    covered = {name for run in runs for name in run.files}
    live = {p.name: p for p in lake.parts("positions")}
    assert covered == set(live)    # the part each write commits is indexed from its rows
    assert 1 <= len(runs) <= 5
    held = [k for name in covered for k in unsigned(
        ds.dataset(str(live[name])).to_table().column("position_key"))]
    assert sorted(k for run in runs for k in np.asarray(run.keys).tolist()) == \
        sorted(np.array(held, dtype=np.uint64).astype(np.int64).tolist())


def test_the_index_agrees_with_the_scan_of_every_part(home: Path, tmp_path: Path) -> None:
    """The same writes into a lake with the index and one without (the scan of every part):
    the same counts at every write and the same stored rows, with keys repeated across
    writes at random."""
    rng = random.Random(7)
    with_index, without = Lake(home), Lake(tmp_path / "plain", key_index=False)
    seen: set[int] = set()
    pool = random_keys(rng, 3000)
    for step in range(10):
        keys = rng.sample(pool, 250)
        expected = len(set(keys) - seen)
        seen |= set(keys)
        assert with_index.write("positions", position_rows(keys, f"w{step}")) == expected
        assert without.write("positions", position_rows(keys, f"w{step}")) == expected
    ours = stored(with_index, "positions", ["position_key", "fen"]).sort_by("position_key")
    theirs = stored(without, "positions", ["position_key", "fen"]).sort_by("position_key")
    assert ours.equals(theirs)
    assert sorted(unsigned(ours.column("position_key"))) == sorted(seen)
    assert not (tmp_path / "plain" / "lake" / "positions" / INDEX_DIR).exists()


def test_a_key_in_a_part_whose_range_looks_pruned_is_found(home: Path) -> None:
    """Parts of narrow key ranges (their statistics prune them) and a run covering them: a
    key inside one part's range is still refused, one between the ranges is stored."""
    lake = Lake(home)
    for low in (100, 1000, 10_000):
        lake.write("positions", position_rows(list(range(low, low + 50)), "first"))
    lake.write("positions", position_rows([5], "first"))   # the index now covers the three
    assert lake.write("positions", position_rows([1020, 500, 10_049, 99], "second")) == 2
    keys = unsigned(stored(lake, "positions", ["position_key"]).column("position_key"))
    assert sorted(keys) == sorted([*range(100, 150), *range(1000, 1050),
                                   *range(10_000, 10_050), 5, 500, 99])


def test_compaction_makes_runs_stale_and_they_are_rebuilt(home: Path) -> None:
    """After compact rewrites the parts, the runs of the old parts are not used (they name
    files gone), the next write rebuilds them from the new parts (3,600 keys and key 1) and
    still refuses every stored key; its own part (key 2) is indexed too."""
    rng = random.Random(3)
    lake = Lake(home)
    parts = fill(lake, rng)
    lake.write("positions", position_rows([1], "x"))
    lake.compact("positions", retain_hours=0)
    again = [key for part in parts for key in part[:10]]
    assert lake.write("positions", position_rows([*again, 2], "second")) == 1
    runs = KeyIndex(lake.table_dir("positions"), {}).runs()
    live = {p.name for p in lake.parts("positions")}
    assert all(set(run.files) <= live for run in runs)
    assert sum(len(run.keys) for run in runs) == PARTS * PER_PART + 2


def test_compact_removes_the_runs_it_made_stale(home: Path) -> None:
    """Issue 51: runs naming files a compaction replaced could never be used again, yet
    stayed on disk until the next write (a key index about as large as positions' own
    files). compact removes them; runs whose files all survive stay."""
    lake = Lake(home)
    lake.write("positions", position_rows([1, 2], "x"))
    lake.write("positions", position_rows([3], "x"))
    folder = lake.table_dir("positions") / INDEX_DIR / "all"
    assert list(folder.glob("*.json"))
    lake.compact("positions", retain_hours=0)
    assert not list(folder.glob("*"))
    assert lake.write("positions", position_rows([3, 4], "x")) == 1   # rebuilt, still refused
    lake.prune_key_index("positions")    # every file live: the runs stay
    runs = KeyIndex(lake.table_dir("positions"), {}).runs()
    assert sum(len(run.keys) for run in runs) == 4


def test_a_run_left_half_written_or_naming_a_lost_file_is_not_used(home: Path) -> None:
    """A run without its json (a writer killed while saving it) and a run naming a file the
    table does not hold are ignored: the key they claim is stored is stored."""
    lake = Lake(home)
    lake.write("positions", position_rows([10, 20], "first"))
    index = KeyIndex(lake.table_dir("positions"), {})
    index.folder.mkdir(parents=True, exist_ok=True)
    np.save(index.folder / "killed.keys.npy", np.array([30], np.int64))
    np.save(index.folder / "killed.files.npy", np.array([0], np.int32))
    assert [run.files for run in index.runs()] == [tuple(p.name for p in lake.parts("positions"))]
    lost = index.save(Run("", np.array([40], np.int64), np.array([0], np.int32),
                          ("gone.parquet",), np.array([0], np.uint64)))
    assert lost.files == ("gone.parquet",)
    assert lake.write("positions", position_rows([30, 40, 10], "second")) == 2
    keys = unsigned(stored(lake, "positions", ["position_key"]).column("position_key"))
    assert sorted(keys) == [10, 20, 30, 40]


def test_labels_are_indexed_per_partition(home: Path) -> None:
    """labels is partitioned by engine and depth: the same position at another depth is a
    new label, at the same depth a stored one, whatever the other partitions hold (with the
    index kept from the first key, and with the default, which keeps none at this size)."""
    for lake in (Lake(home / "indexed", index_threshold=0), Lake(home / "scanned")):
        check_labels(lake)
    assert (home / "indexed" / "lake" / "labels" / INDEX_DIR).is_dir()
    assert not (home / "scanned" / "lake" / "labels" / INDEX_DIR).exists()


def check_labels(lake: Lake) -> None:
    rng = random.Random(11)
    keys = random_keys(rng, 400)

    def labels(chunk: list[int], depth: int, score: int) -> pa.Table:
        return pa.table({"position_key": pa.array(chunk, pa.uint64()),
                         "engine_id": ["e"] * len(chunk), "depth": [depth] * len(chunk),
                         "score_cp": [score] * len(chunk)})

    for start in range(0, 400, 50):
        assert lake.write("labels", labels(keys[start:start + 50], 8, 1)) == 50
    assert lake.write("labels", labels(keys[::3], 8, 2)) == 0
    assert lake.write("labels", labels(keys[::3], 9, 3)) == len(keys[::3])
    assert lake.write("labels", labels(keys, 9, 4)) == 400 - len(keys[::3])
    table = lake.read("labels", ["position_key", "depth", "score_cp"])   # Delta's reader
    got = sorted(zip(table.column("position_key").to_pylist(), table.column("depth").to_pylist(),
                     table.column("score_cp").to_pylist(), strict=True))
    third = set(keys[::3])
    assert got == sorted([(k, 8, 1) for k in keys] +
                         [(k, 9, 3 if k in third else 4) for k in keys])


def test_key_files_names_the_parts_holding_the_keys(home: Path) -> None:
    """Ingest's stored-FEN lookup reads only the parts that hold its keys (once indexed)."""
    lake = Lake(home)
    for low in (100, 1000, 10_000):
        lake.write("positions", position_rows(list(range(low, low + 5)), "first"))
    Lake(home, key_index=False).write("positions", position_rows([7], "first"))   # not indexed
    parts = lake.parts("positions")
    holders = lake.key_files("positions", pa.array([1001, 10_004], pa.uint64()))
    by_keys = {p: set(unsigned(ds.dataset(str(p)).to_table().column("position_key")))
               for p in parts}
    expected = {p for p, held in by_keys.items() if held & {1001, 10_004}}
    unindexed = {p for p in parts if 7 in by_keys[p]}
    assert set(holders) == expected | unindexed
    assert len(holders) == 3


def test_stored_fens_tell_a_collision_from_a_known_position_through_the_index(
        home: Path) -> None:
    """Ingest's stored-FEN lookup settles a stored key by its FEN's fingerprint in the index:
    the same FEN is the stored one, another FEN under a stored key is given the FEN really
    stored (a collision), in an indexed part or in the part the index does not cover yet."""
    from pipelines.ingest.positions import stored_fens

    lake = Lake(home)
    lake.write("positions", position_rows([10, 20, 30], "first"))
    lake.write("positions", position_rows([40], "first"))
    Lake(home, key_index=False).write("positions", position_rows([50], "first"))  # not indexed
    keys = [10, 20, 40, 50, 60]
    fens = ["first 10", "other 20", "first 40", "other 50", "first 60"]
    got, complete = stored_fens(lake, pa.chunked_array([pa.array(keys, pa.uint64())]),
                                pa.chunked_array([pa.array(fens)]), lake.delta("positions"))
    assert not complete     # key 20 came with another FEN: its part was found afresh
    assert sorted(zip(got.column("position_key").to_pylist(),
                      got.column("stored_fen").to_pylist(), strict=True)) == \
        [(10, "first 10"), (20, "first 20"), (40, "first 40"), (50, "first 50")]
    runs = KeyIndex(lake.table_dir("positions"), {}).runs()
    assert sorted(k for run in runs for k in np.asarray(run.keys).tolist()) == [10, 20, 30, 40]


def test_a_write_absent_from_a_version_checks_the_files_committed_since(home: Path) -> None:
    """A caller that found its keys in no file of a version has only the files committed
    after it checked: a key committed since is not stored twice, nor counted."""
    lake = Lake(home)
    lake.write("positions", position_rows([10, 20], "first"))
    checked = lake.delta("positions")
    lake.write("positions", position_rows([30], "first"))
    assert lake.write("positions", position_rows([30, 40], "later"), unique=True,
                      absent_from=checked) == 1
    stored = lake.read("positions", columns=["position_key", "fen"]).to_pylist()
    assert sorted((row["position_key"], row["fen"]) for row in stored) == \
        [(10, "first 10"), (20, "first 20"), (30, "first 30"), (40, "later 40")]


def test_runs_are_read_once_and_forgotten_when_removed(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's arrays are read from disk once per process (a run never changes once its
    json is written); a run removed, here or by another process (its files deleted behind
    the index's back), is no longer listed nor kept."""
    import warehouse.keyindex as keyindex

    index = KeyIndex(tmp_path / "labels", {})
    runs = [index.save(Run("", np.array(sorted(keys)), np.zeros(len(keys), np.int32), (name,)))
            for keys, name in (([3, 1, 2], "a"), ([9, 7], "b"), ([5], "c"))]
    loads: list[str] = []
    real_load = np.load

    def counting(path: str, *args: object, **kwargs: object) -> np.ndarray:
        loads.append(str(path))
        return real_load(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(keyindex.np, "load", counting)
    keyindex._LOADED.clear()
    first = index.runs()
    assert [r.keys.tolist() for r in first] == [[1, 2, 3], [7, 9], [5]]
    reads = len(loads)
    assert reads == 6                      # keys and files of three runs
    assert [r.files for r in index.runs()] == [("a",), ("b",), ("c",)]
    assert len(loads) == reads             # not read again
    index.remove(runs[0].name)             # removed here
    for suffix in (".json", ".keys.npy", ".files.npy"):   # and by another process
        (index.folder / f"{runs[1].name}{suffix}").unlink()
    assert [r.files for r in index.runs()] == [("c",)]
    assert [key for key in keyindex._LOADED if key.startswith(str(index.folder))] == [
        str(index.folder / f"{runs[2].name}.json")]
    assert len(loads) == reads


def test_runs_listed_from_many_threads_while_runs_come_and_go(tmp_path: Path) -> None:
    """The lanes of a step list runs from several threads while runs are saved and removed
    (here and behind the index's back): every listing completes and names only whole runs."""
    import threading

    import warehouse.keyindex as keyindex

    indexes = [KeyIndex(tmp_path / f"labels{i}", {}) for i in range(4)]
    stop = threading.Event()
    errors: list[BaseException] = []

    def churn(index: KeyIndex, seed: int) -> None:
        rng = random.Random(seed)
        while not stop.is_set():
            keys = sorted(rng.sample(range(1000), 3))
            run = index.save(Run("", np.array(keys), np.zeros(3, np.int32), ("f",)))
            index.runs()
            if rng.random() < 0.5:
                index.remove(run.name)
            else:                              # another process removes it
                for suffix in (".json", ".keys.npy", ".files.npy"):
                    (index.folder / f"{run.name}{suffix}").unlink(missing_ok=True)

    def listing(index: KeyIndex) -> None:
        try:
            for _ in range(400):
                assert all(len(run.keys) == 3 for run in index.runs())
        except BaseException as exc:   # noqa: BLE001 - reported by the test
            errors.append(exc)

    keyindex._LOADED.clear()
    many = KeyIndex(tmp_path / "many", {})    # a long cache to walk: the race's window
    for key in range(300):
        many.save(Run("", np.array([key]), np.zeros(1, np.int32), ("f",)))
    many.runs()
    churners = [threading.Thread(target=churn, args=(index, i)) for i, index in
                enumerate(indexes)]
    listers = [threading.Thread(target=listing, args=(index,)) for index in indexes * 2]
    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)                # threads switch as often as they can
    try:
        for thread in churners + listers:
            thread.start()
        for thread in listers:
            thread.join()
    finally:
        stop.set()
        for thread in churners:
            thread.join()
        sys.setswitchinterval(switching)
    assert errors == []


def test_runs_kept_in_memory_are_bounded_with_their_file_descriptors(tmp_path: Path) -> None:
    """Each kept run maps its arrays (a file descriptor each): a process that lists the runs
    of many tables keeps at most RUN_CACHE_SIZE of them, not one per run ever listed."""
    import os

    import warehouse.keyindex as keyindex

    keyindex._LOADED.clear()
    before = len(os.listdir("/proc/self/fd"))
    for table in range(3 * keyindex.RUN_CACHE_SIZE):
        index = KeyIndex(tmp_path / f"t{table}", {})
        index.save(Run("", np.array([1, 2, 3]), np.zeros(3, np.int32), ("f",)))
        assert [r.keys.tolist() for r in index.runs()] == [[1, 2, 3]]
    assert len(keyindex._LOADED) == keyindex.RUN_CACHE_SIZE
    import gc

    gc.collect()
    assert len(os.listdir("/proc/self/fd")) - before <= 2 * keyindex.RUN_CACHE_SIZE + 8


def reference_print(text: bytes) -> int:
    """The fingerprint as warehouse/_fingerprint.pyx documents it, written again in Python:
    8-byte little-endian words (the last padded with zeros), each through murmur3's 64-bit
    finaliser into a rotate-and-multiply state, the length mixed in at the end."""
    mask = (1 << 64) - 1

    def fmix(h: int) -> int:
        h ^= h >> 33
        h = (h * 0xFF51AFD7ED558CCD) & mask
        h ^= h >> 33
        h = (h * 0xC4CEB9FE1A85EC53) & mask
        return h ^ (h >> 33)

    state = 0x9E3779B97F4A7C15
    for at in range(0, len(text), 8):
        word = fmix(int.from_bytes(text[at:at + 8].ljust(8, b"\0"), "little"))
        mixed = state ^ word
        state = ((((mixed << 29) | (mixed >> 35)) & mask) * 0x9E3779B97F4A7C15 + 0x52DCE729) & mask
    return fmix(state ^ len(text))


def test_fingerprints_are_the_documented_hash() -> None:
    """The compiled fingerprints (string keys, FENs) equal the hash written out in Python,
    for every length around the 8-byte words, non-ASCII text (its UTF-8 bytes), a sliced
    array and a chunked one; a null is 0."""
    rng = random.Random(5)
    texts = ["", "a", "é", *("".join(rng.choice("KQRBNPkqrbnp/12345678 w-") for _ in range(n))
                             for n in range(1, 70)),
             "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", "Ünïcødé ♞ 8/8"]
    expected = [reference_print(t.encode()) for t in texts]
    assert fingerprints(pa.array(texts)).tolist() == expected
    assert fingerprints(pa.array(texts).slice(3, 20)).tolist() == expected[3:23]
    chunked = pa.chunked_array([pa.array(texts[:10]), pa.array([None], pa.string()),
                                pa.array(texts[10:], pa.large_string()).cast(pa.string())])
    assert fingerprints(chunked).tolist() == [*expected[:10], 0, *expected[10:]]
    assert len(set(expected)) == len(texts)


@pytest.mark.parametrize("older", ["duckdb-hash", "chesslab-print-1", "chesslab-print-1/32"])
def test_runs_with_duckdbs_fingerprints_are_rebuilt_with_the_compiled_ones(
        home: Path, older: str) -> None:
    """A run written with DuckDB's hash as its FEN fingerprint, or with the compiled one's
    64 or 32 bits (older chesslabs'), is not used: the next write rebuilds it from the files, with
    16 bits of the fingerprints of the stored FENs (issue 51: 11 bytes a key on disk, not
    20 or 14); a stored FEN is then settled by the index alone (nothing left to read)."""
    from pipelines.ingest.positions import stored_fens

    lake = Lake(home)
    lake.write("positions", position_rows([10, 20, 30], "first"))
    folder = lake.table_dir("positions") / INDEX_DIR / "all"
    [manifest] = folder.glob("*.json")
    about = json.loads(manifest.read_text())
    about["fingerprint"] = f"duckdb-hash-{duckdb.__version__}" if older == "duckdb-hash" \
        else older   # as written before
    manifest.write_text(json.dumps(about))
    wide = np.uint32 if older == "chesslab-print-1/32" else np.uint64
    np.save(manifest.with_suffix(".checks.npy"), np.zeros(3, wide))
    keyindex._LOADED.clear()
    lake.write("positions", position_rows([40], "first"))
    runs = KeyIndex(lake.table_dir("positions"), {}).runs()
    assert manifest.stem not in {run.name for run in runs}
    for run in runs:    # 8 + 1 + 2 bytes a key on disk (each .npy: a 128-byte header)
        assert sum((folder / f"{run.name}{suffix}").stat().st_size - 128 for suffix in (
            ".keys.npy", ".files.npy", ".checks.npy")) == 11 * len(run.keys)
    prints = {int(k): int(c) for run in runs
              for k, c in zip(np.asarray(run.keys), np.asarray(run.checks), strict=True)}
    assert prints == {k: reference_print(f"first {k}".encode()) & 0xFFFF
                      for k in (10, 20, 30, 40)}
    got, complete = stored_fens(lake, pa.chunked_array([pa.array([10, 40, 50], pa.uint64())]),
                                pa.chunked_array([pa.array(["first 10", "first 40", "x"])]),
                                lake.delta("positions"))
    assert complete
    assert sorted(got.column("position_key").to_pylist()) == [10, 40]


def covered_files(lake: Lake, name: str) -> set[str]:
    """The files the table's key-index runs cover."""
    return {f for run in KeyIndex(lake.table_dir(name), {}).runs() for f in run.files}


def live_files(lake: Lake, name: str) -> set[str]:
    return {p.name for p in lake.parts(name)}


def test_files_committed_since_a_version_are_checked_through_the_index(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that checked its keys against an older version (as each of two ingest workers
    does) has the files committed since checked by the key index, not scanned (the index's
    runs cover them and older files together); the key committed since is stored once, the
    rest is stored, and its file is indexed at once (not left to the next writer to read)."""
    import warehouse.dedupe

    lake = Lake(home)
    for n in range(3):
        lake.write("positions", position_rows([n * 10 + 1, n * 10 + 2], "first"))
    checked = lake.delta("positions")
    # another worker, meanwhile: its run is the fourth of its tier, merged with the three
    # others, so no run covers its file alone
    lake.write("positions", position_rows([100], "other"))
    assert [len(run.files) for run in KeyIndex(lake.table_dir("positions"), {}).runs()] == [4]
    scans: list[int] = []
    monkeypatch.setattr(warehouse.dedupe, "key_absent",
                        lambda *args: scans.append(1) or pytest.fail("a file was scanned"))
    assert lake.write("positions", position_rows([100, 200], "later"), unique=True,
                      absent_from=checked) == 1
    assert scans == []
    rows = stored(lake, "positions", ["position_key", "fen"]).to_pylist()
    assert sorted((r["position_key"], r["fen"]) for r in rows if r["position_key"] >= 100) == \
        [(100, "other 100"), (200, "later 200")]
    assert covered_files(lake, "positions") == live_files(lake, "positions")


def test_a_commits_run_is_on_disk_before_the_commit_and_gone_if_it_fails(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A keyed write's run names its file before the file is committed (a reader that sees
    the commit sees the run, never an uncovered file to scan); a commit that fails leaves no
    run naming a file the table does not hold."""
    from warehouse.commits import Staged

    lake = Lake(home)
    lake.write("positions", position_rows([1, 2], "first"))
    commit = Staged.commit
    seen: list[bool] = []

    def checking(self: Staged, delta: DeltaTable, *actions: Any) -> list[str]:
        named = {Path(a.path).name for a in (actions[0] if actions else self.actions())}
        seen.append(named <= covered_files(lake, "positions"))
        return commit(self, delta, *actions)

    monkeypatch.setattr(Staged, "commit", checking)
    assert lake.write("positions", position_rows([3], "first")) == 1
    assert seen == [True]

    def failing(self: Staged, delta: DeltaTable, *actions: Any) -> list[str]:
        raise OSError("disk gone")

    monkeypatch.setattr(Staged, "commit", failing)
    with pytest.raises(OSError):
        lake.write("positions", position_rows([4], "first"))
    assert covered_files(lake, "positions") == live_files(lake, "positions")
    assert sorted(unsigned(stored(lake, "positions", ["position_key"])["position_key"])) == \
        [1, 2, 3]


INT64_EDGES = [-2**63, -2**63 + 1, -1, 0, 1, 2**63 - 2, 2**63 - 1]


@pytest.mark.parametrize("seed", range(6))
def test_the_compiled_searches_are_numpys_searchsorted(seed: int, tmp_path: Path) -> None:
    """Both compiled searches give ``numpy.searchsorted``'s places (side "left"): runs with
    repeated keys (a hashed key in several files), the int64 extremes, needles before, between
    and past every key, empty runs and needles; the directory's search on a run mapped from
    disk as lookups read one, needles in any order, for a directory of every size."""
    from warehouse._search import bucketed_positions, sorted_positions
    from warehouse.keyindex import Directory

    rng = np.random.default_rng(seed)
    for size in (0, 1, 2, 31, 32, 33, 1000, 5000):
        wide = rng.integers(-2**63, 2**63 - 1, size=size, dtype=np.int64, endpoint=True)
        narrow = rng.integers(-3, 4, size=size, dtype=np.int64)     # many repeats
        for pool in (wide, narrow):
            keys = np.sort(np.concatenate([pool, rng.choice(INT64_EDGES, size=size % 3)]))
            path = tmp_path / f"{size}.npy"
            np.save(path, keys)
            mapped = np.load(path, mmap_mode="r")
            needles = np.concatenate([
                rng.integers(-2**63, 2**63 - 1, size=50, dtype=np.int64, endpoint=True),
                rng.integers(-4, 5, size=20, dtype=np.int64), np.array(INT64_EDGES, np.int64),
                keys[rng.integers(0, len(keys), size=20)] if len(keys) else keys])
            expected = np.searchsorted(keys, needles)
            order = np.argsort(needles, kind="stable")
            assert sorted_positions(mapped, needles[order]).tolist() == \
                expected[order].tolist()
            assert Directory.of(mapped).positions(mapped, needles).tolist() == \
                expected.tolist()
            for shift in (63, 60, 40, 1 + 63 - max(1, len(keys)).bit_length()):
                starts = np.append(sorted_positions(keys, (
                    (np.arange(1 << (64 - shift), dtype=np.uint64) << np.uint64(shift))
                    ^ np.uint64(1 << 63)).view(np.int64)), len(keys))
                assert bucketed_positions(keys, needles, starts, shift).tolist() == \
                    expected.tolist()
    assert sorted_positions(np.zeros(0, np.int64), np.zeros(0, np.int64)).tolist() == []


def test_a_directory_that_does_not_fit_its_shift_is_refused() -> None:
    """The directory's length is checked before the compiled loop trusts it (it reads the
    bucket's two starts unchecked)."""
    from warehouse._search import bucketed_positions

    keys = np.arange(10, dtype=np.int64)
    for starts, shift in ((np.zeros(2, np.int64), 63), (np.zeros(4, np.int64), 63),
                          (np.zeros(3, np.int64), 0), (np.zeros(3, np.int64), 64)):
        with pytest.raises(ValueError, match="a directory of"):
            bucketed_positions(keys, keys, starts, shift)
