"""pipelines.label: several Stockfish depths from one search, resumable, crash- and hang-proof.

Positions come from real games (tests/fixtures/label_engines/selfplay.pgn: Stockfish self-play
and Morphy's Opera game) and an EPD of terminal and KQK positions, written into the lake with
python-chess (independent of the ingest step).
"""
from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import chess
import chess.pgn
import chess.polyglot
import duckdb
import pyarrow as pa
import pytest
from deltalake import write_deltalake

from flows.label import LABEL
from flows.step import run_step
from pipelines.label import (
    LabelConfig,
    LabelConfigError,
    UciClient,
    WherePredicateError,
    pending_positions,
)
from pipelines.label.info import InfoIteration, completed_depths, parse_info
from warehouse import Lake, connect
from warehouse.tables import table

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "label_engines"
GAMES = FIXTURES / "selfplay.pgn"
TERMINAL = FIXTURES / "terminal.epd"
PROXY = FIXTURES / "proxy_engine.py"




def epd_positions() -> dict[str, dict[str, object]]:
    """The terminal.epd positions by their id."""
    rows = {}
    for line in TERMINAL.read_text().splitlines():
        board, ops = chess.Board.from_epd(line)
        key = chess.polyglot.zobrist_hash(board)
        rows[str(ops["id"])] = {"position_key": key, "fen": board.epd(), "source_id": "t"}
    return rows


def raw_label_counts(lake: Lake) -> list[tuple[int, int, int]]:
    """(position_key, depth, rows) over the table's files, as any Parquet reader sees them."""
    labels = lake.read("labels", columns=["position_key", "depth"])  # noqa: F841 (read by SQL)
    return duckdb.sql(
        "select position_key, depth, count(*) from labels group by all order by all").fetchall()


@pytest.fixture
def lake(home: Path, stockfish_path: str) -> Lake:
    return Lake(home)


@pytest.fixture
def tokyo_time() -> Iterator[None]:
    """A local time 9 hours from UTC, so that a time taken without a zone shows."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TZ", "Asia/Tokyo")
        time.tzset()
        yield
    time.tzset()                                  # the zone as it was


def test_every_depth_equals_a_fresh_search(lake: Lake, stockfish_path: str, tokyo_time: None,
        selfplay_positions: list[dict[str, object]]) -> None:
    """Issue 2: depths 5 and 6 from one depth-7 search equal fresh `go depth 5/6` searches
    after ucinewgame (score, best move, nodes, PV), and White's view flips with the side."""
    rows = selfplay_positions[10:40:3]
    lake.write("positions", rows)
    started = datetime.now(UTC)
    summary = run_step(LABEL, LabelConfig(depths=(5, 6, 7), workers=2, batch_size=4,
                                          pv_moves=3), lake)
    assert (summary.positions, summary.labels, summary.errors) == (10, 30, 0)
    labels = {(r["position_key"], r["depth"]): r for r in lake.read("labels").to_pylist()}
    assert {r["run_id"] for r in labels.values()} == {summary.run_id}
    stamp = re.fullmatch(r"(\d{8}T\d{6})-[0-9a-f]{6}", summary.run_id)  # UTC time, 6 hex
    assert stamp, summary.run_id
    assert f"{started:%Y%m%dT%H%M%S}" <= stamp[1] <= f"{datetime.now(UTC):%Y%m%dT%H%M%S}"
    assert all(started <= r["labelled_at"] <= datetime.now(UTC) for r in labels.values())
    engine = UciClient(stockfish_path, LabelConfig().uci_options)
    longest = 0
    try:
        for row in rows:
            for depth in (5, 6):
                fresh = completed_depths(
                    engine.search(str(row["fen"]), f"go depth {depth}", 30).info, (depth,),
                    last_is_complete=True)[depth]
                label = labels[(row["position_key"], depth)]
                assert label["search_limit"] == "depth 7"
                assert (label["score_cp"], label["score_mate"]) == (fresh.score_cp,
                                                                    fresh.score_mate)
                assert (label["best_move"], label["nodes"]) == (fresh.best_move, fresh.nodes)
                assert label["pv"] == list(fresh.pv[:3])
                longest = max(longest, len(fresh.pv))
                assert label["wdl_win"] + label["wdl_draw"] + label["wdl_loss"] == 1000
                sign = 1 if " w " in str(row["fen"]) else -1
                if label["score_cp"] is not None:
                    assert label["white_cp"] == sign * label["score_cp"]
    finally:
        engine.quit()
    assert longest > 3                                # the PV was cut to pv_moves
    assert {r["depth"] for r in labels.values()} == {5, 6, 7}


