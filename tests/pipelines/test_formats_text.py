"""Plain text training data (bullet/marlinflow ``FEN | score | result`` and the bracketed
spelling) and EPD ``ce``/``bm``/``acd``/``c9`` lines as labels under the engine identity the
user names; FENs keyed in compiled code exactly as python-chess keys them; bad lines
recorded with their line numbers, the rest imported, totals agreeing."""
from __future__ import annotations

import random
from pathlib import Path

import chess
import chess.polyglot
import pyarrow as pa
import pytest

from flows.cli import main as cli_main
from flows.ingest import INGEST, IngestJob
from flows.step import run_step
from pipelines.formats.fens import REASONS, fen_keys
from pipelines.ingest import IngestConfig, IngestError, discover_sources
from warehouse import Lake, connect

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"


def white_view(fen: str, score: int, result: float) -> tuple[int, float]:
    """(side to move's score, side to move's result) of White's score and result."""
    return (score, result) if chess.Board(fen).turn == chess.WHITE else (-score, 1 - result)


def expected(path: Path) -> dict[int, tuple[int, int, float]]:
    """key -> (score_cp, white_cp, result) from the file, read with python-chess."""
    out = {}
    for line in path.read_text().splitlines():
        fen, score, result = (part.strip() for part in line.split("|"))
        key = chess.polyglot.zobrist_hash(chess.Board(fen))
        own, own_result = white_view(fen, int(score), float(result))
        out[key] = (own, int(score), own_result)
    return out


def stored(lake: Lake, engine_id: str) -> dict[int, tuple[int, int, float]]:
    rows = connect(lake).execute("select position_key, score_cp, white_cp, result from labels "
                                 "where engine_id = $e", {"e": engine_id}).fetchall()
    return {key: (cp, white, result) for key, cp, white, result in rows}


