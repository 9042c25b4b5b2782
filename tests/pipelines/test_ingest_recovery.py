"""No silent data loss in PGN ingest: broken games are recorded and cut off from their
neighbours, and the same game in two files is stored once.
"""
from __future__ import annotations

import io
from pathlib import Path

import chess.pgn
import pyarrow.parquet as pq
import pytest

from flows.cli import main as cli_main
from flows.ingest import INGEST, IngestJob
from flows.step import run_step
from pipelines.ingest import IngestConfig
from pipelines.ingest.pgn import split_games
from warehouse import Lake, connect

PGN = Path(__file__).parent.parent / "fixtures" / "pgn"
BROKEN = PGN / "broken_games.pgn"


@pytest.fixture
def lake(home: Path) -> Lake:
    return Lake(home)


def parquet_rows(lake: Lake, table: str) -> int:
    """Rows in the table's Parquet files, read with pyarrow (duplicate keys included)."""
    return sum(pq.read_metadata(part).num_rows for part in lake.parts(table))


def test_unclosed_comment_and_variation_break_only_their_own_game(lake: Lake) -> None:
    """An unclosed `{` used to swallow every later game (no error, exit 0) and an unclosed `(`
    to cut its game short silently. Each is now an ingest_errors row with the game's index and
    the line where it opened; the four other games, one of them after a missing blank line,
    are read whole."""
    [summary] = run_step(INGEST, IngestJob((BROKEN,), IngestConfig.tiny()), lake)
    assert (summary.games, summary.plies, summary.errors) == (6, 21 + 19 + 47 + 8 + 33 + 7, 2)
    con = connect(lake)
    errors = con.execute("select game_index, line, kind, message from ingest_errors "
                         "order by game_index").fetchall()
    assert errors == [
        (1, 19, "unclosed_comment", "unclosed { comment opened on line 19: the game ends at "
                                    "line 24, where the next game's tags start"),
        (3, 43, "unclosed_variation", "unclosed ( variation opened on line 43: the main line "
                                      "stops at ply 8")]
    games = con.execute("select game_index, line, white, plies, error is not null from games "
                        "order by game_index").fetchall()
    assert games == [(0, 1, "Reti, Richard", 21, False),
                     (1, 11, "Lasker, Edward", 19, True),
                     (2, 24, "Capablanca, Jose Raul", 47, False),
                     (3, 36, "Legall de Kermeur", 8, True),
                     (4, 46, "Paul Morphy", 33, False),
                     (5, 56, None, 7, False)]
    last = con.execute("select san from moves join games using (game_id) "
                       "where game_index = 2 order by ply desc limit 1").fetchone()
    assert last == ("Rxf8#",)


def test_python_chess_loses_the_games_after_the_unclosed_comment() -> None:
    """The bug this guards, as python-chess reads the same file: the unclosed comment runs on
    to the closing brace in the Legall game, so the Capablanca game vanishes without an error."""
    handle = io.StringIO(BROKEN.read_text())
    whites = []
    while (game := chess.pgn.read_game(handle)) is not None:
        whites.append(game.headers.get("White"))
    assert "Capablanca, Jose Raul" not in whites and len(whites) < 6


def test_unclosed_comment_in_the_last_game_runs_to_the_end() -> None:
    """With no next game to stop it, the comment runs to the end of the file and says so."""
    text = '[Event "a"]\n\n1. e4 e5 {never closed\n\n2. Nf3 Nc6 *\n'
    [game] = split_games(io.StringIO(text))
    assert [(p.line, p.kind, p.message) for p in game.problems] == [
        (3, "unclosed_comment", "unclosed { comment opened on line 3: it runs to the end of "
                                "the file")]


def test_same_game_in_two_files_is_stored_once(lake: Lake) -> None:
    """A truncated archive, then the complete one: the three games both hold are stored once.
    The second file counts them as duplicates and writes no games, moves or positions rows for
    them (counted in the Parquet files, not through the deduplicating views)."""
    config = IngestConfig.tiny()
    [cut] = run_step(INGEST, IngestJob((PGN / "truncated.pgn.zst",), config), lake)
    before = {t: parquet_rows(lake, t) for t in ("games", "moves", "positions")}
    [full] = run_step(INGEST, IngestJob((PGN / "quirks_complete.pgn.zst",), config), lake)
    [plain] = run_step(INGEST, IngestJob((PGN / "quirks.pgn",), config), Lake(lake.home.parent / "plain"))
    assert (cut.games, cut.duplicates, full.games, full.duplicates) == (3, 0, 5, 3)
    assert cut.plies + full.plies == plain.plies
    after = {t: parquet_rows(lake, t) for t in ("games", "moves", "positions")}
    assert after == {"games": 5, "moves": plain.plies, "positions": plain.new_positions}
    assert after["moves"] - before["moves"] == full.plies
    con = connect(lake)
    assert con.execute("select count(*), count(distinct game_id) from games").fetchone() == (5, 5)
    assert con.execute("select path like '%truncated.pgn.zst', count(*) from games "
                       "join sources using (source_id) group by all order by all").fetchall() \
        == [(False, 2), (True, 3)]
    assert con.execute("select duplicates, games from sources order by games").fetchall() == [
        (0, 3), (3, 5)]


def test_games_of_an_uncommitted_source_are_written_again(lake: Lake) -> None:
    """A killed ingest leaves games without their file's sources row (and maybe without their
    positions): those games are no duplicates, so the rerun writes every row again and loses
    nothing. (The kill is simulated by deleting the sources and positions rows in Delta
    commits: the games stay, committed, as a killed run leaves them.)"""
    config = IngestConfig.tiny()
    run_step(INGEST, IngestJob((PGN / "quirks.pgn",), config), lake)
    for name in ("sources", "positions"):
        lake.delta(name).delete()  # type: ignore[union-attr]
    [again] = run_step(INGEST, IngestJob((PGN / "quirks.pgn",), config), lake)
    assert (again.games, again.duplicates) == (5, 0)
    assert again.new_positions == parquet_rows(lake, "positions") > 0


def test_cli_summary_shows_errors_and_duplicates(home: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """`chesslab ingest` prints each file's errors and duplicates; bad games are no reason to
    fail the run (exit 0)."""
    assert cli_main(["ingest", "--no-prefect", "--workers", "1", str(BROKEN),
                     str(PGN / "truncated.pgn.zst"), str(PGN / "quirks_complete.pgn.zst")]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].split()[-4:] == ["errors", "duplicates", "labels", "seconds"]
    rows = {line.split()[0].rsplit("/", 1)[-1]: line.split()[1:] for line in lines[1:]}
    assert rows["broken_games.pgn"][:6] == ["6", "0", "135", rows["broken_games.pgn"][3], "2", "0"]
    assert rows["quirks_complete.pgn.zst"][0] == "5" and rows["quirks_complete.pgn.zst"][5] == "3"
    assert rows["total"][4:6] == ["3", "3"]  # the truncation is an error too
