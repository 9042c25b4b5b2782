"""`chesslab label --where`: one expression over the positions columns, and the escapes that
used to get through (`1=1) union select ...` sent arbitrary FENs to Stockfish, wrote orphan
labels and read local files into label_errors)."""
from __future__ import annotations

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


@pytest.mark.parametrize("predicate", [
    "fen like '% b %'", "fen like '%--%'", "true -- a trailing comment",
    "length(fen) > 10 and position_key % 2 = 0",
    "source_id in ('a', 'b') or positions.fen is null",
    "case when fen like '% w %' then true else false end",
    "first_seen >= timestamp '2026-01-01' and position_key between 1 and 100",
])
def test_expressions_over_the_positions_columns_are_accepted(predicate: str) -> None:
    check_predicate(predicate, "positions", COLUMNS)


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
