"""The DuckDB catalog: read-only queries, the locked connection, timeouts, view order."""
from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flows.cli import main
from warehouse import Lake, connect
from warehouse.catalog import (
    QueryError,
    ViewOrderError,
    connect_files,
    named_views,
    query,
    view_order,
)

START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"

# One statement of every kind the parser produces, each of which must be refused.
REFUSED = {
    "INSERT": "insert into games (game_id) values ('x')",
    "UPDATE": "update games set event = 'x'",
    "CREATE": "create table t as select 1",
    "DELETE": "delete from games",
    "PREPARE": "prepare p as select 1",
    "EXECUTE": "execute p",
    "ALTER": "alter view games rename to g",
    "TRANSACTION": "begin transaction",
    "COPY": "copy (select 1) to '{target}'",
    "EXPLAIN": "explain analyze copy (select 1 as a) to '{target}'",
    "DROP": "drop view games",
    "EXPORT": "export database '{target}'",
    "PRAGMA": "pragma enable_profiling",
    "VACUUM": "vacuum",
    "CALL": "call pragma_version()",
    "SET": "set threads = 1",
    "LOAD": "load httpfs",
    "ATTACH": "attach '{target}' as other",
    "DETACH": "detach memory",
    "MERGE_INTO": "merge into games using (select 'x' as game_id) s using (game_id) "
                  "when matched then delete",
}
# Kinds the SQL parser never returns: `analyze` parses as VACUUM, `install` as LOAD, `copy from
# database` as PRAGMA, `set variable` as SET, macros as CREATE; the rest are API-only.
NOT_FROM_TEXT = {"INVALID", "SELECT", "ANALYZE", "VARIABLE_SET", "CREATE_FUNC", "EXTENSION",
                 "COPY_DATABASE", "MULTI", "RELATION", "LOGICAL_PLAN"}
EXTRA_REFUSED = ["analyze", "install httpfs", "set variable x = 1", "create macro m(a) as a",
                 "copy from database memory to other", "select 1; drop view games",
                 "explain analyze create table t as select 1",
                 "explain analyze insert into games (game_id) values ('x')"]


@pytest.fixture
def lake(home: Path) -> Lake:
    lake = Lake(home)
    lake.write("positions", [{"position_key": 1, "fen": START_FEN, "source_id": "s"}])
    return lake


def test_every_statement_kind_but_select_is_refused(lake: Lake, tmp_path: Path) -> None:
    """EXPLAIN ANALYZE runs its statement, so `explain analyze copy ... to` used to write any
    file (over a warehouse part too). Every kind but SELECT (and EXPLAIN of a SELECT) is
    refused; no file is written."""
    assert set(REFUSED) | NOT_FROM_TEXT == set(duckdb.StatementType.__members__)
    part = lake.parts("positions")[0]
    con = connect(lake)
    for kind, sql in REFUSED.items():
        for target in (tmp_path / "out.csv", part):
            text = sql.format(target=target)
            assert duckdb.extract_statements(text)[0].type.name == kind
            with pytest.raises(QueryError, match="only read-only queries"):
                query(con, text)
    for text in EXTRA_REFUSED:
        with pytest.raises(QueryError, match="only read-only queries"):
            query(con, text)
    assert list(tmp_path.iterdir()) == [lake.home]
    assert query(con, "select fen from positions").to_pylist() == [{"fen": START_FEN}]
    assert query(con, "explain analyze select count(*) from positions").num_rows == 1


PIVOTS_READING = [
    "PIVOT positions ON source_id USING count(*)",
    "pivot positions on source_id using count(*) group by fen",
    "(pivot positions on source_id using count(*))",
    "select * from (pivot positions on source_id using count(*))",
    "with p as (pivot positions on source_id using count(*)) select * from p",
    "explain pivot positions on source_id using count(*)",
]
PIVOTS_WRITING = [
    "create table t as pivot positions on source_id using count(*)",
    "insert into t pivot positions on source_id using count(*)",
    "with p as (pivot positions on source_id using count(*)) insert into t select * from p",
    "copy (pivot positions on source_id using count(*)) to '{target}'",
    "explain analyze create table t as pivot positions on source_id using count(*)",
    "pivot positions on source_id using count(*); drop view positions",
]


