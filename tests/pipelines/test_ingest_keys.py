"""Game keys: every game record of a file is a game; the same game in two files is one.

Expected counts come from python-chess reading the same files (``chess.pgn.read_game``), and
the expected key of a first occurrence from hashing the tags and moves here, by hand.
"""
from __future__ import annotations

import hashlib
import io
import json
from collections import Counter
from pathlib import Path

import chess.pgn
import pytest

from flows.cli import main as cli_main
from flows.ingest import INGEST, IngestJob
from flows.step import run_step
from pipelines.ingest import IngestConfig
from warehouse import Lake, connect

FIXTURES = Path(__file__).parent.parent / "fixtures" / "repeats"
REPEATS = FIXTURES / "engine_match_repeats.pgn"
CROSSTABLE = FIXTURES / "crosstable_results.pgn"


def python_chess_records(path: Path) -> list[tuple[dict[str, str], list[str]]]:
    """(tags, main-line SANs) of every game python-chess reads in ``path``."""
    records = []
    with open(path, encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            board, sans = game.board(), []
            for move in game.mainline_moves():
                sans.append(board.san(move))
                board.push(move)
            records.append((dict(game.headers), sans))
    return records


def hand_key(tags: dict[str, str], sans: list[str]) -> str:
    """The first occurrence's key as the module documents it: blake2b-128 of the tags as a
    sorted JSON object, a line feed and the SANs (without check marks) joined by spaces."""
    text = json.dumps(tags, sort_keys=True, ensure_ascii=False) + "\n" + " ".join(
        san.rstrip("+#") for san in sans)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def counts(lake: Lake) -> tuple[int, int, int]:
    """(sum of sources.games, sum of sources.duplicates, rows in the games view)."""
    con = connect(lake)
    games, duplicates = con.execute("select sum(games), sum(duplicates) from sources").fetchone()
    return int(games), int(duplicates), con.execute("select count(*) from games").fetchone()[0]


@pytest.mark.parametrize("config", [IngestConfig.tiny(), IngestConfig(workers=2, chunk_games=2,
                                                                       flush_games=4, pool_from_mb=0)],
                         ids=["in-process", "two-workers"])
@pytest.mark.parametrize("path", [REPEATS, CROSSTABLE], ids=["engine-match", "crosstable"])
def test_identical_records_are_each_a_game(home: Path, path: Path, config: IngestConfig) -> None:
    """Issue 32: a file with identical records (an engine match replaying games, a crosstable
    export of result-only records with repeated pairings) keeps every record as a game,
    whether its repeats fall in one chunk or across chunks and workers: the printed count,
    sources.games and the games table agree with python-chess, and so do games per player
    and plies."""
    records = python_chess_records(path)
    distinct = {(json.dumps(tags, sort_keys=True), tuple(sans)) for tags, sans in records}
    assert len(distinct) < len(records)  # the fixture does repeat records
    lake = Lake(home)
    [summary] = run_step(INGEST, IngestJob((path,), config), lake)
    assert (summary.games, summary.duplicates, summary.errors) == (len(records), 0, 0)
    assert summary.repeats == len(records) - len(distinct)
    assert summary.plies == sum(len(sans) for _, sans in records)
    assert counts(lake) == (len(records), 0, len(records))
    con = connect(lake)
    white = dict(con.execute("select white, count(*) from games group by white").fetchall())
    assert white == dict(Counter(tags["White"] for tags, _ in records))
    assert con.execute("select count(*) from moves").fetchone() == (summary.plies,)
    indexes = [row[0] for row in con.execute(
        "select game_index from games order by game_index").fetchall()]
    assert indexes == list(range(len(records)))


def test_first_occurrence_keeps_the_old_key_and_reingest_gives_the_same_keys(
        tmp_path: Path) -> None:
    """A record met for the first time in its file has the key every game had before
    (existing warehouses stay consistent); later identical records get other keys; ingesting
    the file again into a new warehouse, cut into other chunks, gives the same keys."""
    records = python_chess_records(REPEATS)
    keys = []
    for number, config in enumerate((IngestConfig.tiny(), IngestConfig(workers=2, chunk_games=4,
                                                                      flush_games=4, pool_from_mb=0))):
        lake = Lake(tmp_path / f"home{number}")
        run_step(INGEST, IngestJob((REPEATS,), config), lake)
        keys.append(dict(connect(lake).execute("select game_index, game_id from games")
                         .fetchall()))
    assert keys[0] == keys[1]
    seen: set[str] = set()
    for index, (tags, sans) in enumerate(records):
        expected = hand_key(tags, sans)
        assert (keys[0][index] == expected) == (expected not in seen)
        seen.add(expected)


def write_game(path: Path, tags: list[tuple[str, str]], movetext: str) -> Path:
    path.write_text("".join(f'[{name} "{value}"]\n' for name, value in tags)
                    + f"\n{movetext}\n\n")
    return path


MORPHY = [("Event", "Paris"), ("Site", "Paris FRA"), ("Date", "1858.??.??"),
          ("White", "Morphy"), ("Black", "Duke Karl / Count Isouard"), ("Result", "1-0")]
OPERA = ("1. e4 e5 2. Nf3 d6 3. d4 Bg4 4. dxe5 Bxf3 5. Qxf3 dxe5 6. Bc4 Nf6 7. Qb3 Qe7 "
         "8. Nc3 c6 9. Bg5 b5 10. Nxb5 cxb5 11. Bxb5+ Nbd7 12. O-O-O Rd8 13. Rxd7 Rxd7 "
         "14. Rd1 Qe6 15. Bxd7+ Nxd7 16. Qb8+ Nxb8 17. Rd8# 1-0")


def test_tags_in_another_order_are_the_same_game(home: Path, tmp_path: Path) -> None:
    """Issue 33: one game, its tags permuted, in two files is one game and one duplicate; the
    same moves with other tags are two games."""
    first = write_game(tmp_path / "first.pgn", MORPHY, OPERA)
    permuted = write_game(tmp_path / "permuted.pgn", MORPHY[::-1], OPERA)
    other = write_game(tmp_path / "other.pgn", [*MORPHY[:3], ("White", "Morphy, P."),
                                                *MORPHY[4:]], OPERA)
    lake = Lake(home)
    summaries = run_step(INGEST, IngestJob((first, permuted, other), IngestConfig.tiny()), lake)
    assert [(s.games, s.duplicates) for s in summaries] == [(1, 0), (1, 1), (1, 0)]
    assert counts(lake) == (3, 1, 2)


def test_same_game_in_two_files_merges_by_occurrence(home: Path, tmp_path: Path) -> None:
    """A game once in one file and twice in another: the second file's first copy is the same
    game (a duplicate, counted and stored once), its second copy a new game."""
    once = write_game(tmp_path / "once.pgn", MORPHY, OPERA)
    twice = tmp_path / "twice.pgn"
    twice.write_text(once.read_text() * 2)
    lake = Lake(home)
    summaries = run_step(INGEST, IngestJob((once, twice), IngestConfig.tiny()), lake)
    assert [(s.games, s.duplicates, s.repeats) for s in summaries] == [(1, 0, 0), (2, 1, 1)]
    assert counts(lake) == (3, 1, 2)
    assert connect(lake).execute("select count(*) from moves").fetchone() == (2 * 33,)


def test_console_shows_repeats_and_duplicates(home: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The summary says how many records were merged into games stored from another file and
    how many repeat a record of their own file, and that the games table holds the rest."""
    once = write_game(tmp_path / "once.pgn", MORPHY, OPERA)
    twice = tmp_path / "twice.pgn"
    twice.write_text(once.read_text() * 2)
    assert cli_main(["ingest", "--no-prefect", "--workers", "1", str(once), str(twice)]) == 0
    out = capsys.readouterr().out
    assert "1 of the 3 games were already stored from another file" in out
    assert "1 record repeats an earlier record of its own file" in out
    assert "the games table holds 2 new games" in out
    with io.StringIO(out) as lines:
        total = [line for line in lines if line.startswith("total")][0].split()
    assert total[1] == "3" and total[6] == "1"
