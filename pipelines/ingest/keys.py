"""Game keys: which game records are one game.

A game record in a file is a game. Its key (``game_id``) is a hash of its tags (sorted by name),
its main-line SANs as written (without ``+``/``#``) and its *occurrence*: how many records with the same tags and
moves came before it in its file. So two identical records of one file (an engine match
replaying a game, a crosstable export repeating a pairing) are two games, a re-ingest gives
the same keys, and the same game in two files (each once) is one game. The first occurrence's
key is the hash of tags and moves alone, the key every game had before occurrences counted.

These functions know nothing of files or the warehouse, so a compiled tokenizer can produce
their inputs.

>>> base = game_key('{"Black": "Allies", "White": "Morphy"}', ["e4", "e5"])
>>> base
'845dd31aaf25dc13dd289167f9a3b45e'
>>> counter = Occurrences()
>>> keys = counter.keys([base, "0" * 32, base])
>>> keys[0] == base, keys[1] == "0" * 32, keys[2] == occurrence_key(base, 1) != base
(True, True, True)
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence

import numpy as np

# Recent keys held in a dict before they are spilled to a sorted run on disk.
RUN_KEYS = 1 << 18
# Bloom filter: bits per key and probes (a false positive in about 15,000 keys), and the
# smallest capacity.
BLOOM_BITS_PER_KEY = 20
BLOOM_PROBES = 14
FILTER_KEYS = 1 << 20


def tags_json(tags: Mapping[str, str]) -> str:
    """A game's tags as a JSON object, sorted by name (so the order they came in is no part
    of the game's key)."""
    return json.dumps(tags, sort_keys=True, ensure_ascii=False)


def game_key(tags: str, sans: Sequence[str]) -> str:
    """A hash of a game's tags (:func:`tags_json`) and main-line SANs as written: the key of
    its first occurrence in a file."""
    digest = hashlib.blake2b(tags.encode(), digest_size=16)
    digest.update(b"\n")
    digest.update(" ".join(sans).encode())
    return digest.hexdigest()


def occurrence_key(base: str, occurrence: int) -> str:
    """The key of the ``occurrence``-th (0-based) record of a file whose tags and moves hash to
    ``base``: ``base`` itself for the first, a hash of both after it.

    >>> occurrence_key("845dd31aaf25dc13dd289167f9a3b45e", 1)
    'b953cd86f7e44e294d64ebd0a237ea43'
    """
    if occurrence == 0:
        return base
    return hashlib.blake2b(f"{base}\n#{occurrence}".encode(), digest_size=16).hexdigest()


