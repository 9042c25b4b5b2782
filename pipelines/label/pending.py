"""Which positions still need labels: positions without a label for every requested depth.

The user's ``--where`` predicate is the one piece of user text that reaches SQL. It is parsed
by DuckDB and accepted only as one expression over the ``positions`` columns (no subqueries,
no other tables, no table functions), and runs on a connection locked to reading the lake.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import pyarrow as pa

from pipelines.label.config import LabelConfig, WherePredicateError, check_where
from warehouse import Lake, connect
from warehouse.catalog import QueryError, named_query, query

CANDIDATES = "label_candidates"


@dataclass(frozen=True)
class PendingPosition:
    """A position and the requested depths it still lacks."""

    position_key: int
    fen: str
    depths: tuple[int, ...]


def candidates_sql(where: str | None) -> str:
    """The select of candidate positions, with the user's predicate checked and inserted."""
    predicate = where.strip() if where else "true"
    check_where(predicate)
    return named_query("label_candidates").replace("{where}", predicate)


def create_candidates(con: duckdb.DuckDBPyConnection, where: str | None) -> None:
    """The temp view ``label_candidates``; a predicate naming unknown columns is refused."""
    try:
        con.execute(f"create temp view {CANDIDATES} as {candidates_sql(where)}")
    except duckdb.Error as exc:
        reason = str(exc).strip().splitlines()[0]
        raise WherePredicateError(f"bad --where predicate {where!r}: {reason}") from None


def pending_positions(lake: Lake, config: LabelConfig, engine_id: str,
                      only: Sequence[PendingPosition] | None = None) -> list[PendingPosition]:
    """Positions (all matching ``config.where``, or just ``only``) missing a requested depth.

    Ordered by position_key and capped at ``config.limit``: DuckDB streams the candidates
    through anti-joins into a top-N, so planning a batch takes memory for the batch, not for
    every position stored.
    """
    con = connect(lake)
    try:
        if only is None:
            create_candidates(con, config.where)
        else:
            first: dict[int, str] = {}
            for position in only:                          # each key once
                first.setdefault(position.position_key, position.fen)
            con.register(CANDIDATES, pa.table({
                "position_key": pa.array(list(first), pa.uint64()),
                "fen": pa.array(list(first.values()), pa.string())}))
        params = {"engine_id": engine_id, "depths": list(config.depths),
                  "searched_limit": config.search_limit if config.nodes else None,
                  "limit": config.limit}
        try:
            rows = query(con, named_query("pending_positions"), params).to_pylist()
        except QueryError as exc:
            if config.where and only is None:
                raise WherePredicateError(f"bad --where predicate {config.where!r}: {exc}") \
                    from None
            raise
    finally:
        con.close()
    return [PendingPosition(r["position_key"], r["fen"], tuple(r["depths"])) for r in rows]


def still_pending(lake: Lake, config: LabelConfig, engine_id: str,
                  batch: Sequence[PendingPosition]) -> list[PendingPosition]:
    """The part of ``batch`` still unlabelled (a retried task must not label twice)."""
    return pending_positions(lake, config.with_(limit=None), engine_id, only=batch)
