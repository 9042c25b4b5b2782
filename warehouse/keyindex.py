"""A key index for keyed tables whose row key is one 64-bit integer (positions, labels).

A keyed write must know which of its keys the table already holds. Reading the key column of
every stored file for each batch makes an import quadratic in the table's size: Zobrist keys
are uniformly random, so every file's min/max statistics span the whole key range and prune
nothing. The index answers instead from sorted runs of the stored keys, each searched through
its directory (the place of every bucket of the key range, a few dozen keys a bucket:
:class:`Directory`, compiled in warehouse/_search.pyx), so a batch costs ``O(batch * runs)``
searches of a bucket; the runs are merged like a counter in base 4 (four runs of one size tier
become one run of the next), so there are ``O(log(stored))`` of them.

A run lives in ``<table>/_chesslab_keys/<partition>/`` as ``<id>.keys.npy`` (the keys,
sorted, int64 as stored), ``<id>.files.npy`` (the number, in the run's file list, of the data
file holding each key: uint8 while the list has at most 256 files, uint16 up to 65,536, else
int32), ``<id>.checks.npy`` for a table with a checked column (16 bits of each row's
fingerprint of it) and ``<id>.json`` (that file list), written last: a run without its json
is not one. A key of positions costs 11 bytes on disk while its run covers at most 256 files
(8 + 1 + 2; it was 20 with 64-bit fingerprints and int32 file numbers, 14 with 32-bit ones
and uint16: the index is the largest thing in a home after a PGN ingest but the FENs, see
docs/experiments/scale.md "Bytes on disk"). A run is a cache of immutable data files: it is
used only while every file it covers is in the table's current version (compaction, which
rewrites files, makes runs stale; the next refresh rebuilds them from the new files), and a
current file no run covers is scanned directly by the caller. So the index is never wrong,
only incomplete, and a writer killed anywhere leaves at worst an unused file.

A key column of strings (games' and moves' ``game_id``) is indexed by a 64-bit hash of each
string (:func:`index_keys`), each value once per file, with every file holding it (a game's
moves may span files): a miss is certain, a hit names the files to read to confirm it. The
run's json names the hash (:data:`FINGERPRINT`, compiled); a run built under another is not
used, and the next refresh rebuilds it. Runs are added, merged and removed only under the
table's write lock; readers without it tolerate a run vanishing under them.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from warehouse._fingerprint import string_prints
from warehouse._search import bucketed_positions, sorted_positions

INDEX_DIR = "_chesslab_keys"
# FAN_OUT runs of one tier (a power of FAN_OUT, a power of two) are merged into one (each key
# is rewritten log_FAN_OUT(N) times, a lookup searches fewer than FAN_OUT runs a tier); never
# beyond MAX_MERGED_KEYS keys (8 bytes each, 2 or 4 for the file, 4 for a fingerprint), so
# one merge's memory stays bounded.
FAN_OUT = 4
MAX_MERGED_KEYS = 1 << 27
# Tables whose runs keep a fingerprint of one more column per key (see KeyIndex).
CHECKED = {"positions": "fen"}
# The fingerprints of strings (string keys, checked columns): compiled, fixed by chesslab's
# code (runs made under another name, such as DuckDB's hash before, are rebuilt).
FINGERPRINT = "chesslab-print-1"
# A checked column's fingerprints as runs keep them: the low 16 bits of FINGERPRINT's. A
# stored key whose row's 16 bits equal those of the batch's FEN is taken as that FEN: wrong
# only for a Zobrist collision (two FENs, one 64-bit key: about N^2 / 2^65 in a home of N
# positions, 0.03 at 10^9) whose FENs also agree in 16 bits (2^-16 of those: about 4e-7 at
# 10^9 positions). Runs made with 64 or 32 bits ("chesslab-print-1", "chesslab-print-1/32")
# are rebuilt.
CHECK_PRINT = "chesslab-print-1/16"
CHECK_DTYPE = np.uint16
# The runs this process has read, by their json's path (a run is immutable; see KeyIndex.runs).
_LOADED: OrderedDict[str, Run] = OrderedDict()
_LOADED_LOCK = threading.Lock()     # the lanes of a step list runs from several threads
# np.load parses a .npy header with ast.literal_eval, and CPython 3.11's AST constructor is not
# safe across threads (gh-106905: "SystemError: AST constructor recursion depth mismatch",
# seen here with lanes listing runs at once): one header at a time.
_HEADER_LOCK = threading.Lock()
# A run is searched through its directory (warehouse/_search.pyx): the first place of each of
# 2^bits buckets of the key range, about KEYS_PER_BUCKET keys a bucket (8 bytes of memory per
# KEYS_PER_BUCKET keys), made once per run and process by galloping over the run (about 0.2 s
# at 100M keys). A lookup of 1M keys in a run of 100M took 0.19 s with numpy's binary search,
# 0.05 s through the directory (docs/experiments/scale.md, "The key index's search").
KEYS_PER_BUCKET = 32
# A run's arrays are memory-mapped, and each map holds a file descriptor: the runs kept are
# the most recently listed RUN_CACHE_SIZE (a process that walks many homes or tables, as a
# test session does, would otherwise run out of descriptors: select() refuses fds >= 1024).
RUN_CACHE_SIZE = 64


@dataclass(frozen=True)
class Run:
    """One sorted run: its keys, each key's file number, the files' names, and (for a
    table with a checked column) each key's row's fingerprint of that column."""

    name: str
    keys: np.ndarray
    file_ids: np.ndarray      # uint16 or int32: see file_numbers
    files: tuple[str, ...]
    checks: np.ndarray | None = None
    hashed: bool = False      # keys are index_keys' hashes of strings

    @cached_property
    def directory(self) -> Directory:
        """Where each bucket of the key range starts in :attr:`keys` (made at first use)."""
        return Directory.of(self.keys)


@dataclass(frozen=True)
class Directory:
    """The first place, in a sorted run, of each of ``2^(64 - shift)`` buckets of the key
    range (a key's bucket: its top bits, the sign bit flipped), then the run's length: a
    needle is searched for among its bucket's keys only (warehouse/_search.pyx)."""

    starts: np.ndarray      # int64
    shift: int

    @classmethod
    def of(cls, keys: np.ndarray) -> Directory:
        """The directory of the sorted ``keys`` (int64), about KEYS_PER_BUCKET keys a bucket.

        >>> directory = Directory.of(np.array([-5, -1, 0, 7, 2**62], dtype=np.int64))
        >>> directory.starts.tolist(), directory.shift
        ([0, 2, 5], 63)
        """
        bits = max(1, (len(keys) // KEYS_PER_BUCKET).bit_length() - 1)
        shift = 64 - bits
        bounds = (np.arange(1 << bits, dtype=np.uint64) << np.uint64(shift)) ^ np.uint64(1 << 63)
        starts = sorted_positions(int64s(keys), bounds.view(np.int64))
        return cls(np.append(starts, len(keys)), shift)

    def positions(self, keys: np.ndarray, needles: np.ndarray) -> np.ndarray:
        """``np.searchsorted(keys, needles)`` for the run ``keys`` this directory is of."""
        return bucketed_positions(int64s(keys), int64s(needles), self.starts, self.shift)


def int64s(values: np.ndarray) -> np.ndarray:
    """``values`` as a contiguous int64 array (no copy when they are one: a run's mapped keys)."""
    return np.ascontiguousarray(values, dtype=np.int64)


@dataclass(frozen=True)
class Found:
    """A lookup: which keys the covered files hold (a mask over the keys asked), the names
    of the covered files holding them, and the candidate files no run covers."""

    present: np.ndarray
    holders: set[str]
    uncovered: list[str]
    checks: np.ndarray | None = None    # the stored rows' check_prints where present


class KeyIndex:
    """The runs of one partition of one table (``partition``: its values, {} when none);
    for the tables of :data:`CHECKED`, each key also keeps its row's fingerprint of the
    checked column (positions: the FEN, so ingest tells a known position from a Zobrist
    collision without reading stored FENs)."""

    def __init__(self, table_dir: Path, partition: Mapping[str, Any]) -> None:
        tag = json.dumps({k: str(v) for k, v in sorted(partition.items())}) if partition else ""
        name = hashlib.sha1(tag.encode()).hexdigest()[:16] if tag else "all"
        self.folder = table_dir / INDEX_DIR / name
        self.check = CHECKED.get(table_dir.name)

    @classmethod
    def at(cls, folder: Path) -> KeyIndex:
        """The runs of the partition whose runs are in ``folder``."""
        index = cls.__new__(cls)
        index.folder, index.check = folder, CHECKED.get(folder.parent.parent.name)
        return index

    def runs(self) -> list[Run]:
        """The complete runs, largest first (a run removed while being read is left out).
        A run never changes once its json is written, so each is read once per process
        (:data:`_LOADED`; an ingest lists the runs several times per batch)."""
        manifests = ({str(manifest): manifest for manifest in self.folder.glob("*.json")}
                     if self.folder.is_dir() else {})
        runs = []
        for key, manifest in manifests.items():
            with _LOADED_LOCK:
                run = _LOADED.get(key)
                if run is not None:
                    _LOADED.move_to_end(key)
            if run is None and (run := self.load(manifest)) is not None:
                with _LOADED_LOCK:
                    run = _LOADED.setdefault(key, run)
                    while len(_LOADED) > RUN_CACHE_SIZE:
                        _LOADED.popitem(last=False)
            if run is not None:
                runs.append(run)
        prefix = f"{self.folder}{os.sep}"
        with _LOADED_LOCK:
            for key in [k for k in _LOADED if k.startswith(prefix) and k not in manifests]:
                del _LOADED[key]    # removed by another process
        return sorted(runs, key=lambda run: (-len(run.keys), run.name))

    def load(self, manifest: Path) -> Run | None:
        """The run of a json, its arrays mapped (None: hashed by another fingerprint, or
        removed while being read)."""
        try:
            about = json.loads(manifest.read_text())
            if about.get("hash") not in (None, FINGERPRINT):
                return None     # keys hashed by another fingerprint: refresh rebuilds it
            stem = manifest.with_suffix("")
            with _HEADER_LOCK:
                keys = np.load(f"{stem}.keys.npy", mmap_mode="r")
                ids = np.load(f"{stem}.files.npy", mmap_mode="r")
                checks = np.load(f"{stem}.checks.npy", mmap_mode="r") \
                    if self.check and about.get("fingerprint") == CHECK_PRINT else None
        except (FileNotFoundError, ValueError):
            return None
        return Run(manifest.stem, keys, ids, tuple(about["files"]), checks,
                   about.get("hash") is not None)

    def lookup(self, keys: np.ndarray, live: Iterable[str], candidates: Iterable[str],
               holders: bool = True) -> Found:
        """Look ``keys`` (int64) up in the runs whose files are all ``live`` (the names of the
        partition's current files); the ``candidates`` (the files that can hold the keys) no
        such run covers are given back as uncovered. ``holders``: name the files that hold
        the keys found (else that set is empty)."""
        live = set(live)
        present = np.zeros(len(keys), dtype=bool)
        checks = np.zeros(len(keys), dtype=CHECK_DTYPE) if self.check else None
        held: set[str] = set()
        covered: set[str] = set()
        order: np.ndarray | None = None
        for run in self.runs():
            if not set(run.files) <= live or covered & set(run.files) or \
                    (self.check and run.checks is None):
                continue
            covered |= set(run.files)
            if order is None:   # sorted needles walk each run's pages in order (keys are
                order = np.argsort(keys)    # unique or their order among equals is moot)
            hit, at = search(run.keys, keys, order, run.directory)
            present |= hit
            if holders and hit.any():
                held.update(run.files[i] for i in holding(run, keys[hit], at))
            if checks is not None and run.checks is not None:
                checks[hit] = np.asarray(run.checks[at])
        return Found(present, held, sorted(set(candidates) - covered), checks)

    def refresh(self, files: Mapping[str, str], column: str) -> None:
        """Make the runs cover exactly ``files`` (name -> URI, the partition's current files):
        drop the runs of files gone, index the files no run covers (reading ``column``), and
        merge runs of similar size. Call it under the table's write lock."""
        runs, current = [], {run.name for run in self.runs()}
        for manifest in self.folder.glob("*.json") if self.folder.is_dir() else []:
            if manifest.stem not in current:
                self.remove(manifest.stem)     # hashed under another fingerprint
        for run in self.runs():
            if set(run.files) <= files.keys() and (run.checks is not None or not self.check):
                runs.append(run)
            else:
                self.remove(run.name)
        covered = {name for run in runs for name in run.files}
        fresh = sorted(set(files) - covered)
        if fresh:
            runs.append(self.save(build_run([files[name] for name in fresh], fresh, column,
                                            self.check)))
        self.merge(runs)

    def add(self, rows: pa.Table, name: str, column: str, run: Run | None = None) -> None:
        """Index ``rows`` (storage types), just committed as the one file ``name``, from
        memory, and merge (under the table's write lock). ``run``: their
        :meth:`sorted_run`, when the caller made it before taking the lock."""
        self.adopt(self.stage(rows, name, column, run))

    def stage(self, rows: pa.Table, name: str, column: str, run: Run | None = None) -> Run:
        """Save the run of ``rows``, about to be committed as the one file ``name`` (under
        the table's write lock, before the commit: a lookup uses a run only once all its
        files are live, so one that sees the commit sees its run too). Then :meth:`adopt`
        it, or :meth:`remove` it when the commit failed."""
        run = run if run is not None else self.sorted_run(rows, column)
        return self.save(Run("", run.keys, run.file_ids, (name,), run.checks, run.hashed))

    def adopt(self, saved: Run) -> None:
        """Merge a run :meth:`stage` saved, its file now committed, with the others."""
        self.merge([saved, *[r for r in self.runs() if r.name != saved.name]])

    def sorted_run(self, rows: pa.Table, column: str) -> Run:
        """The run of ``rows``' keys (and fingerprints), sorted, naming no file yet: most of
        an index update's work, which needs no lock."""
        keys = index_keys(rows.column(column), distinct=True)
        if is_hashed(rows.column(column)):  # each value once a file (two strings may share
            keys = np.unique(keys)          # one), sorted
            order = np.arange(len(keys))
        else:   # a committed batch's keys are unique: no order among equals to keep
            order = np.argsort(keys)
        checks = check_prints(rows.column(self.check))[order] if self.check else None
        return Run("", keys[order], file_numbers(np.zeros(len(keys), np.int32), 1), (), checks,
                   is_hashed(rows.column(column)))

    def merge(self, runs: list[Run]) -> None:
        """Merge runs by tiers: once FAN_OUT runs are in one tier (sizes within a factor
        FAN_OUT), they become one run of the next tier; so each key is rewritten about
        log_FAN_OUT(stored / batch) times and a lookup searches fewer than FAN_OUT runs a tier."""
        while True:
            tiers: dict[int, list[Run]] = {}
            for run in runs:
                tiers.setdefault(tier(len(run.keys)), []).append(run)
            full = sorted(t for t, group in tiers.items() if len(group) >= FAN_OUT and
                          sum(len(run.keys) for run in group) <= MAX_MERGED_KEYS)
            if not full:
                return
            group = sorted(tiers[full[0]], key=lambda run: -len(run.keys))
            one = group[0]
            for run in group[1:]:
                one = merged(one, run)
            gone = {run.name for run in group}
            runs = [run for run in runs if run.name not in gone] + [self.save(one)]
            for run in group:
                self.remove(run.name)

    def save(self, run: Run) -> Run:
        """Write ``run`` (its json last, atomically: the run exists from then on)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        name = uuid.uuid4().hex
        stem = self.folder / name
        np.save(f"{stem}.keys.npy", np.ascontiguousarray(run.keys))
        np.save(f"{stem}.files.npy", np.ascontiguousarray(run.file_ids))
        if run.checks is not None:
            np.save(f"{stem}.checks.npy", np.ascontiguousarray(run.checks))
        partial = self.folder / f".{name}.json.tmp"
        partial.write_text(json.dumps({"files": list(run.files), "fingerprint":
                                       CHECK_PRINT if run.checks is not None else None,
                                       "hash": FINGERPRINT if run.hashed else None}))
        os.replace(partial, f"{stem}.json")
        return Run(name, run.keys, run.file_ids, run.files, run.checks, run.hashed)

    def remove(self, name: str) -> None:
        """Remove a run, its json first (it stops being one before its arrays go)."""
        with _LOADED_LOCK:
            _LOADED.pop(str(self.folder / f"{name}.json"), None)
        for suffix in (".json", ".keys.npy", ".files.npy", ".checks.npy"):
            (self.folder / f"{name}{suffix}").unlink(missing_ok=True)


def prune(table_dir: Path, live: Iterable[str]) -> int:
    """Remove the runs of every partition of the table in ``table_dir`` that name a file not
    ``live`` (the names of the table's current files): after a compaction, the runs of the
    files it replaced, which no lookup can use again (the next write indexes the new files).
    Call it under the table's write lock. Returns the runs removed."""
    live = set(live)
    removed = 0
    for manifest in sorted((table_dir / INDEX_DIR).glob("*/*.json")):
        try:
            files = json.loads(manifest.read_text())["files"]
        except (OSError, ValueError, KeyError):
            continue
        if not set(files) <= live:
            KeyIndex.at(manifest.parent).remove(manifest.stem)
            removed += 1
    return removed


def tier(size: int) -> int:
    """A run's tier: its size's power of FAN_OUT.

    >>> [tier(n) for n in (1, 3, 4, 15, 16, 1000)]
    [0, 0, 1, 1, 2, 4]
    """
    return (max(size, 1).bit_length() - 1) // (FAN_OUT.bit_length() - 1)


def search(sorted_keys: np.ndarray, keys: np.ndarray, order: np.ndarray | None = None,
           directory: Directory | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(a mask of ``keys`` found in ``sorted_keys``, where in it each key found is, in the
    order of ``keys``); ``order``: the argsort of ``keys``, when the caller has it;
    ``directory``: that of ``sorted_keys``, when the caller keeps it (else one is made).

    >>> hit, at = search(np.array([2, 5, 9]), np.array([9, 3, 2, 10]))
    >>> hit.tolist(), at.tolist()
    ([True, False, True, False], [2, 0])
    """
    if len(sorted_keys) == 0 or len(keys) == 0:
        return np.zeros(len(keys), dtype=bool), np.zeros(0, dtype=np.int64)
    if order is None:
        order = np.argsort(keys)
    directory = directory if directory is not None else Directory.of(sorted_keys)
    at = np.minimum(directory.positions(sorted_keys, keys[order]), len(sorted_keys) - 1)
    found = np.asarray(sorted_keys[at]) == keys[order]
    hit = np.zeros(len(keys), dtype=bool)
    hit[order[found]] = True
    where = np.zeros(len(keys), dtype=np.int64)
    where[order[found]] = at[found]
    return hit, where[hit]


def fingerprints(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A 64-bit fingerprint (uint64) of each string (compiled, :mod:`warehouse._fingerprint`;
    fixed by that code, which :data:`FINGERPRINT` names: runs made under another, such as
    DuckDB's ``hash`` before, are rebuilt; 0 for a null).

    >>> a, b, c = fingerprints(pa.chunked_array([["8/8 w", "8/8 b"], ["8/8 w"]]))
    >>> bool(a == c != b)
    True
    """
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    parts = [np.zeros(0, np.uint64)]
    for chunk in chunks:
        wide = chunk.cast(pa.large_string())     # int64 offsets (the text is not copied)
        _, offsets, data = wide.buffers()
        ends = np.frombuffer(offsets, np.int64)[wide.offset:wide.offset + len(wide) + 1] \
            if len(wide) else np.zeros(1, np.int64)
        text = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
        prints = string_prints(np.ascontiguousarray(ends), text)
        if wide.null_count:
            prints[~np.asarray(wide.is_valid())] = 0
        parts.append(prints)
    return np.concatenate(parts)


def check_prints(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The fingerprints a run keeps of a checked column's values (uint16: the low 16 bits
    of :func:`fingerprints`; see CHECK_PRINT).

    >>> bool(check_prints(pa.array(["8/8 w"]))[0] == fingerprints(pa.array(["8/8 w"]))[0] & 0xFFFF)
    True
    """
    return fingerprints(values).astype(CHECK_DTYPE)


def file_numbers(numbers: np.ndarray, files: int) -> np.ndarray:
    """File numbers (into a list of ``files`` files) as a run stores them: uint8 or uint16
    when they fit, else int32.

    >>> [file_numbers(np.array([0, n - 1]), n).dtype.name for n in (4, 300, 70001)]
    ['uint8', 'uint16', 'int32']
    """
    kind = np.uint8 if files <= 1 << 8 else np.uint16 if files <= 1 << 16 else np.int32
    return numbers.astype(kind)


def build_run(uris: list[str], names: list[str], column: str,
              check: str | None = None) -> Run:
    """A run of the keys in the Parquet files ``uris`` (named ``names``), read from
    ``column`` (and the fingerprints of ``check``) only."""
    parts, ids, prints, hashed = [], [], [], False
    for number, uri in enumerate(uris):
        read = pq.read_table(uri.removeprefix("file://"),
                             columns=[column, *([check] if check else [])])
        keys = index_keys(read.column(column))
        if is_hashed(read.column(column)):
            keys, hashed = np.unique(keys), True      # each value once a file
        parts.append(keys)
        ids.append(np.full(len(keys), number, dtype=np.int32))
        if check:
            prints.append(check_prints(read.column(check)))
    keys = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    file_ids = np.concatenate(ids) if ids else np.zeros(0, np.int32)
    order = np.argsort(keys, kind="stable")
    checks = (np.concatenate(prints) if prints else np.zeros(0, CHECK_DTYPE))[order] \
        if check else None
    return Run("", keys[order], file_numbers(file_ids[order], len(names)), tuple(names), checks,
               hashed)


def is_hashed(values: pa.Array | pa.ChunkedArray) -> bool:
    """Whether a key column is indexed by its values' hashes (strings) or as integers."""
    kind = values.type   # string_view: as deltalake's own rewrites (delete, merge) write them
    return pa.types.is_string(kind) or pa.types.is_large_string(kind) or \
        pa.types.is_string_view(kind)


def index_keys(values: pa.Array | pa.ChunkedArray, distinct: bool = False) -> np.ndarray:
    """A key column as the index holds it (int64): integers as stored, strings as
    :func:`fingerprints` (several strings may share one: a hit is confirmed in the files).
    ``distinct``: each string's hash once (not one per row; a moves batch repeats each game's
    id once a ply), for callers that only ask which values are held."""
    if is_hashed(values):
        return fingerprints(pc.unique(values) if distinct else values).view(np.int64)
    return pc.cast(values, pa.int64(), safe=False).to_numpy()


def holding(run: Run, found: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The numbers (in ``run.files``) of the files holding the keys ``found`` (each in the run,
    first at ``at``): every file of a key a run holds several times (a hashed key in several
    files), not only the first.

    >>> run = Run("", np.array([1, 4, 4, 4, 7]), np.array([0, 2, 1, 3, 1]), ("a", "b", "c", "d"))
    >>> holding(run, np.array([4, 7]), np.array([1, 4])).tolist()
    [1, 2, 3]
    """
    end = np.searchsorted(run.keys, found, side="right")
    counts = end - at
    starts = np.repeat(at - np.cumsum(counts) + counts, counts)
    spots = starts + np.arange(int(counts.sum()))
    return np.unique(np.asarray(run.file_ids[spots]))


def merged(older: Run, newer: Run) -> Run:
    """One run holding both runs' keys (their file lists concatenated), merged in linear
    time: each of the newer run's keys goes where galloping places it, the older
    run's keys fill the rest in order.

    >>> run = merged(Run("", np.array([1, 5]), np.array([0, 0]), ("a",)),
    ...              Run("", np.array([0, 3, 9]), np.array([0, 0, 0]), ("b",)))
    >>> run.keys.tolist(), run.file_ids.tolist(), run.files
    ([0, 1, 3, 5, 9], [1, 0, 1, 0, 1], ('a', 'b'))
    """
    size = len(older.keys) + len(newer.keys)
    into = sorted_positions(int64s(older.keys), int64s(newer.keys)) + np.arange(len(newer.keys))
    rest = np.ones(size, dtype=bool)
    rest[into] = False
    keys = np.empty(size, dtype=np.int64)
    keys[into], keys[rest] = newer.keys, older.keys
    ids = np.empty(size, dtype=file_numbers(np.zeros(0), len(older.files + newer.files)).dtype)
    ids[into] = np.asarray(newer.file_ids, dtype=ids.dtype) + len(older.files)
    ids[rest] = older.file_ids
    checks = None
    if older.checks is not None and newer.checks is not None:
        checks = np.empty(size, dtype=CHECK_DTYPE)
        checks[into], checks[rest] = newer.checks, older.checks
    return Run("", keys, ids, older.files + newer.files, checks, older.hashed)


__all__ = ["KeyIndex", "Found", "Run", "INDEX_DIR", "CHECKED", "CHECK_DTYPE", "fingerprints",
           "check_prints", "search", "index_keys", "is_hashed", "prune"]
