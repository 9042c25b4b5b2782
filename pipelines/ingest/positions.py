"""Deduping positions against the warehouse, with Zobrist collisions detected and recorded.

Positions met while ingesting are buffered and flushed in batches: each batch is classified
by one DuckDB query against the ``positions`` parts on disk (memory stays bounded however big
the warehouse is), the new ones are written as a part, and every (key, fen) pair whose key is
already held by another FEN is an ``ingest_errors`` row of kind ``collision``.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from warehouse import Lake
from warehouse.catalog import named_query, query
from warehouse.tables import table

log = logging.getLogger(__name__)


@dataclass
class PositionSink:
    """Buffers one source's positions and flushes the new ones to the lake."""

    lake: Lake
    source_id: str
    path: str
    batches: list[pa.Table] = field(default_factory=list)
    new_positions: int = 0
    collisions: int = 0

    def add(self, positions: pa.Table) -> None:
        if positions.num_rows:
            self.batches.append(positions)

    def flush(self) -> list[dict[str, Any]]:
        """Write the new positions of the buffer; returns collision error rows."""
        if not self.batches:
            return []
        batch = pa.concat_tables(self.batches)
        self.batches = []
        batch = batch.append_column("seq", pa.array(range(batch.num_rows), pa.int64()))
        classified = classify(self.lake, batch)
        new = classified.filter(pc.equal(classified["status"], "new"))
        now = datetime.now(timezone.utc)
        self.lake.write("positions", pa.table({
            "position_key": new["position_key"], "fen": new["fen"],
            "source_id": pa.nulls(new.num_rows, pa.string()).fill_null(self.source_id),
            "first_seen": pa.nulls(new.num_rows, pa.timestamp("us", tz="UTC")).fill_null(now),
        }))
        self.new_positions += new.num_rows
        clashes = classified.filter(pc.equal(classified["status"], "collision")).to_pylist()
        self.collisions += len(clashes)
        return [self.collision_row(row) for row in clashes]

    def collision_row(self, row: dict[str, Any]) -> dict[str, Any]:
        message = (f"position key {row['position_key']:#018x}: {row['fen']!r} collides with "
                   f"{row['stored_fen']!r}")
        log.warning("%s: %s", self.path, message)
        return {"source_id": self.source_id, "path": self.path, "game_index": row["game_index"],
                "line": row["line"], "kind": "collision", "message": message}


def classify(lake: Lake, batch: pa.Table) -> pa.Table:
    """Run ``ingest_classify_positions.sql`` on a batch against the stored positions."""
    con = duckdb.connect(":memory:")
    try:
        con.register("batch_positions", batch)
        parts = [str(p) for p in lake.parts("positions")]
        if parts:
            con.read_parquet(parts).select("position_key, fen").create_view("known_positions")
        else:
            con.register("known_positions",
                         table("positions").schema.empty_table().select(["position_key", "fen"]))
        return query(con, named_query("ingest_classify_positions"))
    finally:
        con.close()
