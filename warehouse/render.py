"""Arrow results as text: aligned tables, CSV, one JSON document or JSON lines, for the CLI
and reports."""
from __future__ import annotations

import csv
import io
import json
from typing import Any

import pyarrow as pa

FORMATS = ("table", "csv", "json", "jsonl")


def render(result: pa.Table, fmt: str = "table", max_width: int = 60) -> str:
    """``result`` formatted as ``table`` (aligned), ``csv``, ``json`` (one document: a list of
    objects) or ``jsonl`` (one object per line).

    >>> rows = pa.table({"depth": [5, 6], "n": [10, 12]})
    >>> print(render(rows, "json"))
    [
      {"depth": 5, "n": 10},
      {"depth": 6, "n": 12}
    ]
    >>> print(render(rows, "jsonl"))
    {"depth": 5, "n": 10}
    {"depth": 6, "n": 12}
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format {fmt!r}; choose one of {', '.join(FORMATS)}")
    rows = result.to_pylist()
    if fmt == "json":        # one document, a row per line: readable, and one json.load
        body = ",\n".join(f"  {json.dumps(row, default=str)}" for row in rows)
        return f"[\n{body}\n]" if rows else "[]"
    if fmt == "jsonl":
        return "\n".join(json.dumps(row, default=str) for row in rows)
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(result.column_names)
        writer.writerows([cell(row[c], None) for c in result.column_names] for row in rows)
        return out.getvalue().rstrip("\n")
    return aligned(result.column_names, [[cell(r[c], max_width) for c in result.column_names]
                                         for r in rows])


def aligned(header: list[str], rows: list[list[str]]) -> str:
    """A plain text table with a header rule; numbers right-aligned."""
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(header)]
    numeric = [all(is_number(r[i]) for r in rows) and bool(rows) for i in range(len(header))]

    def line(values: list[str]) -> str:
        return "  ".join(v.rjust(w) if n else v.ljust(w)
                         for v, w, n in zip(values, widths, numeric, strict=False)).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, rows)])


def cell(value: Any, max_width: int | None) -> str:
    if value is None:
        return "" if max_width is None else "NULL"
    text = f"{value:.4g}" if isinstance(value, float) else str(value)
    if max_width and len(text) > max_width:
        return text[: max_width - 1] + "…"
    return text


def is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return text == "NULL"
    return True