def test_fen_keys_match_python_chess_on_random_positions() -> None:
    """Compiled keys, normalised FENs and sides equal python-chess's zobrist_hash, epd() and
    turn on 3,000 positions of random games (en passant squares, castling rights included);
    FENs python-chess refuses are refused with the reason."""
    rng = random.Random(11)
    fens = []
    while len(fens) < 3000:
        board = chess.Board()
        for _ in range(rng.randrange(1, 120)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
            fens.append(board.fen())
    keys, normalised, sides, status = fen_keys(pa.array(fens))
    boards = [chess.Board(f) for f in fens]
    assert keys.tolist() == [chess.polyglot.zobrist_hash(b) for b in boards]
    assert normalised.to_pylist() == [b.epd() for b in boards]
    assert sides.tolist() == [0 if b.turn else 1 for b in boards] and not status.any()
    bad = ["8/8/8/8/8/8/8/8 w - - 0 1", "4k3/8/8/8/8/8/8/4K3 x - - 0 1", "P3k3/8/8/8/8/8/8/4K3 w - -",
           "4k3/4R3/8/8/8/8/8/4K3 w - -", "4k3/8/8/8/8/8/8/4K3 w - - 0 1 7", None]
    status = fen_keys(pa.array(bad))[3]
    assert [REASONS[s] for s in status] == [
        "need exactly one king per side", "expected 'w' or 'b' for turn in fen",
        "pawns on the back rank", "the side not to move is in check",
        "expected 1 to 6 fields in fen", "no FEN"]
    for fen in bad[:4]:
        with pytest.raises(ValueError):
            board = chess.Board(fen)
            if board.status() & ~chess.STATUS_VALID:
                raise ValueError(board.status())


def test_text_lines_become_labels_from_the_side_to_moves_view(tmp_path: Path) -> None:
    """bullet.txt: White's scores and results stored from the side to move's view (and
    White's), at --depth, under --engine-id, with nnue_examples giving the result."""
    path = FIXTURES / "bullet.txt"
    lake = Lake(tmp_path / "home")
    [summary] = run_step(INGEST, IngestJob((path,), IngestConfig(workers=1, engine_id="sf-d9", depth=9,
                                                        format="text")), lake)
    assert (summary.records, summary.labels, summary.errors) == (5, 5, 0)
    assert stored(lake, "sf-d9") == expected(path)
    rows = connect(lake).execute("select distinct depth, run_id from labels").fetchall()
    assert rows == [(9, summary.source_id)]
    examples = connect(lake).execute(
        "select fen, score_cp, result from nnue_examples order by fen").fetchall()
    assert ("r5k1/8/8/8/8/8/5PPP/6K1 b - -", 950, 1.0) in examples


def test_the_bracketed_spelling_reads_the_same_labels(tmp_path: Path) -> None:
    """``FEN [result] score`` and ``FEN score [result]`` give the labels the pipe form gives."""
    lake = Lake(tmp_path / "home")
    run_step(INGEST, IngestJob((FIXTURES / "bullet_brackets.txt",), IngestConfig(
        workers=1, engine_id="b", format="text")), lake)
    piped = expected(FIXTURES / "bullet.txt")
    got = stored(lake, "b")
    assert len(got) == 3 and all(got[key] == piped[key] for key in got)


def test_bad_text_lines_are_recorded_and_the_rest_imported(tmp_path: Path) -> None:
    """A score that is not a number, an illegal FEN, a result of 2.0, a line of two fields:
    each an error at its line; the three good lines stored; the tables agree."""
    lake = Lake(tmp_path / "home")
    [summary] = run_step(INGEST, IngestJob((FIXTURES / "bullet_errors.txt",), IngestConfig(
        workers=1, engine_id="x", format="text", flush_records=2, block_bytes=100)), lake)
    con = connect(lake)
    errors = con.execute("select line, kind, message from ingest_errors order by line").fetchall()
    assert errors == [
        (2, "bad_score", "score is not a whole number of centipawns: '+0.4'"),
        (3, "bad_fen", "expected 'w' or 'b' for turn in fen: "
                       "'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR x KQkq - 0 1'"),
        (6, "bad_result", "result is not 1.0, 0.5 or 0.0: '2.0'"),
        (7, "bad_record", "expected 'FEN | score | result' or 'FEN [result] score', got "
                          "'6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 40 | 1200'")]
    assert (summary.records, summary.labels, summary.errors) == (6, 2, 4)
    assert con.execute("select count(*) from labels").fetchone() == (2,)
    assert con.execute("select records, labels, errors from sources").fetchone() == (6, 2, 4)


def test_a_txt_file_of_training_data_is_told_from_a_fen_list(tmp_path: Path) -> None:
    """A .txt file whose first line has '|' is text training data; a FEN per line is a FEN
    list; text without --engine-id is refused before anything is written, naming the file."""
    data, fens = tmp_path / "data.txt", tmp_path / "list.txt"
    data.write_text((FIXTURES / "bullet.txt").read_text())
    fens.write_text("4k3/8/8/8/8/8/8/4K3 w - - 0 1\n")
    assert [s.format for s in discover_sources([data, fens])] == ["text", "fen"]
    with pytest.raises(IngestError, match="data.txt.*--engine-id"):
        run_step(INGEST, IngestJob((data,), IngestConfig(workers=1)), Lake(tmp_path / "home"))
    assert not (tmp_path / "home" / "lake" / "sources").exists()


def test_epd_ce_lines_are_labels(tmp_path: Path) -> None:
    """labels.epd: ce (side to move), bm and pv in UCI, acd as the depth, acn as nodes, the
    c9/c0 result (White's view) from the side to move's; a line without ce is no label; a ce
    that is not a number is an error at its line (its position is still stored)."""
    lake = Lake(tmp_path / "home")
    [summary] = run_step(INGEST, IngestJob((FIXTURES / "labels.epd",), IngestConfig(workers=1)), lake)
    con = connect(lake)
    rows = con.execute("select score_cp, white_cp, depth, best_move, pv, nodes, result, engine_id "
                       "from labels order by depth").fetchall()
    assert rows == [(-40, 40, 18, "c7c5", ["c7c5", "g1f3", "d7d6"], 250000, 0.5, "epd"),
                    (29, 29, 20, "f1b5", None, None, 1.0, "epd")]
    assert summary.labels == 2 and summary.records == 4
    kinds = con.execute("select line, kind from ingest_errors order by kind").fetchall()
    assert (4, "bad_score") in kinds
    assert con.execute("select count(*) from positions").fetchone() == (4,)


def test_cli_format_flag_reads_any_suffix(home: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """`--format text` reads a file whatever its name; a bad --format is a one-line error."""
    odd = tmp_path / "scores.data"
    odd.write_text((FIXTURES / "bullet.txt").read_text())
    assert cli_main(["ingest", "--no-prefect", "--workers", "1", "--format", "text",
                     "--engine-id", "sf", str(odd)]) == 0
    assert connect(Lake(home)).execute("select count(*) from labels").fetchone() == (5,)
    assert cli_main(["ingest", "--no-prefect", "--format", "csv", str(odd)]) == 2
    assert "format must be one of" in capsys.readouterr().err


# issue 48 §3: bullet_by_hand.txt's labels, worked out by hand from bulletformat's README
# (score and result White's): (FEN as stored, score_cp, white_cp, result), side to move's view.
BULLET_BY_HAND = [
    # Black to move: White's 150 is Black's -150, White's win Black's loss
    ("4k2r/1P6/8/8/3p4/8/4P3/4K3 b k -", -150, 150, 0.0),
    # the en passant square stays: d4xe3 is legal
    ("5rk1/1P6/8/8/3pP3/8/8/4K3 b - e3", -120, 120, 0.0),
    # the en passant square goes: no white pawn can take on d6
    ("rnbqkbnr/ppp1pppp/8/3p4/8/P7/1PPPPPPP/RNBQKBNR w KQkq -", -30, -30, 0.5),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq -", 35, 35, 0.0),
    ("8/1P6/8/8/8/8/6p1/K6k w - -", -900, -900, 0.0),
    ("8/1P6/8/8/8/8/6p1/K6k b - -", 900, -900, 1.0),
    # a castling right without its rook is dropped
    ("4k3/8/8/8/8/8/8/4K2R w K -", 410, 410, 1.0),
]


def test_bullet_text_written_by_hand_imports_as_its_documented_labels(tmp_path: Path) -> None:
    """Issue 48 §3: every field of every line against values worked out by hand: White's
    scores and results turned to the side to move's for Black, FENs as python-chess writes
    them (en passant only when legal, castling only with its rook), no move counters."""
    lake = Lake(tmp_path / "home")
    [summary] = run_step(INGEST, IngestJob((FIXTURES / "bullet_by_hand.txt",), IngestConfig(
        workers=1, engine_id="sf", depth=9, format="text")), lake)
    assert (summary.records, summary.labels, summary.errors) == (7, 7, 0)
    rows = connect(lake).execute(
        "select p.fen, l.score_cp, l.white_cp, l.result, l.score_mate, l.white_mate, "
        "l.best_move, l.depth from labels l join positions p using (position_key)").fetchall()
    assert sorted(rows) == sorted(row + (None, None, None, 9) for row in BULLET_BY_HAND)


def test_bytes_that_are_not_utf8_make_their_line_an_error_only(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 in a FEN and a line of nothing else: each is an error at its
    line (the bytes shown as U+FFFD), the lines around them stored."""
    path = tmp_path / "bytes.txt"
    path.write_bytes(b"8/8/8/8/8/8/8/K6k w - - 0 1 | 25 | 0.5\n"
                     b"8/8/8/8/8/8/8/K6\xffk w - - 0 1 | 30 | 1.0\n"
                     b"\xff\xfe\n"
                     b"8/8/8/8/8/8/8/K5k1 b - - 0 1 | -7 | 0.0\n")
    lake = Lake(tmp_path / "home")
    [summary] = run_step(INGEST, IngestJob((path,), IngestConfig(
        workers=1, format="text", engine_id="x")), lake)
    con = connect(lake)
    assert con.execute("select line, kind, message from ingest_errors order by line").fetchall() \
        == [(2, "bad_fen", "bad board in fen: '8/8/8/8/8/8/8/K6\ufffdk w - - 0 1'"),
            (3, "bad_record", "expected 'FEN | score | result' or 'FEN [result] score', got "
                              "'\ufffd\ufffd'")]
    assert sorted(con.execute("select score_cp, white_cp, result from labels").fetchall()) == \
        [(7, -7, 1.0), (25, 25, 0.5)]
    assert (summary.records, summary.labels, summary.errors) == (4, 2, 2)


def test_a_block_s_errors_come_in_line_order() -> None:
    """A block whose lines go wrong in the reverse of the order the reader checks them (the
    result, then the score, then the shape): its errors are in line order, as they print."""
    from pipelines.formats.blocks import TextBlock
    from pipelines.formats.text import parse_block

    data = (b"8/8/8/8/8/8/8/K6k w - - 0 1 | 25 | 2.0\n"
            b"8/8/8/8/8/8/8/K6k w - - 0 1 | x | 1.0\n"
            b"8/8/8/8/8/8/8/K6k w - - 0 1\n")
    block = parse_block(TextBlock(data, 10, 0, len(data)))
    assert [(e["line"], e["kind"]) for e in block.errors] == \
        [(10, "bad_result"), (11, "bad_score"), (12, "bad_record")]
    assert block.records == 3 and block.fens is not None and len(block.fens) == 0


# Every spelling of a result the format's readers write (bullet: 1.0 0.5 0.0; marlinflow
# and the bracketed variant: 1, 0, 1-0, 0-1, 1/2-1/2, and decimals of any length), White's:
# worked out by hand; the rest are no result.
RESULT_SPELLINGS = {"1.0": 1.0, "1": 1.0, "1-0": 1.0, "1.000": 1.0, "0.5": 0.5, ".5": 0.5,
                    "0.50": 0.5, "0.500": 0.5, "1/2-1/2": 0.5, "0.0": 0.0, "0": 0.0,
                    "0-1": 0.0, "0.00": 0.0}
NOT_RESULTS = ["2.0", "0.25", "1.5", "-1", "draw", "1/2", "0."]


def black_to_move(index: int) -> str:
    """A position of its own for each index below 24: White's king on a1, Black's on a
    square of ranks 8 to 6, Black to move."""
    rank, file = divmod(index, 8)
    row = (f"{file}" if file else "") + "k" + (f"{7 - file}" if file < 7 else "")
    return "/".join(["8"] * rank + [row] + ["8"] * (6 - rank) + ["K7"]) + " b - - 0 1"


def test_every_spelling_of_a_result_and_no_other(tmp_path: Path) -> None:
    """Each spelling above as White's result of a position with Black to move (stored as
    Black's: 1 - White's), the two shapes of the format mixed in one file; anything else a
    bad_result naming it."""
    spellings = [*RESULT_SPELLINGS, *NOT_RESULTS]
    fens = [black_to_move(i) for i in range(len(spellings))]
    lines = [f"{fen} | 5 | {spelling}" if i % 2 else f"{fen} [{spelling}] 5"
             for i, (fen, spelling) in enumerate(zip(fens, spellings, strict=True))]
    path = tmp_path / "results.txt"
    path.write_text("\n".join(lines) + "\n")
    lake = Lake(tmp_path / "home")
    run_step(INGEST, IngestJob((path,), IngestConfig(workers=1, format="text", engine_id="x")),
             lake)
    con = connect(lake)
    stored = dict(con.execute("select position_key, result from labels").fetchall())
    assert stored == {chess.polyglot.zobrist_hash(chess.Board(fen)): 1.0 - white
                      for fen, white in zip(fens, RESULT_SPELLINGS.values(), strict=False)}
    errors = con.execute("select line, kind, message from ingest_errors order by line").fetchall()
    assert errors == [(len(RESULT_SPELLINGS) + 1 + i, "bad_result",
                       f"result is not 1.0, 0.5 or 0.0: {spelling!r}")
                      for i, spelling in enumerate(NOT_RESULTS)]


def test_a_quoted_value_is_its_start_when_long() -> None:
    """Messages quote a bad value whole up to 120 characters, else its first 120 and its
    length; a missing value is null."""
    from pipelines.formats.records import quoted

    assert quoted(None) == "null"
    assert quoted("x" * 120) == repr("x" * 120)
    assert quoted("x" * 1121) == repr("x" * 120) + "... (1,121 characters)"


def test_a_clash_with_a_stored_fen_names_the_line_of_the_record(tmp_path: Path) -> None:
    """Keys are real Zobrist keys, so a clash is made by hand: the key of line 3's position
    stored before with another FEN. The import keeps the stored FEN and records the
    collision at line 3 of the file."""
    fens = [black_to_move(i) for i in range(3)]
    lake = Lake(tmp_path / "home")
    key = chess.polyglot.zobrist_hash(chess.Board(fens[2]))
    other = "8/8/8/8/8/8/8/K6k w - -"
    lake.write("positions", [{"position_key": key, "fen": other, "source_id": "by-hand",
                               "first_seen": None, "in_check": False}])
    path = tmp_path / "three.txt"
    path.write_text("".join(f"{fen} | 5 | 0.5\n" for fen in fens))
    [summary] = run_step(INGEST, IngestJob((path,), IngestConfig(workers=1, format="text",
                                                                 engine_id="x")), lake)
    assert summary.collisions == 1
    errors = [(e["path"], e["line"], e["kind"]) for e in lake.read("ingest_errors").to_pylist()]
    assert errors == [(str(path), 3, "collision")]
