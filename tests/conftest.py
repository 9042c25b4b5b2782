"""Shared fixtures: a fresh warehouse home per test, one Prefect test harness per session."""
from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import chess.pgn
import chess.polyglot
import pytest

FIXTURES = Path(__file__).parent / "fixtures"
STOCKFISH = shutil.which("stockfish") or "/usr/games/stockfish"


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
    from flows.runtime import configure_prefect

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