def test_terminal_positions_are_labelled_at_every_depth(lake: Lake) -> None:
    """Mate and stalemate (Stockfish prints `info depth 0` and `bestmove (none)`) get every
    requested depth with a null best move, so they are not re-sent forever; KQK positions
    are winning for White whichever side moves (score_* vs white_* sign convention)."""
    positions = epd_positions()
    lake.write("positions", list(positions.values()))
    config = LabelConfig(depths=(3, 5), workers=1)
    summary = run_step(LABEL, config, lake)
    assert (summary.positions, summary.labels) == (4, 8)
    by_key = {(r["position_key"], r["depth"]): r for r in lake.read("labels").to_pylist()}
    for depth in (3, 5):
        stalemate = by_key[(positions["stalemate: black Kh8, white Qf7 Kg6"]["position_key"],
                            depth)]
        mated = by_key[(positions["fool's mate: white is mated"]["position_key"], depth)]
        for row, scores, wdl in ((stalemate, (0, None, 0, None), (0, 1000, 0)),
                                 (mated, (None, 0, None, 0), (0, 0, 1000))):
            assert (row["score_cp"], row["score_mate"], row["white_cp"], row["white_mate"]) \
                == scores
            assert (row["wdl_win"], row["wdl_draw"], row["wdl_loss"]) == wdl
            assert (row["best_move"], row["pv"], row["nodes"], row["seldepth"], row["time_ms"],
                    row["bound"]) == (None, [], 0, 0, 0, None)
        for side in ("white", "black"):
            kqk = by_key[(positions[f"KQK, {side} to move"]["position_key"], depth)]
            assert (kqk["white_cp"] or 0) > 300 or (kqk["white_mate"] or 0) > 0
            assert kqk["best_move"] is not None
    assert pending_positions(lake, config, summary.engine_id) == []


def test_second_run_labels_nothing_and_engine_recorded_once(lake: Lake,
        selfplay_positions: list[dict[str, object]]) -> None:
    """Issue 2: never label a (position, engine, depth) twice; the engine row is one row."""
    lake.write("positions", selfplay_positions[:25])
    config = LabelConfig.tiny(depths=(2, 4))
    first = run_step(LABEL, config, lake)
    parts = lake.parts("labels")
    second = run_step(LABEL, config, lake)
    assert (first.positions, first.labels) == (25, 50)
    assert (second.pending, second.labels) == (0, 0)
    assert lake.parts("labels") == parts
    engines = lake.read("engines").to_pylist()
    assert len(engines) == 1 and engines[0]["engine_id"] == first.engine_id
    assert first.engine_id.startswith("stockfish-15.1-") and len(first.engine_id) == 23
    assert '"Threads":"1"' in engines[0]["options"]
    assert "UCI_ShowWDL" not in engines[0]["options"]  # display only: not the identity
    assert engines[0]["kind"] == "external" and engines[0]["model"] is None


def test_where_and_limit_choose_positions_in_key_order(lake: Lake,
        selfplay_positions: list[dict[str, object]]) -> None:
    """--where filters with SQL over the positions view, --limit caps in position_key order;
    a predicate that smuggles a second statement or names no column is refused."""
    rows = selfplay_positions[:60]
    lake.write("positions", rows)
    config = LabelConfig.tiny(depths=(2,), where="fen like '% b %'", limit=5)
    summary = run_step(LABEL, config, lake)
    expected = sorted(r["position_key"] for r in rows if " b " in str(r["fen"]))[:5]
    assert sorted(lake.read("labels").column("position_key").to_pylist()) == expected
    assert summary.labels == 5
    for bad in ("true); drop view positions; select (1", "no_such_column > 3"):
        with pytest.raises(WherePredicateError, match="bad --where predicate"):
            pending_positions(lake, config.with_(where=bad), summary.engine_id)


def test_resumed_position_gets_only_its_missing_depths(lake: Lake,
        selfplay_positions: list[dict[str, object]]) -> None:
    """A run cut between the parts of one flush leaves some depths of a position: the next
    run searches to the deepest missing one and writes only the missing rows."""
    lake.write("positions", selfplay_positions[:12])
    shallow = run_step(LABEL, LabelConfig.tiny(depths=(3,)), lake)
    deeper = run_step(LABEL, LabelConfig.tiny(depths=(3, 4, 5)), lake)
    assert (shallow.labels, deeper.labels) == (12, 24)
    counts = raw_label_counts(lake)
    assert len(counts) == 36 and {c for _, _, c in counts} == {1}
    limits = connect(lake).execute(
        "select depth, list(distinct search_limit) from labels group by depth order by depth"
    ).fetchall()
    assert limits == [(3, ["depth 3"]), (4, ["depth 5"]), (5, ["depth 5"])]


