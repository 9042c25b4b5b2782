"""The dashboard's data: a named query (``warehouse/sql/queries/<name>.sql``) run with its
``$parameters`` bound from the page's (never spliced into the SQL), as JSON-ready rows.

>>> parameter_names("select 1 where $model is null or kind = $kind or m = $model")
('kind', 'model')
"""
from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import re
from collections.abc import Mapping
from functools import cache
from typing import Any

import duckdb

from pipelines.train.dataset import NO_LIMIT
from warehouse.catalog import named_query, query

Row = dict[str, Any]
Rows = list[Row]
Params = Mapping[str, Any]

PARAMETER = re.compile(r"\$([a-z_][a-z0-9_]*)")
ISO_TIME = re.compile(r"^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(\.\d+)?(\+00:00|Z)?$")


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


def human_time(value: str) -> str:
    """An ISO timestamp (as ``plain`` writes them, UTC) as a person reads it; other text as
    it is.

    >>> human_time("2026-11-28T15:51:36.392647+00:00")
    '2026-11-28 15:51:36 UTC'
    >>> human_time("nnue@1")
    'nnue@1'
    """
    found = ISO_TIME.match(value)
    return f"{found[1]} {found[2]} UTC" if found else value


def number_text(value: float) -> str:
    """A number as a table shows it: thousands separated, five significant digits below a
    thousand (a clock's 10.412 s) and one decimal above (a rating: 1,199.4), never an
    exponent above one; the "no limit" sentinel as ``all``.

    >>> number_text(12345), number_text(1234.56), number_text(0.0208845460353)
    ('12,345', '1,234.6', '0.020885')
    >>> number_text(2**62), number_text(3.0), number_text(1e-05)
    ('all', '3', '1e-05')
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return "all" if value >= NO_LIMIT else f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    if abs(value) >= 1000:
        return f"{value:,.1f}"
    return f"{value:.5g}"


def value_text(value: Any) -> str:
    """A config, payload or parameter value without JSON's quotes: text as it is, numbers by
    :func:`number_text`, true/false, lists joined by commas, nothing for null.

    >>> value_text("adam"), value_text(None), value_text(True), value_text([4, 5])
    ('adam', '', 'true', '4, 5')
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return number_text(value)
    if isinstance(value, str):
        return human_time(value)
    if isinstance(value, list | tuple):
        return ", ".join(value_text(v) for v in value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={value_text(v)}" for k, v in value.items())
    return str(value)


def json_text(text: str | None) -> str:
    """A JSON object column (data-set parameters, an event's payload) as ``key=value`` pairs
    for a person: no quotes, no braces, sentinels named.

    >>> json_text('{"depth": 4, "max_positions": 4611686018427387904, "ids": ["sf"]}')
    'depth=4, max_positions=all, ids=sf'
    """
    return value_text(flatten(json_object(text)))
