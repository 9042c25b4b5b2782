"""`chesslab label --where`: one expression over the positions columns, and the escapes that
used to get through (`1=1) union select ...` sent arbitrary FENs to Stockfish, wrote orphan
labels and read local files into label_errors)."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from pipelines.label.config import LabelConfig, WherePredicateError
from pipelines.label.pending import pending_positions
from warehouse import Lake
from warehouse.predicate import PredicateError, check_predicate

COLUMNS = ("position_key", "fen", "source_id", "first_seen")
START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"
BLACK_FEN = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -"

ESCAPES = {
    "1=1) union select 1, 'x' --": "syntax error",
    "true) union select position_key, fen from positions where (true": "not a query",
    "true) union all select 1, content from read_text('/etc/passwd') where (true":
        "not a query",
    "true) order by fen limit (1": "not a query",
    "position_key in (select position_key from moves where ply < 20)": "subquery not allowed",
    "fen = (select content from read_text('/etc/passwd'))": "subquery not allowed",
    "exists (select 1)": "subquery not allowed",
    "moves.ply < 3": "unknown column 'moves.ply'",
    "no_such_column > 3": "unknown column 'no_such_column'",
    "getenv('HOME') is not null": "function 'getenv' not allowed",
    "true; drop view positions": "syntax error",
    "true); drop view positions; select (1": "it must be one expression",
    "fen like $1": "parameter not allowed",
    "count(*) over () > 1": "window not allowed",
}


@pytest.mark.parametrize("predicate", sorted(ESCAPES))
def test_escapes_are_refused_with_the_reason(predicate: str) -> None:
    with pytest.raises(PredicateError, match=ESCAPES[predicate]):
        check_predicate(predicate, "positions", COLUMNS)
    with pytest.raises(WherePredicateError, match="bad --where predicate"):
        LabelConfig.tiny(where=predicate)


# Four positions, and which of them each accepted predicate selects, worked out by hand.
ROWS = [
    {"position_key": 1, "fen": START_FEN, "source_id": "a",
     "first_seen": dt.datetime(2025, 12, 31, tzinfo=dt.UTC)},
    {"position_key": 2, "fen": BLACK_FEN, "source_id": "b",
     "first_seen": dt.datetime(2026, 1, 2, tzinfo=dt.UTC)},
    {"position_key": 3, "fen": "8/8/8/8/8/8/8/K6k w - -", "source_id": "c",
     "first_seen": dt.datetime(2026, 3, 1, tzinfo=dt.UTC)},
    {"position_key": 200, "fen": "4k3/8/8/8/8/8/4P3/4K3 b - -", "source_id": None,
     "first_seen": dt.datetime(2026, 1, 5, tzinfo=dt.UTC)},
]
ACCEPTED = {
    "fen like '% b %'": [2, 200],                                # Black to move
    "fen like '%--%' or position_key = 3": [3],                  # `--` inside a string
    "true -- a trailing comment": [1, 2, 3, 200],
    "length(fen) > 10 and position_key % 2 = 0": [2, 200],
    "source_id in ('a', 'b') or positions.fen is null": [1, 2],  # a null source is neither
    "case when fen like '% w %' then true else false end": [1, 3],
    "first_seen >= timestamp '2026-01-01' and position_key between 1 and 100": [2, 3],
}


@pytest.mark.parametrize("predicate", sorted(ACCEPTED))
def test_expressions_over_the_positions_columns_are_accepted_and_keep_their_meaning(
        predicate: str, home: Path) -> None:
    """Each accepted predicate passes the check and, as the pending query runs it, selects
    the positions worked out by hand: the check neither refuses it nor changes what it
    means (a comment or a `--` in a string cutting it short, a dropped clause)."""
    check_predicate(predicate, "positions", COLUMNS)
    lake = Lake(home)
    lake.write("positions", ROWS)
    config = LabelConfig.tiny(depths=(2,), where=predicate)
    assert sorted(p.position_key for p in pending_positions(lake, config, "sf")) \
        == ACCEPTED[predicate]


def test_where_chooses_positions_and_an_escape_reaches_nothing(home: Path) -> None:
    """The accepted predicate filters the real positions; the union escape never gets to
    the pending query."""
    lake = Lake(home)
    lake.write("positions", [{"position_key": 1, "fen": START_FEN},
                             {"position_key": 2, "fen": BLACK_FEN}])
    config = LabelConfig.tiny(depths=(2,), where="fen like '% b %'")
    assert [(p.position_key, p.fen, p.depths) for p in pending_positions(lake, config, "sf")] \
        == [(2, BLACK_FEN, (2,))]
    escape = "true) union select 3, '8/8/8/8/8/8/8/K6k w - -' where (true"
    with pytest.raises(WherePredicateError, match="not a query"):
        pending_positions(lake, LabelConfig.tiny(depths=(2,)).with_(where=escape), "sf")