def test_nodes_limit_keeps_only_completed_iterations(lake: Lake, stockfish_path: str,
        selfplay_positions: list[dict[str, object]]) -> None:
    """With `go nodes N` the last printed depth may be cut short: only depths followed by a
    deeper line are kept, and each equals a fresh search to that depth."""
    rows = selfplay_positions[50:53]
    lake.write("positions", rows)
    config = LabelConfig.tiny(depths=tuple(range(1, 30)), nodes=3000)
    summary = run_step(LABEL, config, lake)
    labels = lake.read("labels").to_pylist()
    assert summary.errors == 0 and {r["search_limit"] for r in labels} == {"nodes 3000"}
    engine = UciClient(stockfish_path, config.uci_options)
    try:
        for row in rows:
            mine = {r["depth"]: r for r in labels if r["position_key"] == row["position_key"]}
            assert sorted(mine) == list(range(1, len(mine) + 1)) and len(mine) >= 4
            deepest = max(mine)
            output = engine.search(str(row["fen"]), "go nodes 3000", 30)
            printed = max(parse_info(line).depth for line in output.info)
            assert deepest == printed - 1
            fresh = completed_depths(engine.search(str(row["fen"]), f"go depth {deepest}", 30)
                                     .info, (deepest,), last_is_complete=True)[deepest]
            assert (mine[deepest]["nodes"], mine[deepest]["best_move"]) == (fresh.nodes,
                                                                            fresh.best_move)
    finally:
        engine.quit()
    assert run_step(LABEL, config, lake).pending == 0


def proxy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fen: str, mode: str,
          stockfish_path: str) -> str:
    monkeypatch.setenv("PROXY_ENGINE_TARGET", stockfish_path)
    monkeypatch.setenv("PROXY_ENGINE_FEN", fen)
    monkeypatch.setenv("PROXY_ENGINE_MODE", mode)
    monkeypatch.setenv("PROXY_ENGINE_STATE", str(tmp_path / "crashed-once"))
    return str(PROXY)


@pytest.mark.parametrize("mode, errors, restarts", [("crash", 1, 2), ("crash-once", 0, 1)])
def test_crashing_engine_is_restarted_then_recorded(
        lake: Lake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stockfish_path: str,
        mode: str, errors: int, restarts: int, caplog: pytest.LogCaptureFixture,
        tokyo_time: None,
        selfplay_positions: list[dict[str, object]]) -> None:
    """Issue 2: a crashed engine is restarted and the position retried (retries=1); if it
    crashes every time it becomes a label_errors row and the run goes on."""
    rows = selfplay_positions[:8]
    lake.write("positions", rows)
    bad = sorted(rows, key=lambda r: r["position_key"])[3]
    engine = proxy(monkeypatch, tmp_path, str(bad["fen"]), mode, stockfish_path)
    caplog.set_level(logging.WARNING, logger="pipelines.label.run")
    summary = run_step(LABEL, LabelConfig.tiny(depths=(2, 3), engine=engine), lake)
    assert (summary.errors, summary.restarts) == (errors, restarts)
    # each retry is logged with the position, the attempt and the failure (retries=1: 2 tries)
    retries = [r.getMessage() for r in caplog.records if "attempt" in r.getMessage()]
    assert [m.split(": ", 1)[0] for m in retries] == [
        f"position {bad['position_key']} ({bad['fen']}), attempt {n} of 2"
        for n in range(1, errors + 2)]
    assert all("exit code 3" in m for m in retries), retries
    assert summary.positions == 8 - errors and summary.labels == 2 * (8 - errors)
    error_rows = lake.read("label_errors").to_pylist()
    assert len(error_rows) == errors
    if errors:
        assert error_rows[0]["position_key"] == bad["position_key"]
        assert error_rows[0]["attempts"] == 2 and "exit code 3" in error_rows[0]["message"]
        assert abs(error_rows[0]["recorded_at"] - datetime.now(UTC)).total_seconds() < 600
        assert bad["position_key"] not in lake.read("labels").column("position_key").to_pylist()


