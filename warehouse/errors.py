"""The warehouse's error: an operation on the lake or its catalog refused bad input.

Every error the warehouse raises on purpose is a :class:`WarehouseError` (a ``ValueError``)
whose message names the table, path, column or query; the error of a library below it
(Delta's, DuckDB's) is quoted by its first line only.

>>> first_line("Generic DeltaError: no log files\\n  at the table's folder")
'Generic DeltaError: no log files'
"""
from __future__ import annotations


class WarehouseError(ValueError):
    """A lake operation failed on bad input: names the table or path."""


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""
