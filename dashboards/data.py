"""The dashboard's data: a named query (``warehouse/sql/queries/<name>.sql``) run with its
``$parameters`` bound from the page's (never spliced into the SQL), as JSON-ready rows.

>>> parameter_names("select 1 where $model is null or kind = $kind or m = $model")
('kind', 'model')
"""
from __future__ import annotations

import datetime as dt
import decimal
import json
import re
from collections.abc import Mapping
from functools import cache
from typing import Any

import duckdb

from warehouse.catalog import named_query, query

Row = dict[str, Any]
Rows = list[Row]
Params = Mapping[str, Any]

PARAMETER = re.compile(r"\$([a-z_][a-z0-9_]*)")


class DashboardError(ValueError):
    """A page or chart asked for something that does not exist: names it."""


@cache
def query_text(name: str) -> str:
    return named_query(name)


@cache
def parameter_names(sql: str) -> tuple[str, ...]:
    """The ``$name`` parameters a query binds, sorted."""
    return tuple(sorted(set(PARAMETER.findall(sql))))


def rows(con: duckdb.DuckDBPyConnection, name: str, params: Params | None = None) -> Rows:
    """The named query's rows with its parameters bound from ``params`` (missing ones are
    null, extra ones ignored), each value JSON-ready."""
    sql = query_text(name)
    bound = {key: (params or {}).get(key) for key in parameter_names(sql)}
    return [{k: plain(v) for k, v in row.items()}
            for row in query(con, sql, bound or None).to_pylist()]


def plain(value: Any) -> Any:
    """A value as JSON has it: timestamps as ISO text in UTC, decimals as floats.

    >>> plain(dt.datetime(2026, 3, 1, 12, tzinfo=dt.UTC))
    '2026-03-01T12:00:00+00:00'
    """
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, float) and value != value:   # NaN is not JSON
        return None
    return value


def json_object(text: str | None) -> dict[str, Any]:
    """A JSON object column (config, payload, extra) as a dict; {} when null or not an object.

    >>> json_object('{"a": 1}'), json_object(None), json_object('[1]')
    ({'a': 1}, {}, {})
    """
    if not text:
        return {}
    value = json.loads(text)
    return value if isinstance(value, dict) else {}


def flatten(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts as dotted keys.

    >>> flatten({"a": {"b": 1}, "c": [1, 2]})
    {'a.b': 1, 'c': [1, 2]}
    """
    flat: dict[str, Any] = {}
    for key, value in mapping.items():
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat
