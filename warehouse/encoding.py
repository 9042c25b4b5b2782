"""How each table's Parquet files are encoded: codec, level, and the columns kept without a
dictionary, when a write stores them and when ``compact`` rewrites them.

The choices are measured (``benchmarks/lake_bytes.py``; docs/experiments/scale.md "Bytes on
disk"): after a PGN ingest nearly all of a home is positions' FENs and the two 64-bit keys
(positions', moves'), which no codec shrinks. A write (ingest's hot path) uses zstd at level
1 or 3, which costs about as much CPU as the Snappy/LZ4 it replaces (Parquet's encoding, not
the codec, is most of a write: docs/experiments/ingest.md) and makes FENs a third smaller;
``compact``, which rewrites the small files anyway, spends more (zstd 6: FENs in game order
another 15% smaller; level 9 costs 1.5x the CPU for 2% more). A dictionary is left out
where the values are nearly all distinct (keys, FENs, game ids, tag JSON): Parquet would
build one per page, then drop it.

Tables not named here get deltalake's defaults (Snappy when written, zstd when compacted).
A file sorted by its key (labels' sorted runs, positions' files holding position_facts)
stores the key delta-encoded without a dictionary: sorted random 64-bit keys take the bits
of their gaps, 5-6 bytes a key instead of 9-10 (issue 51: the largest column of labels).
"""
from __future__ import annotations

from typing import Any

from deltalake import ColumnProperties, WriterProperties

_PLAIN = ColumnProperties(dictionary_enabled=False)
_SORTED_KEY = ColumnProperties(dictionary_enabled=False, encoding="DELTA_BINARY_PACKED")
# The columns written without a dictionary, per table.
PLAIN_COLUMNS = {
    "positions": ("position_key", "fen"),
    "moves": ("position_key",),
    "games": ("game_id", "tags"),
}
# zstd levels: when a write stores the rows, when compact rewrites them.
WRITE_LEVEL = {"positions": 1, "moves": 1, "games": 3}
COMPACT_LEVEL = {"positions": 6, "moves": 6, "games": 9}


def properties(name: str, level: int) -> WriterProperties:
    """Table ``name``'s Parquet settings at zstd ``level``."""
    return WriterProperties(compression="ZSTD", compression_level=level,
                            column_properties={c: _PLAIN for c in PLAIN_COLUMNS[name]})


WRITER_PROPERTIES = {name: properties(name, level) for name, level in WRITE_LEVEL.items()}
COMPACT_PROPERTIES = {name: properties(name, level) for name, level in COMPACT_LEVEL.items()}

# Derived tables (warehouse/refresh.py, pyarrow's writer): zstd at this level, the columns of
# DERIVED_DICTIONARY with a dictionary (few distinct values, or repeated ones), and the column
# a table is sorted by delta-encoded (sorted 64-bit keys: 5-6 bytes each instead of 8).
DERIVED_LEVEL = 3
DERIVED_DICTIONARY = ("side_to_move", "game_id", "game_result")


def sorted_properties(name: str, key: str, level: int | None, row_group: int
                      ) -> WriterProperties:
    """Table ``name``'s settings (at zstd ``level``; None: deltalake's) for files sorted by
    ``key``, in row groups of ``row_group`` rows: the key delta-encoded."""
    columns = {c: _PLAIN for c in PLAIN_COLUMNS.get(name, ())}
    return WriterProperties(compression="ZSTD", compression_level=level,
                            max_row_group_size=row_group,
                            column_properties={**columns, key: _SORTED_KEY})


def writer_options(name: str) -> dict[str, Any]:
    """``write_deltalake``'s settings for a write to table ``name`` (none: Delta's defaults)."""
    return {"writer_properties": WRITER_PROPERTIES[name]} if name in WRITER_PROPERTIES else {}


def compact_options(name: str) -> dict[str, Any]:
    """Delta optimize's settings for table ``name`` (none: deltalake's defaults)."""
    return {"writer_properties": COMPACT_PROPERTIES[name]} if name in COMPACT_PROPERTIES else {}


def derived_options(columns: list[str], sort_by: str | None) -> dict[str, Any]:
    """``pyarrow.parquet.ParquetWriter``'s settings for a derived table of ``columns``."""
    return {"compression": "zstd", "compression_level": DERIVED_LEVEL,
            "use_dictionary": [c for c in columns if c in DERIVED_DICTIONARY],
            "column_encoding": {sort_by: "DELTA_BINARY_PACKED"} if sort_by else None}