def test_hanging_engine_times_out_and_the_run_goes_on(
        lake: Lake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stockfish_path: str,
        selfplay_positions: list[dict[str, object]]) -> None:
    """A hung engine (no answer within the per-position timeout) is killed, restarted,
    retried, then recorded; the other positions are labelled."""
    rows = selfplay_positions[:5]
    lake.write("positions", rows)
    bad = sorted(rows, key=lambda r: r["position_key"])[1]
    engine = proxy(monkeypatch, tmp_path, str(bad["fen"]), "hang", stockfish_path)
    config = LabelConfig.tiny(depths=(2,), engine=engine, timeout=2.0, retries=1)
    summary = run_step(LABEL, config, lake)
    assert (summary.positions, summary.errors, summary.restarts) == (4, 1, 2)
    error = lake.read("label_errors").to_pylist()[0]
    assert error["fen"] == bad["fen"] and "no answer in time" in error["message"]


def test_an_engine_pool_keeps_warm_engines_by_path_and_options(stockfish_path: str) -> None:
    """An engine given back is taken again for the same path and options, not for others;
    a dead one is never kept or handed out; closing the pool quits the idle ones."""
    from pipelines.label.run import EnginePool

    with EnginePool() as pool:
        first = pool.take(stockfish_path, {"Hash": "16"})
        pool.give(first)
        assert pool.take(stockfish_path, {"Hash": "16"}) is first
        other = pool.take(stockfish_path, {"Hash": "32"})
        assert other is not first
        pool.give(first)
        pool.give(other)
        assert pool.take(stockfish_path, {"Hash": "32"}) is other
        other.kill()
        pool.give(other)                          # dead: not kept
        pool.give(first)
        first.kill()                              # died while idle: not handed out
        fresh = pool.take(stockfish_path, {"Hash": "16"})
        assert fresh not in (first, other) and fresh.alive
        pool.give(fresh)
    assert not fresh.alive


def counted_engines(monkeypatch: pytest.MonkeyPatch) -> list[UciClient]:
    """Every engine process the label module starts, in order."""
    from pipelines.label import run as run_module

    started: list[UciClient] = []

    class Counted(UciClient):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            started.append(self)

    monkeypatch.setattr(run_module, "UciClient", Counted)
    return started


@pytest.mark.parametrize("mode, restarts, errors", [
    ("none", 0, 0), ("crash-once", 1, 0), ("hang", 2, 1)])
def test_batches_borrow_one_warm_engine_from_the_pool(
        lake: Lake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stockfish_path: str,
        caplog: pytest.LogCaptureFixture, mode: str, restarts: int, errors: int,
        selfplay_positions: list[dict[str, object]]) -> None:
    """Two batches with a pool search on one engine process, given back after each; after
    a crash or a hang (the failure seen when writing to the engine, or when reading from it)
    the engine started in its place is given back. A batch without a pool starts its own and
    quits it. Each retry is logged, and nothing else is (a healthy engine logs none)."""
    from pipelines.label.pending import PendingPosition
    from pipelines.label.run import EnginePool, label_batch

    rows = selfplay_positions[:8]
    batch = [PendingPosition(int(r["position_key"]), str(r["fen"]), (2, 3))  # type: ignore[call-overload]
             for r in rows]
    engine = stockfish_path if mode == "none" else proxy(
        monkeypatch, tmp_path, str(rows[1]["fen"]), mode, stockfish_path)
    config = LabelConfig.tiny(depths=(2, 3), engine=engine, timeout=1.0)
    started = counted_engines(monkeypatch)
    caplog.set_level(logging.WARNING, logger="pipelines.label.run")
    with EnginePool() as pool:
        first = label_batch(lake, config, "e", batch[:3], "r", pool)
        second = label_batch(lake, config, "e", batch[3:6], "r", pool)
        assert (first.positions, first.errors, first.restarts) == (3 - errors, errors, restarts)
        assert (second.positions, second.restarts) == (3, 0)
        assert len(started) == 1 + restarts and started[-1].alive
    assert not any(engine.alive for engine in started)
    own = label_batch(lake, config, "e", batch[6:], "r")
    assert own.positions == 2 and len(started) == 2 + restarts and not started[-1].alive
    assert {(e.path, tuple(e.options.items())) for e in started} == {
        (engine, tuple(config.uci_options.items()))}
    retries = [r for r in caplog.records if "attempt" in r.getMessage()]
    assert len(retries) == restarts, [r.getMessage() for r in retries]


