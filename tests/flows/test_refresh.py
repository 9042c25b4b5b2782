"""``refresh``: ingest a folder's new files, then label what is new, with and without Prefect."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flows.cli import main
from flows.refresh import refresh
from flows.step import LocalRunner
from pipelines.ingest import IngestConfig
from pipelines.label import LabelConfig
from warehouse import Lake, connect

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "label_engines"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder holding the terminal-positions EPD (the tests add Morphy's Opera game)."""
    path = tmp_path / "incoming"
    path.mkdir()
    shutil.copy(FIXTURES / "terminal.epd", path / "terminal.epd")
    return path


def label_count(home: Path) -> int:
    return connect(Lake(home)).execute("select count(*) from labels").fetchone()[0]


def test_refresh_labels_new_files_only(runner: LocalRunner, home: Path, folder: Path,
                                       stockfish_path: str) -> None:
    """First refresh: 4 EPD positions x 2 depths. A new file in the folder: only its new
    positions are labelled; the old file is skipped by its content hash."""
    config = LabelConfig.tiny(depths=(2, 3), limit=None, workers=2)
    ingested, labelled = refresh(runner, str(folder), config, Lake(home), IngestConfig.tiny())
    assert [s.new_positions for s in ingested] == [4]
    assert (labelled.positions, labelled.labels) == (4, 8)

    shutil.copy(FIXTURES / "opera.pgn", folder / "games.pgn")
    ingested, labelled = refresh(runner, str(folder), config, Lake(home), IngestConfig.tiny())
    by_path = {Path(s.path).name: s for s in ingested}
    assert by_path["terminal.epd"].skipped and not by_path["games.pgn"].skipped
    new = by_path["games.pgn"].new_positions
    assert new == 34 and labelled.positions == new and label_count(home) == 2 * (new + 4)


def test_refresh_cli(home: Path, folder: Path, stockfish_path: str,
                     capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI prints both summaries and rejects a bad folder."""
    config = LabelConfig.tiny(depths=(2,), limit=None)
    ingested, labelled = refresh(LocalRunner(), str(folder), config, Lake(home),
                                 IngestConfig.tiny())
    assert (ingested[0].new_positions, labelled.labels) == (4, 4)
    assert main(["--home", str(home), "refresh", str(folder), "--no-prefect", "--depths", "2",
                 "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "already ingested" in out and "0/0 positions labelled" in out
    assert main(["--home", str(home), "refresh", str(folder / "missing"), "--no-prefect"]) == 2
    assert "missing" in capsys.readouterr().err