class Occurrences:
    """Numbers the records of one file in file order: feed it every record's base key, once,
    in order (then :meth:`close` it).

    Memory is bounded by ``run_keys``, not by the file: the keys of the latest records are in
    a dict (at most ``run_keys`` of them, about 150 bytes each); older ones are spilled, as
    sorted runs of (key, count) between batches, to files in a temporary folder (20 bytes a key), and a Bloom
    filter of the spilled keys (about 20 bits a key, a false positive in 15,000) says which
    keys may be there: only those (repeats, and the rare false positive) are looked up in the
    runs. A 90-million-game file holds about 230 MB of filter and 40 MB of dict, where a dict
    of every key would take 9 GB.
    """

    def __init__(self, run_keys: int | None = None, folder: str | None = None) -> None:
        self.seen: dict[str, int] = {}   # records of each recent key (not spilled yet)
        self.repeats = 0     # records that repeat an earlier record of the file
        self.run_keys = run_keys or RUN_KEYS
        self.spilled = SpilledKeys(folder)

    def keys(self, bases: Sequence[str]) -> list[str]:
        """The keys of the next records, given their base keys (:func:`game_key`)."""
        older = self.spilled.counts(bases)
        seen = self.seen
        out = []
        for base, spilled in zip(bases, older, strict=True):
            recent = seen.get(base, 0)
            seen[base] = recent + 1
            occurrence = spilled + recent
            if occurrence:
                self.repeats += 1
                base = occurrence_key(base, occurrence)
            out.append(base)
        if len(seen) >= self.run_keys:   # between batches: the counts above stay right
            self.spill()
        return out

    def spill(self) -> None:
        self.spilled.add(self.seen)
        self.seen = {}

    def close(self) -> None:
        """Delete the spilled runs."""
        self.spilled.close()

    def __enter__(self) -> Occurrences:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SpilledKeys:
    """Base keys with their record counts, in sorted runs on disk behind a Bloom filter."""

    def __init__(self, folder: str | None = None) -> None:
        self.parent = folder
        self.folder: str | None = None
        self.runs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []   # hi, lo, count
        self.filters: list[BloomFilter] = []
        self.total = 0

    def counts(self, bases: Sequence[str]) -> list[int]:
        """How many records of each key the runs hold (0 for most, without a look-up)."""
        if not self.runs:
            return [0] * len(bases)
        hi, lo = split_keys(bases)
        maybe = np.zeros(len(bases), dtype=bool)
        for bloom in self.filters:
            maybe |= bloom.contains(hi, lo)
        out = [0] * len(bases)
        for i in np.flatnonzero(maybe).tolist():
            out[i] = self.count(int(hi[i]), int(lo[i]))
        return out

    def count(self, hi: int, lo: int) -> int:
        total = 0
        key_hi = np.uint64(hi)
        for run_hi, run_lo, run_count in self.runs:
            start = int(np.searchsorted(run_hi, key_hi, "left"))
            end = int(np.searchsorted(run_hi, key_hi, "right"))
            for j in range(start, end):
                if int(run_lo[j]) == lo:
                    total += int(run_count[j])
        return total

    def add(self, seen: dict[str, int]) -> None:
        """Spill a dict of keys and counts as one sorted run."""
        if not seen:
            return
        hi, lo = split_keys(list(seen))
        count = np.fromiter(seen.values(), dtype=np.uint32, count=len(seen))
        order = np.lexsort((lo, hi))
        if self.folder is None:
            self.folder = tempfile.mkdtemp(prefix="chesslab-keys-", dir=self.parent)
        run = []
        for name, column in (("hi", hi), ("lo", lo), ("count", count)):
            path = os.path.join(self.folder, f"{len(self.runs)}.{name}.npy")
            np.save(path, column[order])
            run.append(np.load(path, mmap_mode="r"))
        self.runs.append((run[0], run[1], run[2]))
        if not self.filters or self.filters[-1].full(len(seen)):
            self.filters.append(BloomFilter(max(FILTER_KEYS, 2 * self.total, len(seen))))
        self.filters[-1].add(hi, lo)
        self.total += len(seen)

    def close(self) -> None:
        self.runs, self.filters = [], []
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


class BloomFilter:
    """A Bloom filter of 128-bit keys (uniform hashes: their two halves make the probes)."""

    def __init__(self, capacity: int) -> None:
        bits = 1 << max(16, (capacity * BLOOM_BITS_PER_KEY - 1).bit_length())
        self.mask = np.uint64(bits - 1)
        self.words = np.zeros(bits // 64, dtype=np.uint64)
        self.capacity, self.keys = bits // BLOOM_BITS_PER_KEY, 0

    def full(self, more: int) -> bool:
        return self.keys + more > self.capacity

    def probes(self, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
        step = lo | np.uint64(1)
        return np.stack([(hi + np.uint64(k) * step) & self.mask for k in range(BLOOM_PROBES)])

    def add(self, hi: np.ndarray, lo: np.ndarray) -> None:
        bits = self.probes(hi, lo).ravel()
        np.bitwise_or.at(self.words, bits >> np.uint64(6), np.uint64(1) << (bits & np.uint64(63)))
        self.keys += len(hi)

    def contains(self, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
        bits = self.probes(hi, lo)
        words = self.words[bits >> np.uint64(6)]
        return np.all((words >> (bits & np.uint64(63))) & np.uint64(1), axis=0)


def split_keys(bases: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """32-hex-digit keys as their high and low 64 bits."""
    words = np.frombuffer(bytes.fromhex("".join(bases)), dtype=">u8").astype(np.uint64)
    return words[0::2], words[1::2]
