"""User predicates (``chesslab label --where``): one boolean expression over one table's columns.

The predicate is parsed by DuckDB inside ``select * from <table> where (<predicate>)`` and
its syntax tree is inspected: the statement must stay that one select (no union, order, limit
or CTE smuggled in) and the predicate may only use the table's columns, constants, operators
and scalar functions: no subqueries, no other tables, no table functions, so no file access.

>>> check_predicate("fen like '%w KQkq%' and position_key > 5", "positions", ("position_key", "fen"))
>>> check_predicate("1=1) union select 1, 2 --", "positions", ("position_key", "fen"))
Traceback (most recent call last):
...
warehouse.predicate.PredicateError: bad predicate '1=1) union select 1, 2 --': syntax error at or near ")"
"""
from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import duckdb

# Expression classes a predicate may contain (DuckDB's parsed-expression classes).
ALLOWED_CLASSES = {"COLUMN_REF", "CONSTANT", "COMPARISON", "CONJUNCTION", "OPERATOR",
                   "FUNCTION", "CASE", "CAST", "BETWEEN", "COLLATE", "TYPE"}
# Scalar functions that read settings, variables or the environment rather than the row.
DENIED_FUNCTIONS = {"getenv", "current_setting", "getvariable", "nextval", "currval",
                    "setseed", "query", "query_table"}


class PredicateError(ValueError):
    """A predicate that is not one boolean expression over the table's columns: quotes it."""

    def __init__(self, predicate: str, reason: str) -> None:
        super().__init__(f"bad predicate {predicate!r}: {reason}")
        self.predicate = predicate
        self.reason = reason


def predicate_sql(predicate: str, table_name: str) -> str:
    """The select the predicate is checked in (the newlines end any trailing comment)."""
    return f"select * from {table_name} where (\n{predicate}\n)"


def check_predicate(predicate: str, table_name: str, columns: Sequence[str]) -> None:
    """Raise PredicateError unless ``predicate`` is one expression over ``columns``."""
    tree = parse(predicate, table_name)
    node = tree["node"]
    reason = statement_shape_problem(node, table_name)
    reason = reason or next(expression_problems(node["where_clause"], table_name, columns), None)
    if reason:
        raise PredicateError(predicate, reason)


def parse(predicate: str, table_name: str) -> dict[str, Any]:
    sql = predicate_sql(predicate, table_name)
    with duckdb.connect(":memory:") as con:
        [(raw,)] = con.execute("select json_serialize_sql(?::varchar)", [sql]).fetchall()
    tree = json.loads(raw)
    if tree.get("error"):
        message = str(tree.get("error_message"))
        # A second statement after a `;` makes the text more than one select.
        raise PredicateError(predicate, "it must be one expression"
                             if message.startswith("Only SELECT") else message)
    if len(tree["statements"]) != 1:
        raise PredicateError(predicate, "it must be one expression")
    return tree["statements"][0]


def statement_shape_problem(node: dict[str, Any], table_name: str) -> str | None:
    """Why the parsed statement is not ``select * from <table> where ...``, or None."""
    source = node.get("from_table") or {}
    if node.get("type") != "SELECT_NODE" or source.get("type") != "BASE_TABLE" \
            or source.get("table_name") != table_name:
        return "it must be one expression, not a query"
    if node.get("modifiers") or node.get("cte_map", {}).get("map") or node.get("group_expressions") \
            or node.get("having") or node.get("qualify") or node.get("sample"):
        return "it must be one expression, not a query"
    return None


def expression_problems(expression: Any, table_name: str,
                        columns: Sequence[str]) -> Iterator[str]:
    """Each disallowed part of a parsed expression tree."""
    if isinstance(expression, list):
        for item in expression:
            yield from expression_problems(item, table_name, columns)
        return
    if not isinstance(expression, dict):
        return
    kind = expression.get("class")
    if kind is not None and kind not in ALLOWED_CLASSES:
        yield f"{kind.lower().replace('_', ' ')} not allowed"
    if kind == "COLUMN_REF":
        yield from column_problems(expression["column_names"], table_name, columns)
    if kind == "FUNCTION" and expression["function_name"].lower() in DENIED_FUNCTIONS:
        yield f"function {expression['function_name']!r} not allowed"
    for value in expression.values():
        yield from expression_problems(value, table_name, columns)


def column_problems(names: list[str], table_name: str, columns: Sequence[str]) -> Iterator[str]:
    qualifier, column = names[:-1], names[-1]
    if qualifier not in ([], [table_name]) or column not in columns:
        yield f"unknown column {'.'.join(names)!r} (columns of {table_name}: {', '.join(columns)})"