def test_an_engine_slot_reports_each_failure_once(stockfish_path: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A slot's ``finish`` gives the oldest search's output; asked with no search in flight
    it says so; an engine that cannot start is reported by the next ``finish``, once, and
    the slot keeps nothing in flight."""
    from pipelines.label.run import EnginePool, EngineSlot
    from pipelines.label.uci import EngineError

    fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -"
    slot = EngineSlot(LabelConfig.tiny(engine=stockfish_path, timeout=2.0))
    with pytest.raises(EngineError, match="^no search in flight$"):
        slot.finish()                                         # no engine yet
    slot.start(fen, "go depth 2")
    assert slot.in_flight == 1
    assert slot.finish().bestmove is not None and slot.in_flight == 0
    with pytest.raises(EngineError, match="^no search in flight$"):
        slot.finish()                                         # an engine, nothing queued
    slot.release()
    slot.release()                                            # twice: nothing left to quit

    started = counted_engines(monkeypatch)
    with EnginePool() as pool:                # abandoned mid-search, then used again
        reused = EngineSlot(LabelConfig.tiny(engine=stockfish_path, timeout=2.0), pool)
        reused.start(fen, "go depth 2")
        reused.release()                      # killed: its output is never read
        assert reused.in_flight == 0
        reused.start(fen, "go depth 2")
        assert reused.finish().bestmove is not None
        reused.release()
        kept = pool.take(stockfish_path, LabelConfig.tiny().uci_options)
        assert len(started) == 2 and not started[0].alive
        assert kept is started[1] and kept.alive      # the second engine, back in the pool
        pool.give(kept)

    broken = EngineSlot(LabelConfig.tiny(engine="/nonexistent/stockfish"))
    broken.start(fen, "go depth 2")
    broken.start(fen, "go depth 2")                           # nothing sent after a failure
    assert broken.in_flight == 0
    with pytest.raises(EngineError, match="cannot start engine '/nonexistent/stockfish'"):
        broken.finish()
    assert broken.in_flight == 0
    with pytest.raises(EngineError, match="^no search in flight$"):
        broken.finish()


def test_labels_are_written_when_flushed_or_their_time_is_up(lake: Lake,
        caplog: pytest.LogCaptureFixture) -> None:
    """A writer keeps rows until ``flush`` or until ``seconds`` have passed since the last
    write; a search that missed a requested depth is logged with the depths it gave."""
    from pipelines.label.pending import PendingPosition
    from pipelines.label.run import LabelWriter, check_depths, label_row

    now = datetime.now(UTC)
    row = label_row(7, "e", 3, InfoIteration(depth=3, score_cp=12, pv=("e2e4",)), True,
                    "depth 3", "r", now, 8)
    patient = LabelWriter(lake, seconds=3600)
    patient.add([row], [])
    assert lake.read("labels").num_rows == 0
    patient.flush()
    assert lake.read("labels").num_rows == 1
    eager = LabelWriter(lake, seconds=0)
    eager.add([{**row, "depth": 4}], [])
    assert lake.read("labels").num_rows == 2

    caplog.set_level(logging.WARNING, logger="pipelines.label.run")
    position = PendingPosition(7, "8/8/8/8/8/8/2k5/K6Q b - -", (3, 4, 5))
    check_depths(position, [row, {**row, "depth": 5}], LabelConfig.tiny())
    check_depths(position, [row], LabelConfig.tiny(nodes=500))   # a nodes search may stop
    check_depths(position, [row, {**row, "depth": 4}, {**row, "depth": 5}], LabelConfig.tiny())
    assert [r.getMessage() for r in caplog.records] == [
        "position 7 (8/8/8/8/8/8/2k5/K6Q b - -): go depth 5 gave only depths [3, 5]"]


def test_a_batch_whose_engine_never_starts_records_every_position(
        lake: Lake, selfplay_positions: list[dict[str, object]]) -> None:
    """Each position of the batch becomes a label_errors row (after its retries), counted."""
    from pipelines.label.pending import PendingPosition
    from pipelines.label.run import label_batch

    batch = [PendingPosition(int(r["position_key"]), str(r["fen"]), (2,))  # type: ignore[call-overload]
             for r in selfplay_positions[:3]]
    result = label_batch(lake, LabelConfig.tiny(engine="/nonexistent/stockfish"), "e", batch,
                         "r")
    assert (result.positions, result.labels, result.errors) == (0, 0, 3)
    errors = lake.read("label_errors").to_pylist()
    assert sorted(e["position_key"] for e in errors) == sorted(p.position_key for p in batch)
    assert all("cannot start engine" in e["message"] and e["attempts"] == 2 for e in errors)


def test_searches_keep_two_in_flight_and_plans_say_what_is_pending(
        lake: Lake, stockfish_path: str, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture,
        selfplay_positions: list[dict[str, object]]) -> None:
    """The engine gets the next search while Python reads the last one: at most two
    (``LOOKAHEAD``) in flight, and two from the first; a plan logs its pending count."""
    from pipelines.label.pending import PendingPosition
    from pipelines.label.run import LOOKAHEAD, EngineSlot, plan_labels, searches

    assert LOOKAHEAD == 2
    rows = selfplay_positions[:6]
    batch = [PendingPosition(int(r["position_key"]), str(r["fen"]), (2,))  # type: ignore[call-overload]
             for r in rows]
    slot = EngineSlot(LabelConfig.tiny(depths=(2,)))
    seen: list[int] = []
    start = slot.start

    def counted(fen: str, go: str) -> None:
        start(fen, go)
        seen.append(slot.in_flight)

    monkeypatch.setattr(slot, "start", counted)
    done = [position for position, _, _ in searches(slot, LabelConfig.tiny(depths=(2,)), batch)]
    slot.release()
    assert done == batch and max(seen) == 2 and seen[:2] == [1, 2]

    lake.write("positions", rows)
    caplog.set_level(logging.DEBUG, logger="pipelines.label.run")
    plan = plan_labels(lake, LabelConfig.tiny(depths=(2,)))
    assert f"6 positions to label with {plan.identity.engine_id}" in [
        r.getMessage() for r in caplog.records]


def test_a_terminal_position_as_stockfish_reports_it() -> None:
    """Stockfish 15.1 on a mated side to move prints ``info depth 0 score mate 0``, on a
    stalemate ``info depth 0 score cp 0`` (then ``bestmove (none)``): every field of the
    label is that line's, with WDL certain, no nodes, no depth searched; no line at all is a
    draw; a time on the line is kept."""
    from pipelines.label.info import terminal_result

    nnue = "info string NNUE evaluation using nn-ad9b42354671.nnue enabled"
    assert terminal_result([nnue, "info depth 0 score mate 0"]) == InfoIteration(
        depth=0, score_mate=0, wdl=(0, 0, 1000), nodes=0, seldepth=0, time_ms=0)
    draw = InfoIteration(depth=0, score_cp=0, wdl=(0, 1000, 0), nodes=0, seldepth=0, time_ms=0)
    assert terminal_result([nnue, "info depth 0 score cp 0"]) == draw
    assert terminal_result([]) == draw
    assert terminal_result(["info depth 0 score cp 0 time 2"]).time_ms == 2


def test_missing_engine_is_a_one_line_error(lake: Lake,
        selfplay_positions: list[dict[str, object]]) -> None:
    lake.write("positions", selfplay_positions[:3])
    with pytest.raises(RuntimeError, match="cannot start engine '/nonexistent/stockfish'"):
        run_step(LABEL, LabelConfig.tiny(engine="/nonexistent/stockfish"), lake)


def test_config_is_validated() -> None:
    """Bad options are refused with the option's name and value."""
    with pytest.raises(LabelConfigError, match="depths: 0"):
        LabelConfig(depths=(0, 5))
    with pytest.raises(LabelConfigError, match="workers: must be at least 1, got 0"):
        LabelConfig(workers=0)
    assert LabelConfig(depths=(7, 5, 6, 5)).depths == (5, 6, 7)
    assert LabelConfig(depths=(5, 7)).go_command == "go depth 7"
    assert LabelConfig(nodes=10000).search_limit == "nodes 10000"
    assert LabelConfig().workers == (os.cpu_count() or 1)


def test_info_lines_bounds_and_unfinished_iterations() -> None:
    """Aspiration-window lines (lowerbound/upperbound) are not a depth's label when the depth
    has an exact line, and with a node limit the last printed depth is dropped (Stockfish
    prints it when stopped)."""
    info = [
        "info depth 9 seldepth 12 multipv 1 score cp 40 wdl 80 900 20 nodes 9000 nps 1 "
        "hashfull 3 tbhits 0 time 20 pv e2e4 e7e5",
        "info depth 10 seldepth 14 multipv 1 score cp 55 lowerbound wdl 90 890 20 nodes 12000 "
        "nps 1 hashfull 3 tbhits 0 time 30 pv e2e4",
        "info depth 10 seldepth 14 multipv 1 score cp 48 wdl 85 895 20 nodes 15000 nps 1 "
        "hashfull 4 tbhits 0 time 35 pv d2d4 d7d5 c2c4",
        "info depth 11 seldepth 15 multipv 1 score mate -3 wdl 0 0 1000 nodes 20000 nps 1 "
        "hashfull 5 tbhits 0 time 50 pv g1f3",
    ]
    nodes = completed_depths(info, (9, 10, 11), last_is_complete=False)
    assert sorted(nodes) == [9, 10]
    assert (nodes[10].score_cp, nodes[10].nodes, nodes[10].pv) == (48, 15000,
                                                                    ("d2d4", "d7d5", "c2c4"))
    depth = completed_depths(info, (10, 11), last_is_complete=True)
    assert (depth[11].score_mate, depth[11].score_cp, depth[11].wdl) == (-3, None, (0, 0, 1000))
    assert parse_info(info[0]).bound is None
    assert parse_info(info[1]) == InfoIteration(   # every field after the bound read too
        depth=10, seldepth=14, score_cp=55, wdl=(90, 890, 20), nodes=12000, time_ms=30,
        pv=("e2e4",), bound="lower")


def test_a_depth_whose_last_line_is_a_bound_is_labelled_with_its_bound() -> None:
    """Issue 32: a depth whose last line is a bound (depth 10 here, Stockfish's last report of
    that iteration) gets its label from that line, with the bound's kind, instead of none
    (which left it to be searched by every run); where a depth has an exact line after or
    before a bound (depth 11), the exact line wins."""
    info = [
        "info depth 9 seldepth 12 multipv 1 score cp 40 nodes 9000 time 20 pv e2e4 e7e5",
        "info depth 10 seldepth 14 multipv 1 score cp 31 upperbound nodes 12000 time 30 "
        "pv e2e4",
        "info depth 10 seldepth 14 multipv 1 score cp 55 lowerbound wdl 90 890 20 nodes 15000 "
        "time 35 pv d2d4 d7d5",
        "info depth 11 seldepth 15 multipv 1 score cp 50 nodes 20000 time 50 pv d2d4",
        "info depth 11 seldepth 15 multipv 1 score cp 70 lowerbound nodes 21000 time 55 "
        "pv c2c4",
    ]
    depths = completed_depths(info, (9, 10, 11), last_is_complete=True)
    assert {depth: result.bound for depth, result in depths.items()} == {
        9: None, 10: "lower", 11: None}
    assert (depths[10].score_cp, depths[10].nodes, depths[10].pv) == (55, 15000,
                                                                      ("d2d4", "d7d5"))
    assert (depths[11].score_cp, depths[11].best_move) == (50, "d2d4")


def test_bound_labels_are_stored_counted_and_not_searched_again(
        lake: Lake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stockfish_path: str,
        selfplay_positions: list[dict[str, object]]) -> None:
    """An engine whose last depth-3 line for one position is a bound (a proxy marks it so):
    that depth is labelled with Stockfish's score and bound 'upper', the run's totals say
    so, and the next run has nothing pending."""
    rows = selfplay_positions[:5]
    lake.write("positions", rows)
    bad = sorted(rows, key=lambda r: r["position_key"])[2]
    engine = proxy(monkeypatch, tmp_path, str(bad["fen"]), "bound", stockfish_path)
    monkeypatch.setenv("PROXY_ENGINE_DEPTH", "3")
    config = LabelConfig.tiny(depths=(2, 3), engine=engine)
    summary = run_step(LABEL, config, lake)
    assert (summary.positions, summary.labels, summary.errors, summary.bounds) == (5, 10, 0, 1)
    assert "1 labelled from a bound line (labels.bound)" in str(summary)
    labels = {(r["position_key"], r["depth"]): r for r in lake.read("labels").to_pylist()}
    assert [key for key, row in labels.items() if row["bound"]] == [(bad["position_key"], 3)]
    stockfish = UciClient(stockfish_path, LabelConfig().uci_options)
    try:
        fresh = completed_depths(stockfish.search(str(bad["fen"]), "go depth 3", 30).info, (3,),
                                 last_is_complete=True)[3]
    finally:
        stockfish.quit()
    label = labels[(bad["position_key"], 3)]
    assert (label["bound"], label["score_cp"], label["score_mate"]) == (
        "upper", fresh.score_cp, fresh.score_mate)
    assert lake.read("label_errors").num_rows == 0
    again = run_step(LABEL, config, lake)
    assert (again.pending, again.labels) == (0, 0)


def test_a_warehouse_from_before_the_bound_column_is_read_and_extended(
        lake: Lake, selfplay_positions: list[dict[str, object]]) -> None:
    """Labels written before ``labels.bound`` existed (a Delta table made with the old schema,
    as older chesslab made it) read as exact labels through Lake.read and the views; the next
    label run adds the column and its own labels; compacting keeps both."""
    rows = selfplay_positions[:3]
    lake.write("positions", rows)
    old_schema = pa.schema([f for f in table("labels").schema if f.name != "bound"])
    old = pa.table({"position_key": pa.array([rows[0]["position_key"]], pa.int64()),
                    "engine_id": ["old-engine"], "depth": pa.array([2], pa.int32()),
                    "score_cp": pa.array([12], pa.int32()), "run_id": ["old"],
                    "labelled_at": [datetime.now(UTC)]})
    old = pa.table({f.name: old[f.name] if f.name in old.column_names else
                    pa.nulls(1, pa.int64() if f.type == pa.uint64() else f.type)
                    for f in old_schema})
    write_deltalake(str(lake.table_dir("labels")), old, partition_by=["engine_id", "depth"])
    assert lake.read("labels").to_pylist()[0]["bound"] is None
    assert connect(lake).execute("select score_cp, bound from labels").fetchall() == [(12, None)]
    summary = run_step(LABEL, LabelConfig.tiny(depths=(2,)), lake)
    assert summary.labels == 3
    lake.compact("labels")
    stored = connect(lake).execute(
        "select engine_id = 'old-engine', count(*), count(bound) from labels group by 1 "
        "order by 1").fetchall()
    assert stored == [(False, 3, 0), (True, 1, 0)]


def test_mate_scores_from_whites_side(lake: Lake) -> None:
    """Issue 33: a side to move that mates in 1 has score_mate 1; White's view is +1 when
    White moves and -1 when Black moves (python-chess finds each mate in one)."""
    fens = {"black mates": "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq g3 0 2",
            "white mates": "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"}
    rows = []
    for fen in fens.values():
        board = chess.Board(fen)
        mates = 0
        for move in list(board.legal_moves):
            board.push(move)
            mates += board.is_checkmate()
            board.pop()
        assert mates == 1
        rows.append({"position_key": chess.polyglot.zobrist_hash(board), "fen": board.epd(),
                     "source_id": "t"})
    lake.write("positions", rows)
    run_step(LABEL, LabelConfig(depths=(3,), workers=1), lake)
    labels = {r["position_key"]: r for r in lake.read("labels").to_pylist()}
    black, white = (labels[row["position_key"]] for row in rows)
    assert (black["score_mate"], black["white_mate"]) == (1, -1)
    assert (white["score_mate"], white["white_mate"]) == (1, 1)
    assert black["white_mate"] == -black["score_mate"]
    assert black["bound"] is None and white["bound"] is None


def test_batches_shrink_so_workers_finish_together() -> None:
    """Guided self-scheduling: batches cover the pending list in key order, never exceed
    batch_size, shrink towards the end (so no worker idles on a last big batch); one worker
    gets plain batch_size chunks."""
    from pipelines.label.run import MIN_BATCH, split_batches

    pending = list(range(1000))
    batches = split_batches(pending, LabelConfig(workers=2, batch_size=200))  # type: ignore[arg-type]
    sizes = [len(b) for b in batches]
    assert [p for b in batches for p in b] == pending
    assert max(sizes) == 200 and sizes == sorted(sizes, reverse=True)
    assert sizes[-2] == MIN_BATCH and sizes[-1] <= MIN_BATCH
    single = split_batches(pending, LabelConfig(workers=1, batch_size=300))  # type: ignore[arg-type]
    assert [len(b) for b in single] == [300, 300, 300, 100]
    assert all(batches)                                   # no empty batch at the end
    assert [len(b) for b in split_batches(pending[:600], LabelConfig(  # type: ignore[arg-type]
        workers=1, batch_size=300))] == [300, 300]
    assert split_batches([], LabelConfig(workers=2, batch_size=200)) == []


def test_engine_id_hashes_name_version_and_options() -> None:
    """engine_id = name-version-<8 hex>: a different Hash or version is a different engine."""
    from pipelines.label import EngineIdentity

    base = EngineIdentity.from_id_name("Stockfish 15.1", {"Threads": "1", "Hash": "16"})
    same = EngineIdentity.from_id_name("Stockfish 15.1", {"Hash": "16", "Threads": "1"})
    other = EngineIdentity.from_id_name("Stockfish 15.1", {"Threads": "1", "Hash": "32"})
    newer = EngineIdentity.from_id_name("Stockfish 16", {"Threads": "1", "Hash": "16"})
    assert (base.name, base.version) == ("Stockfish", "15.1")
    assert base.engine_id == same.engine_id == "stockfish-15.1-563d6074"
    assert other.engine_id.startswith("stockfish-15.1-") and other.engine_id != base.engine_id
    assert newer.engine_id.startswith("stockfish-16-")
    assert EngineIdentity.from_id_name("Fairy Max", {}).engine_id.startswith("fairy-max-")
