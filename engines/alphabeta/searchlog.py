"""The search log's file: the sampled LMR decisions (paper 003 appendix A.2) an alpha-beta
engine writes with ``--search-log FILE``, one JSON object a line, appended at every flush.

The engine only writes the file; the ``lmr-data`` step reads it back and stores the rows in
the warehouse's ``search_log`` table (engines never hold the warehouse).

>>> import datetime, tempfile
>>> path = Path(tempfile.mkdtemp()) / "log.jsonl"
>>> at = datetime.datetime(2026, 1, 2, tzinfo=datetime.UTC)
>>> append_search_log(path, [{"run_id": "r", "seq": 0, "logged_at": at}])
1
>>> read_search_log(path) == [{"run_id": "r", "seq": 0, "logged_at": at}]
True
"""
from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: The row's timestamp column, written in ISO 8601 and read back as a datetime.
TIMESTAMP = "logged_at"


class SearchLogError(ValueError):
    """A search log file that cannot be written or read: names the file and the line."""


def append_search_log(path: str | os.PathLike[str], rows: Sequence[Mapping[str, Any]]) -> int:
    """Append ``rows`` to the file (created when missing); returns the rows written."""
    if not rows:
        return 0
    text = "".join(json.dumps({**row, TIMESTAMP: row[TIMESTAMP].isoformat()}) + "\n"
                   for row in rows)
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise SearchLogError(f"search log {str(path)!r}: cannot write: "
                             f"{exc.strerror or exc}") from None
    return len(rows)


def read_search_log(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The rows of a search log file (none when it does not exist: nothing was sampled)."""
    if not Path(path).is_file():
        return []
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            try:
                row = json.loads(line)
                row[TIMESTAMP] = dt.datetime.fromisoformat(row[TIMESTAMP])
            except (ValueError, KeyError, TypeError) as exc:
                raise SearchLogError(f"search log {str(path)!r} line {number}: not a logged "
                                     f"decision ({type(exc).__name__}: {exc})") from None
            rows.append(row)
    return rows
