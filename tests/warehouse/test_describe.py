"""``chesslab sql --describe NAME`` (issue 34): every column of every table and named view has a
meaning, declared next to the column (``warehouse/tables/*.py``, ``-- column`` lines of the
view's ``.sql``), and the command prints those declarations, so the docs cannot drift from
the code. Before, the meanings were ``#`` comments a SQL user never saw and
``Table.columns_doc`` was empty."""
from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest

from flows.cli import main
from warehouse import Lake
from warehouse.catalog import connect, named_views
from warehouse.describe import view_columns_documented
from warehouse.tables import REGISTRY, Table

VIEWS = [name for name, _ in named_views()]


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_table_column_has_a_meaning(name: str) -> None:
    spec = REGISTRY[name]
    assert spec.doc.strip()
    assert list(spec.columns_doc) == spec.schema.names
    assert all(len(meaning) >= 8 for meaning in spec.columns_doc.values()), spec.columns_doc


def test_a_column_without_a_meaning_is_refused() -> None:
    with pytest.raises(ValueError, match="table 't': column 'b' has no meaning"):
        Table(name="t", columns=[("a", pa.int32(), "a number"), ("b", pa.string(), " ")])


@pytest.mark.parametrize("name", VIEWS)
def test_every_view_column_has_a_meaning_and_no_stray_ones(name: str) -> None:
    """The ``-- column`` lines name exactly the view's columns (DuckDB's ``describe`` of the
    view over empty tables)."""
    assert view_columns_documented(name) == ([], [])


def test_describe_prints_each_column_type_and_meaning_without_a_warehouse(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "none"
    assert main(["sql", "--describe", "labels", "--home", str(missing)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("table labels: Position x engine x depth -> score")
    assert "key: position_key, engine_id, depth\npartitioned by: engine_id, depth\n" in out
    rows = {line.split()[0]: line.split(None, 2) for line in out.splitlines()
            if line[:1].isalpha() and line.split()[0] in REGISTRY["labels"].schema.names}
    assert list(rows) == REGISTRY["labels"].schema.names
    assert rows["position_key"][1:] == ["UBIGINT", "positions.position_key of the labelled "
                                                   "position"]
    assert rows["score_mate"][1:] == ["INTEGER", "side to move, moves to mate (negative: "
                                                 "being mated)"]
    assert not missing.exists()


def test_describe_types_are_the_warehouse_views_types(
        home: Path, selfplay_positions: list[dict[str, object]],
        capsys: pytest.CaptureFixture[str]) -> None:
    """The types printed are those a query sees in a real warehouse (positions holds rows)."""
    Lake(home).write("positions", selfplay_positions)
    assert main(["sql", "--describe", "positions"]) == 0
    printed = capsys.readouterr().out.splitlines()[3:]
    types = connect(home).execute("describe positions").fetchall()
    assert len(printed) == len(types) == 5
    for line, (column, sql_type, *_) in zip(printed, types, strict=True):
        assert re.match(rf"{column} +{re.escape(sql_type)} {{2,}}\S", line), (line, sql_type)


def test_describe_a_view(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["sql", "--describe", "tournament_standings", "--home", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("view tournament_standings: Points, games and draws of every player")
    assert "score_pct      DOUBLE   points per game, percent, one decimal" in out


@pytest.mark.parametrize(("argv", "error"), [
    (["sql", "--describe", "label"], "chesslab sql: error: no table or view called 'label'; "
                                     "there are: engines, games,"),
    (["sql", "select 1", "--describe", "labels"],
     "chesslab sql: error: give a query or --describe NAME (one of them)"),
])
def test_describe_refuses_unknown_names_and_a_query_beside_it(
        argv: list[str], error: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*argv, "--home", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(error) and captured.err.count("\n") == 1
    assert captured.out == ""
