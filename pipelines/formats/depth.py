"""The depths a label may have, the same in every importer (Lichess JSONL, text, binpack, EPD
``acd``, Parquet, ``--depth``), checked where each reads one.

Depth 0 is a static evaluation, or the depth of a file that gives none; Stockfish searches at
most 246 plies (its MAX_PLY), so MAX_DEPTH = 1000 leaves room for any engine and refuses what
no search gives (a depth of -5, of 100000).

>>> depth_problem(-5), depth_problem(36)
('depth -5 is not a depth from 0 to 1000', None)
"""
from __future__ import annotations

MAX_DEPTH = 1000


def depth_problem(depth: object) -> str | None:
    """Why ``depth`` is no label depth, quoting it (None: it is one)."""
    if isinstance(depth, int) and not isinstance(depth, bool) and 0 <= depth <= MAX_DEPTH:
        return None
    return f"depth {depth!r} is not a depth from 0 to {MAX_DEPTH}"
