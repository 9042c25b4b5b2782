"""What a recorded fact is stamped with: an id made from its content, the hash of a file it
came from, and the UTC time it was recorded. The warehouse's timestamp columns
(``warehouse.tables.NOW``) hold :func:`utc_now` values.

It sits at the bottom of ``engines/`` so that engines, pipelines and flows can all use it
(``engines/`` imports nothing from the warehouse or the pipelines).

>>> content_id("abc")
'ba7816bf8f01cfea'
>>> content_id({"b": 1, "a": [2, 3]}, n=8) == content_id({"a": [2, 3], "b": 1}, n=8)
True
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

#: Hex digits of an id when a caller does not ask for another length (64 bits).
ID_HEX = 16
#: Bytes read at a time when a file is hashed.
READ_BYTES = 1 << 20


def content_id(content: object, n: int = ID_HEX) -> str:
    """The first ``n`` hex digits of the SHA-256 of ``content``: text as UTF-8, bytes as they
    are, anything else as its JSON (``json.dumps(content, sort_keys=True, default=str)``:
    keys sorted, so two dicts with the same items have the same id).

    Some ids stored in warehouses are shorter (an ``engine_id`` ends in 8 digits, a
    self-play run id has 12); their callers pass ``n`` so that stored ids stay what they were.
    """
    if not 1 <= n <= 64:
        raise ValueError(f"content_id: n must be 1..64 hex digits, got {n!r}")
    if isinstance(content, bytes):
        data = content
    elif isinstance(content, str):
        data = content.encode()
    else:
        data = json.dumps(content, sort_keys=True, default=str).encode()
    return hashlib.sha256(data).hexdigest()[:n]


def file_sha256(path: str | Path) -> str:
    """The hex SHA-256 of a file's bytes, read in blocks (OSError when it cannot be read)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(READ_BYTES):
            digest.update(block)
    return digest.hexdigest()


def utc_now() -> dt.datetime:
    """The current time, timezone-aware in UTC (what every timestamp column stores)."""
    return dt.datetime.now(dt.UTC)


__all__ = ["ID_HEX", "content_id", "file_sha256", "utc_now"]
