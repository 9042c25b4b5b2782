"""Deduping positions against the warehouse, with Zobrist collisions detected and recorded.

Positions met while ingesting are buffered and flushed in batches. A batch keeps the first FEN
of each key; any other FEN under a key already taken (earlier in the batch, or in the
``positions`` parts on disk, looked up with one DuckDB semi-join on the stored key column, so
memory stays bounded however big the warehouse is) is a collision: counted, and written as an ``ingest_errors`` row
of kind ``collision``. All of it is columnar (Arrow kernels hash the 64-bit keys only).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable

from pipelines.formats.fens import UNREAD, board_flags
from pipelines.ingest.lookup import stored_lookup
from warehouse import Lake, keyindex

log = logging.getLogger(__name__)


@dataclass
class PositionSink:
    """Buffers one source's (position_key, fen, game_index, line) rows; flushes the new ones."""

    lake: Lake
    source_id: str
    path: str
    batches: list[pa.Table] = field(default_factory=list)
    new_positions: int = 0
    collisions: int = 0
    reported: set[tuple[int, str]] = field(default_factory=set)

    def add(self, positions: pa.Table) -> None:
        if positions.num_rows:
            self.batches.append(positions)

    def flush(self) -> list[dict[str, Any]]:
        """Write the buffer's new positions; returns the collision error rows."""
        return self.report(self.write_new())

    def write_new(self, distinct: bool = False) -> list[dict[str, Any]]:
        """Write the buffer's new positions; returns the rows that clash with a FEN taken
        first (``position_key``, ``fen``, ``stored_fen``, ``game_index``, ``line``), not yet
        counted or reported (an ingest worker sends them to the process that does).
        ``distinct``: the buffer is one batch that holds each key once."""
        if not self.batches:
            return []
        batch = pa.concat_tables(self.batches)
        distinct = distinct and len(self.batches) == 1
        self.batches = []
        winners, clashes = (batch, []) if distinct else first_fen_per_key(batch)
        delta = self.lake.delta("positions")
        stored, complete = stored_fens(self.lake, winners["position_key"], winners["fen"], delta)
        if stored.num_rows and clashes:  # a key stored before: the stored FEN is the first
            clashes = against_stored(clashes, stored)
        if stored.num_rows:
            # one hash of the stored keys: where each winner's key is stored, and its FEN there
            index = pc.index_in(winners["position_key"],
                                value_set=stored["position_key"].combine_chunks())
            known = pc.is_valid(index)
            # the FENs compared are the stored keys' only (a batch's keys are mostly new)
            held = winners.filter(known)
            stored_fen = pc.take(stored["stored_fen"], index.filter(known))
            other = pc.not_equal(held["fen"], stored_fen)
            if pc.any(other).as_py():
                clashes += held.filter(other).append_column(
                    "stored_fen", stored_fen.filter(other)).to_pylist()
            winners = winners.filter(pc.invert(known))
        # the keys left are in no file of that version: the lake checks only newer files
        self.write(winners, delta if complete else None)
        return clashes

    def report(self, clashes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The collision error rows of clashing rows, each (key, FEN) once per source."""
        return [self.collision_row(row) for row in clashes
                if (row["position_key"], row["fen"]) not in self.reported]

    def write(self, new: pa.Table, absent_from: DeltaTable | None = None) -> None:
        """Write positions (new ones: a key another writer stored meanwhile is not stored
        again, nor counted). Their ``in_check`` column, when they come with one and it has no
        nulls (the compiled reader's, read from the board it replayed), is stored as it is;
        else it is read from the FENs."""
        now = datetime.now(UTC)
        self.new_positions += self.lake.write("positions", unique=True, rows=pa.table({
            "position_key": new["position_key"], "fen": new["fen"],
            "source_id": pa.repeat(pa.scalar(self.source_id), new.num_rows),
            "first_seen": pa.repeat(pa.scalar(now, pa.timestamp("us", tz="UTC")), new.num_rows),
            "in_check": checks_of(new),
        }), absent_from=absent_from)

    def collision_row(self, row: dict[str, Any]) -> dict[str, Any]:
        self.reported.add((row["position_key"], row["fen"]))
        self.collisions += 1
        message = (f"position key {row['position_key']:#018x}: {row['fen']!r} collides with "
                   f"{row['stored_fen']!r}")
        log.warning("%s: %s", self.path, message)
        return {"source_id": self.source_id, "path": self.path, "game_index": row["game_index"],
                "line": row["line"], "kind": "collision", "message": message}


def checks_of(positions: pa.Table) -> pa.Array | pa.ChunkedArray:
    """The ``in_check`` column of positions: theirs when complete, else read from each FEN
    (null where the core cannot read it: a Chess960 castling field)."""
    if "in_check" in positions.column_names and positions["in_check"].null_count == 0:
        return positions["in_check"]
    in_check, _ = board_flags(positions["fen"])
    return pa.array(in_check == 1, mask=in_check == UNREAD)


def first_fen_per_key(batch: pa.Table) -> tuple[pa.Table, list[dict[str, Any]]]:
    """(the first row of each key in arrival order, rows whose FEN differs from that one)."""
    keys = batch["position_key"].to_numpy()
    ordered = np.sort(keys)
    if not (ordered[1:] == ordered[:-1]).any():
        return batch, []    # no key twice (the common case: a sort costs less than an argsort)
    order = np.argsort(keys, kind="stable")      # a key's rows in arrival order
    ordered = keys[order]
    repeat = np.zeros(len(keys), bool)
    repeat[1:] = ordered[1:] == ordered[:-1]
    run_start = np.maximum.accumulate(np.where(repeat, 0, np.arange(len(keys))))
    later, first = order[repeat], order[run_start[repeat]]   # a repeat, its key's first row
    keep = np.ones(len(keys), bool)
    keep[later] = False
    winners = batch.filter(pa.array(keep))
    by_row = np.argsort(later)
    later, first = later[by_row], first[by_row]
    fens = batch["fen"]
    expected = fens.take(pa.array(first))
    other = pc.not_equal(fens.take(pa.array(later)), expected).to_numpy(zero_copy_only=False)
    clashes = batch.take(pa.array(later[other])).append_column(
        "stored_fen", expected.filter(pa.array(other)))
    return winners, clashes.to_pylist()


def against_stored(clashes: list[dict[str, Any]], stored: pa.Table) -> list[dict[str, Any]]:
    """Clashes re-judged against the stored FEN where their key was stored before."""
    keys = pa.array([row["position_key"] for row in clashes], pa.uint64())
    hits = stored.filter(pc.is_in(stored["position_key"], value_set=keys)).to_pylist()
    first = {hit["position_key"]: hit["stored_fen"] for hit in hits}
    for row in clashes:
        row["stored_fen"] = first.get(row["position_key"], row["stored_fen"])
    return [row for row in clashes if row["fen"] != row["stored_fen"]]


def stored_fens(lake: Lake, keys: pa.ChunkedArray, fens: pa.ChunkedArray,
                delta: DeltaTable | None) -> tuple[pa.Table, bool]:
    """(position_key, stored_fen) for each of ``keys`` already in the positions parts of
    version ``delta`` (the current one), and whether every other key was looked up in every
    file of that version (not so when some key's FEN differs from the index's fingerprint:
    the files holding those are found in the current version).

    The key index settles most keys without reading a FEN: a stored key whose row's FEN
    fingerprint equals the fingerprint of its FEN in ``fens`` stored that FEN (a different
    FEN under the same Zobrist key, itself rare, also shares the 16 bits the index keeps of
    the fingerprint with a 2**-16 chance: keyindex.CHECK_PRINT). The
    other stored keys, and keys the index cannot see (parts it does not cover yet), are
    looked up in the parts that can hold them."""
    if delta is None:
        return pa.table({"position_key": pa.array([], pa.uint64()),
                         "stored_fen": pa.array([], pa.string())}), True
    found, prints, uncovered = lake.indexed_checks("positions", keys, delta)
    same = found.copy()
    if found.any():     # fingerprints of the FENs of the keys found only (most are new)
        same[found] = prints[found] == keyindex.check_prints(fens.filter(pa.array(found)))
    unsure = found & ~same
    parts = set(uncovered)
    complete = not unsure.any()
    if not complete:
        parts |= set(lake.key_files("positions", keys.filter(pa.array(unsure))))
    settled = pa.table({"position_key": keys.filter(pa.array(same)),
                        "stored_fen": fens.filter(pa.array(same))})
    ask = keys.filter(pa.array(~same)) if same.any() else keys
    if not parts or len(ask) == 0:
        return settled, complete
    stored_bits = pc.cast(ask, pa.int64(), safe=False)   # the stored column's bits
    found_rows = stored_lookup("ingest_stored_positions",
                               {"batch_keys": pa.table({"position_key": stored_bits})},
                               {"known_positions": (sorted(parts), "position_key, fen")})
    return pa.concat_tables([settled, pa.table({
        "position_key": pc.cast(found_rows["position_key"], pa.uint64(), safe=False),
        "stored_fen": found_rows["stored_fen"].cast(pa.string())})]), complete
