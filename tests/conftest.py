"""Shared fixtures: a fresh warehouse home per test, one Prefect test harness per session.

Under CI (``CHESSLAB_CI=1``, set by ``.ci/run``) a skipped test is a failure: a missing
Stockfish, Chromium, Gaviota tables or compiled core must not turn the run green. Every run
ends with a line counting the tests collected, deselected, run and skipped, and the time it
took (``.ci/run`` prints it instead of a count written into its comment, which went stale)."""
from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import chess.pgn
import chess.polyglot
import pytest

FIXTURES = Path(__file__).parent / "fixtures"
CI_ENV = "CHESSLAB_CI"
FAILED_SKIPS: list[str] = []   # the node ids of the skips turned into failures this run
STARTED = time.monotonic()     # when pytest imported this file: the run's start
SELECTED: list[int] = [0]      # the tests left to run once collection and -m/-k are done


def in_ci() -> bool:
    return os.environ.get(CI_ENV, "") not in ("", "0")


def skip_reason(report: pytest.CollectReport | pytest.TestReport) -> str:
    longrepr = report.longrepr
    return str(longrepr[2]) if isinstance(longrepr, tuple) else str(longrepr)


def fail_skips_in_ci(report: pytest.CollectReport | pytest.TestReport) -> None:
    """Turn a skip into a failure that gives its reason (CI only; xfail stays as it is)."""
    if in_ci() and report.skipped and not hasattr(report, "wasxfail"):
        reason = skip_reason(report).removeprefix("Skipped: ")
        FAILED_SKIPS.append(report.nodeid)
        report.outcome = "failed"
        report.longrepr = f"{CI_ENV}=1: this test would have been skipped: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Iterator[None]:
    outcome = yield
    fail_skips_in_ci(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    outcome = yield
    fail_skips_in_ci(outcome.get_result())


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The counts and the time, on every run: under CI each skip is a failure."""
    stats = terminalreporter.stats
    skipped = len(stats.get("skipped", []))
    note = f", {len(FAILED_SKIPS)} failed as skips ({CI_ENV}=1)" if in_ci() else ""
    deselected = len(stats.get("deselected", []))
    terminalreporter.write_line(
        f"chesslab: {counted(SELECTED[0] + deselected)} collected, {deselected:,} deselected, "
        f"{SELECTED[0]:,} run, {skipped} skipped{note}; {duration(time.monotonic() - STARTED)}")


def pytest_collection_finish(session: pytest.Session) -> None:
    SELECTED[0] = len(session.items)


def counted(count: int) -> str:
    """A count of tests in words.

    >>> counted(1), counted(1549)
    ('1 test', '1,549 tests')
    """
    return f"{count:,} test{'s' if count != 1 else ''}"


def duration(seconds: float) -> str:
    """A run's time, in minutes once it is over a minute.

    >>> duration(7.25), duration(1141.6)
    ('7.2 s', '19 min 2 s')
    """
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s"
# CHESSLAB_STOCKFISH points the tests at another binary (or at none, to see CI fail).
STOCKFISH = os.environ.get("CHESSLAB_STOCKFISH") or shutil.which("stockfish") \
    or "/usr/games/stockfish"


@pytest.fixture(scope="session")
def selfplay_positions() -> list[dict[str, object]]:
    """Distinct positions of tests/fixtures/label_engines/selfplay.pgn (Stockfish self-play and
    Morphy's Opera game) in game order, as ``positions`` rows made with python-chess."""
    rows: dict[int, dict[str, object]] = {}
    with open(FIXTURES / "label_engines" / "selfplay.pgn", encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            board = game.board()
            for move in [None, *game.mainline_moves()]:
                if move is not None:
                    board.push(move)
                key = chess.polyglot.zobrist_hash(board)
                rows.setdefault(key, {"position_key": key, "fen": board.epd(), "source_id": "t"})
    return list(rows.values())


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty chesslab home, also exported as CHESSLAB_HOME."""
    path = tmp_path / "home"
    monkeypatch.setenv("CHESSLAB_HOME", str(path))
    return path


@pytest.fixture(scope="session")
def prefect_harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One temporary Prefect server for the whole session, with its own PREFECT_HOME."""
    os.environ["PREFECT_HOME"] = str(tmp_path_factory.mktemp("prefect_home"))
    from flows.prefect_settings import configure_prefect

    configure_prefect()
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="session")
def stockfish_path() -> str:
    """Stockfish's path; the tests that need it are skipped only when it is truly missing."""
    if not os.access(STOCKFISH, os.X_OK):
        pytest.skip(f"stockfish not installed at {STOCKFISH} (scripts/bootstrap.sh installs it)")
    return STOCKFISH
