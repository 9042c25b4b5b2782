"""Ingest errors a user sees: every game kept with an error is named on the console, and no
stored message carries megabytes of junk input."""
from __future__ import annotations

import logging
from pathlib import Path

import chess
import pytest

from flows.ingest import INGEST, IngestJob
from flows.step import run_step
from pipelines.ingest import IngestConfig
from pipelines.ingest.config import MESSAGE_CHARS, QUOTE_CHARS
from warehouse import Lake, connect

PGN = Path(__file__).parent.parent / "fixtures" / "pgn"
JUNK = 20_000_000


def test_illegal_san_game_is_named_on_the_console(home: Path,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    """malformed.pgn's third game (line 15) plays 3. Ke3, illegal after 1. e4 e5 2. Nf3 Nc6
    (python-chess agrees): the console names the file, line, game and SAN, and says the
    game is kept with its first 4 plies."""
    board = chess.Board()
    for san in ("e4", "e5", "Nf3", "Nc6"):
        board.push_san(san)
    with pytest.raises(chess.IllegalMoveError):
        board.parse_san("Ke3")
    with caplog.at_level(logging.WARNING, logger="pipelines.ingest"):
        run_step(INGEST, IngestJob((PGN / "malformed.pgn",), IngestConfig.tiny()), Lake(home))
    named = [r.getMessage() for r in caplog.records if "'Ke3'" in r.getMessage()]
    assert len(named) == 1
    assert f"{PGN / 'malformed.pgn'}:15: game 2: ply 4: illegal san 'Ke3' in " in named[0]
    assert "kept with the plies before it" in named[0]
    con = connect(Lake(home))
    assert con.execute("select plies from games where game_index = 2").fetchone() == (4,)
    kinds = [r.getMessage().split(": ")[0] for r in caplog.records if ": game " in
             r.getMessage()]
    assert len(kinds) == 5   # two broken tags, the illegal SAN, Atomic, the bad FEN


def test_a_huge_junk_line_is_stored_capped_and_once(home: Path, tmp_path: Path) -> None:
    """A 20 MB broken tag line and a 20 MB FEN tag: each message quotes the start of the
    text once, says how long it was and stays under MESSAGE_CHARS; the game row's error too."""
    good = (PGN / "quirks.pgn").read_text()
    junk = tmp_path / "junk.pgn"
    junk.write_text(good + "\n[" + "x" * JUNK + "\n\n1. e4 e5 1-0\n\n"
                    + '[SetUp "1"]\n[FEN "' + "8/" * (JUNK // 2) + '"]\n\n1. e4 1-0\n\n')
    run_step(INGEST, IngestJob((junk,), IngestConfig.tiny()), Lake(home))
    con = connect(Lake(home))
    rows = con.execute("select kind, message from ingest_errors order by line").fetchall()
    assert [kind for kind, _ in rows] == ["bad_tag", "bad_fen"]
    for _, message in rows:  # the text quoted once: two quotes would pass 2 x QUOTE_CHARS
        assert QUOTE_CHARS < len(message) < min(2 * QUOTE_CHARS, MESSAGE_CHARS)
    assert "(20,000,001 characters)" in rows[0][1]
    assert f"({2 * (JUNK // 2):,} characters)" in rows[1][1]
    [(error,)] = con.execute("select error from games where error is not null").fetchall()
    assert error == rows[1][1]