def test_a_pivot_parsed_into_several_statements_is_a_query_a_write_is_not(
        lake: Lake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 48: ``chesslab sql "PIVOT games ON result USING count(*)"`` was refused as MULTI
    (DuckDB parses a PIVOT without an IN list into a look-up of the values and the query).
    Such a statement passes when it only reads; one that writes is refused, nothing written."""
    con = connect(lake)
    for text in PIVOTS_READING:
        assert duckdb.extract_statements(text)[0].type.name == "MULTI"
        assert query(con, text).num_rows >= 1, text
    assert query(con, PIVOTS_READING[0]).column("s").to_pylist() == [1]   # 1 position of s
    target = tmp_path / "out.csv"
    for text in PIVOTS_WRITING:
        with pytest.raises(QueryError, match="only read-only queries"):
            query(con, text.format(target=target))
    assert not target.exists()
    assert query(con, "select count(*) as n from positions").to_pylist() == [{"n": 1}]
    assert main(["--home", str(lake.home), "sql", "--format", "jsonl",
                 "PIVOT (select source_id from positions) ON source_id USING count(*)"]) == 0
    assert capsys.readouterr().out == '{"s": 1}\n'


def test_the_connection_itself_cannot_touch_files(lake: Lake, tmp_path: Path) -> None:
    """Below the statement check, the connection is locked: reading files outside the lake,
    writing files, attaching, installing or loading extensions and changing settings fail
    even when executed directly."""
    con = connect(lake)
    outside = tmp_path / "secret.csv"
    outside.write_text("a\n42\n")
    for sql in (f"select * from read_text('{outside}')", f"select * from read_csv('{outside}')",
                "select * from read_text('/etc/passwd')",
                f"copy (select 1) to '{tmp_path / 'x.csv'}'",
                f"attach '{tmp_path / 'x.duckdb'}' as x", "install httpfs", "load httpfs",
                "set enable_external_access = true", "set allowed_paths = ['/']",
                "set lock_configuration = false"):
        with pytest.raises(duckdb.Error):
            con.execute(sql)
    for sql in (f"select * from read_text('{outside}')", "select * from glob('/etc/*')"):
        with pytest.raises(QueryError, match="query failed"):
            query(con, sql)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "secret.csv"]


def test_a_connection_keeps_footers_but_reads_a_rewritten_file_again(tmp_path: Path) -> None:
    """Connections keep the Parquet footers they read (each view's bind would read every
    footer again), and a file rewritten at the same path since is read as it is now: a
    training snapshot written again under its name, read through the same connection."""
    snapshot = tmp_path / "dataset.parquet"
    pq.write_table(pa.table({"fen": [START_FEN]}), snapshot)
    con = connect_files([snapshot])
    assert con.execute("select current_setting('parquet_metadata_cache')").fetchone() == (True,)
    sql = f"select count(*), min(fen) from read_parquet('{snapshot}')"
    assert con.execute(sql).fetchone() == (1, START_FEN)
    pq.write_table(pa.table({"fen": ["8/8/8/8/8/8/8/K6k w - -"] * 3}), snapshot)
    assert con.execute(sql).fetchone() == (3, "8/8/8/8/8/8/8/K6k w - -")


def test_a_slow_query_is_interrupted(lake: Lake) -> None:
    con = connect(lake)
    with pytest.raises(QueryError, match="query timed out after 0.5 s"):
        query(con, "select count(*) from range(10000000000) a", timeout_s=0.5)
    assert query(con, "select 1 as x", timeout_s=5).to_pylist() == [{"x": 1}]


def test_sql_command_timeout_is_a_one_line_error(lake: Lake,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--home", str(lake.home), "sql", "--timeout", "0.5",
                 "select count(*) from range(10000000000) a"])
    assert code == 2
    assert capsys.readouterr().err == ("chesslab sql: error: query timed out after 0.5 s: "
                                       "'select count(*) from range(10000000000) a'\n")


def test_sql_command_json_output_is_exact(lake: Lake, capsys: pytest.CaptureFixture[str]) -> None:
    """``jsonl``: one JSON object per line, keys in column order, 64-bit keys as exact
    integers; ``json`` (issue 49 §4: it wrote JSON Lines) one document of the same objects."""
    Lake(lake.home).write("positions", [{"position_key": 0xF3A4B5C6D7E8F901, "fen": "8/8 w - -"}])
    sql = "select position_key, fen, source_id from positions order by position_key"
    code = main(["--home", str(lake.home), "sql", "--format", "jsonl", sql])
    assert code == 0
    out = capsys.readouterr().out
    assert out == ('{"position_key": 1, "fen": "' + START_FEN + '", "source_id": "s"}\n'
                   '{"position_key": 17556357113027557633, "fen": "8/8 w - -", '
                   '"source_id": null}\n')
    assert json.loads(out.splitlines()[1])["position_key"] == 0xF3A4B5C6D7E8F901
    assert main(["--home", str(lake.home), "sql", "--format", "json", sql]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document == [json.loads(line) for line in out.splitlines()]


def test_views_come_after_what_they_depend_on() -> None:
    assert view_order({"c": ("b",), "b": ("a", "labels"), "a": ()}) == ["a", "b", "c"]
    names = [name for name, _ in named_views()]
    assert set(names) >= {"label_coverage", "latest_ratings", "volatility_examples"}
    with pytest.raises(ViewOrderError, match="cycle: a -> b -> a"):
        view_order({"a": ("b",), "b": ("a",)})
    with pytest.raises(ViewOrderError, match="view 'a' depends on unknown 'nosuch'"):
        view_order({"a": ("nosuch",)})


@pytest.mark.parametrize(("sql", "error"), [
    ("select whit from games",
     'query failed: Binder Error: Referenced column "whit" not found in FROM clause! '
     'Candidate bindings: "white"'),
    ("select * from gmes",
     'query failed: Catalog Error: Table with name gmes does not exist! Did you mean "games"?'),
    ("select lenght(fen) from positions",
     "query failed: Catalog Error: Scalar Function with name lenght does not exist! "
     'Did you mean "length"?'),
])
def test_sql_command_keeps_duckdb_s_hints(lake: Lake, capsys: pytest.CaptureFixture[str],
                                          sql: str, error: str) -> None:
    """Issue 32 §3: the one-line error kept only DuckDB's first line and cut its hints."""
    assert main(["--home", str(lake.home), "sql", sql]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"chesslab sql: error: {error}") and len(err.splitlines()) == 1, err
