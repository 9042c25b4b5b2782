"""The Lichess evaluation database (JSONL, plain and .zst): one position per line, each eval a
label at its depth (first PV's score, best move and line; nodes from knodes), under the
lichess-eval identity; bad lines recorded with their line number and the rest imported; a cut
archive recorded; totals printed, stored and counted in the tables agree."""
from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

import chess
import chess.polyglot
import pytest
import zstandard

from flows.cli import main as cli_main
from flows.ingest import INGEST, IngestJob
from flows.step import run_step
from pipelines.ingest import IngestConfig
from warehouse import Lake, connect

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
EVALS = FIXTURES / "lichess_eval.jsonl"
ERRORS = FIXTURES / "lichess_eval_errors.jsonl"


def expected_labels(path: Path) -> dict[tuple[int, int], tuple]:
    """(key, depth) -> (score_cp, score_mate, white_cp, white_mate, best, pv, nodes), from the
    file with json and python-chess (the first eval of a depth wins, as the table keeps)."""
    out: dict[tuple[int, int], tuple] = {}
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        board = chess.Board(entry["fen"])
        sign = 1 if board.turn == chess.WHITE else -1
        for item in entry["evals"]:
            pv = item["pvs"][0]
            cp, mate = pv.get("cp"), pv.get("mate")
            key = (chess.polyglot.zobrist_hash(board), item["depth"])
            out.setdefault(key, (None if cp is None else sign * cp,
                                 None if mate is None else sign * mate, cp, mate,
                                 pv["line"].split()[0], pv["line"].split(),
                                 item["knodes"] * 1000))
    return out


def stored_labels(lake: Lake) -> dict[tuple[int, int], tuple]:
    rows = connect(lake).execute(
        "select position_key, depth, score_cp, score_mate, white_cp, white_mate, best_move, pv, "
        "nodes from labels where engine_id = 'lichess-eval'").fetchall()
    return {(r[0], r[1]): (r[2], r[3], r[4], r[5], r[6], list(r[7]), r[8]) for r in rows}


def test_each_eval_is_a_label_at_its_depth(tmp_path: Path) -> None:
    """Five lines, eight evals (one a duplicate depth): seven labels, from the side to move's
    view and White's, mates as mates, the positions python-chess's keys and FENs."""
    lake = Lake(tmp_path / "home")
    [summary] = run_step(INGEST, IngestJob((EVALS,), IngestConfig(workers=1)), lake)
    expected = expected_labels(EVALS)
    assert len(expected) == 7
    assert stored_labels(lake) == expected
    assert (summary.format, summary.records, summary.labels, summary.duplicates) == \
        ("lichess-eval", 5, 7, 1)
    fens = {row[0]: row[1] for row in connect(lake).execute(
        "select position_key, fen from positions").fetchall()}
    boards = [chess.Board(json.loads(line)["fen"]) for line in EVALS.read_text().splitlines()]
    assert fens == {chess.polyglot.zobrist_hash(b): b.epd() for b in boards}
    engine = connect(lake).execute("select name, kind from engines "
                                   "where engine_id = 'lichess-eval'").fetchone()
    assert engine == ("lichess-eval", "external")


def test_a_mate_for_black_is_negative_from_whites_view(tmp_path: Path) -> None:
    """``mate: -1`` with Black to move: Black mates in 1, +1 from the side to move's view."""
    lake = Lake(tmp_path / "home")
    run_step(INGEST, IngestJob((EVALS,), IngestConfig(workers=1)), lake)
    key = chess.polyglot.zobrist_hash(chess.Board("r5k1/8/8/8/8/8/5PPP/6K1 b - -"))
    row = connect(lake).execute("select score_mate, white_mate, best_move from labels "
                                "where position_key = $k", {"k": key}).fetchone()
    assert row == (1, -1, "a8a1")


def test_bad_lines_are_recorded_with_their_line_and_the_rest_imported(tmp_path: Path) -> None:
    """Not JSON (line 2), no kings (3), a cp that is a string (4), a cut last line (7): four
    errors naming their lines; lines 1 and 6 imported; counts agree everywhere."""
    lake = Lake(tmp_path / "home")
    [summary] = run_step(INGEST, IngestJob((ERRORS,), IngestConfig(workers=1)), lake)
    con = connect(lake)
    errors = con.execute("select line, kind, message from ingest_errors order by line").fetchall()
    lines = ERRORS.read_text().splitlines()
    assert errors == [
        (2, "bad_json", "not JSON (Expecting value): 'this line is not JSON'"),
        (3, "bad_fen", "need exactly one king per side: '8/8/8/8/8/8/8/8 w - -'"),
        (4, "bad_score", f"cp is not a number: '+0.35': {lines[3][:120]!r}... (122 characters)"),
        (7, "bad_json", f"not JSON (Unterminated string starting at): {lines[6]!r}")]
    assert (summary.records, summary.labels, summary.errors) == (6, 2, 4)
    # the good lines, read by the scanner beside the lines it hands on (Black to move in
    # line 1: White's cp 32 is Black's -32)
    labels = con.execute("select p.fen, l.depth, l.score_cp, l.white_cp, l.best_move "
                         "from labels l join positions p using (position_key)").fetchall()
    assert sorted(labels) == [
        ("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq -", 40, 29, 29, "f1b5"),
        ("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -", 36, -32, 32, "c7c5")]
    assert con.execute("select count(*) from labels").fetchone() == (summary.labels,)
    assert con.execute("select count(*) from positions").fetchone() == (summary.new_positions,)
    assert summary.new_positions == 2
    source = con.execute("select records, labels, errors, new_positions from sources").fetchone()
    assert source == (6, 2, 4, 2)


@pytest.mark.parametrize("suffix", ["zst", "gz"])
def test_a_cut_archive_keeps_every_line_before_the_cut(tmp_path: Path, suffix: str) -> None:
    """A .jsonl.zst or .jsonl.gz cut in its middle: every complete line the archive's bytes
    decompress to (zlib's and zstd's own one-shot decoders say how many) is imported, and a
    truncated error names the line after them; a whole archive gives the plain file's rows.
    Read in the default 4 MB blocks: the lines decompressed before the error in the block
    being read were once lost (all of them, in a file under 4 MB) and counted nowhere."""
    lines = EVALS.read_text().splitlines()
    # 3,000 lines (several zstd blocks), each its own knodes so the archive is not tiny
    data = "".join(lines[i % 5].replace('"knodes": ', f'"knodes": {i + 1}') + "\n"
                   for i in range(3000)).encode()
    if suffix == "zst":
        packed = zstandard.ZstdCompressor(level=3).compress(data)
        cut_bytes = packed[:len(packed) * 2 // 3]
        readable = zstandard.ZstdDecompressor().decompressobj().decompress(cut_bytes)
    else:
        packed = gzip.compress(data)
        cut_bytes = packed[:len(packed) * 2 // 3]
        readable = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(cut_bytes)
    complete = readable.count(b"\n")
    assert 0 < complete < 3000
    whole, cut = tmp_path / f"whole.jsonl.{suffix}", tmp_path / f"cut.jsonl.{suffix}"
    whole.write_bytes(packed)
    cut.write_bytes(cut_bytes)
    lake = Lake(tmp_path / "home")
    full, part = run_step(INGEST, IngestJob((whole, cut), IngestConfig(workers=1)), lake)
    assert (full.records, full.truncated) == (3000, False)
    assert (part.records, part.truncated) == (complete, True)
    row = connect(lake).execute("select line, kind from ingest_errors").fetchone()
    assert row == (complete + 1, "truncated")


def test_cli_reads_jsonl_by_suffix_and_prints_labels(home: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """`chesslab ingest FILE.jsonl` imports it (no --format needed); the table has a labels
    column and a note about the duplicate depth."""
    assert cli_main(["ingest", "--no-prefect", "--workers", "1", str(EVALS)]) == 0
    out = capsys.readouterr().out
    header, row = out.splitlines()[0].split(), out.splitlines()[1].split()
    assert row[header.index("labels") - 1] == "7"   # header has "new positions" as two words
    assert "1 of the 8 labels read from training data were already stored" in out


def test_one_depth_range_in_every_importer(tmp_path: Path) -> None:
    """Issue 48: Lichess evals at depth -5 and 100000 were stored as labels with no error
    (only 2^40 was refused). Every importer takes depths 0 to 1000: a JSONL eval, an EPD
    ``acd`` or a Parquet depth outside them is an error naming the file, its line and the
    depth (the labels around it stored), and ``--depth`` outside them is refused."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipelines.ingest.config import IngestError

    fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -"
    jsonl = tmp_path / "evals.jsonl"
    jsonl.write_text("".join(json.dumps({"fen": fen, "evals": [
        {"pvs": [{"cp": 10, "line": "e7e5"}], "knodes": 1, "depth": d} for d in depths]}) + "\n"
        for depths in ([0], [-5], [100000], [1000], [20, 1001])))
    epd = tmp_path / "labels.epd"
    epd.write_text("".join(f"{fen} ce 10; acd {d};\n" for d in (7, -5, 100000, 1000)))
    parquet = tmp_path / "labels.parquet"
    pq.write_table(pa.table({"fen": [fen] * 3, "score_cp": [10, 10, 10],
                             "depth": pa.array([5, -5, 2 ** 40], pa.int64())}), parquet)
    lake = Lake(tmp_path / "home")
    run_step(INGEST, IngestJob((jsonl, epd, parquet), IngestConfig(workers=1)), lake)
    con = connect(lake)
    errors = con.execute("select path, line, kind, message from ingest_errors "
                         "order by path, line").fetchall()
    assert [(Path(path).name, line, kind) for path, line, kind, _ in errors] == [
        ("evals.jsonl", 2, "bad_depth"), ("evals.jsonl", 3, "bad_depth"),
        ("evals.jsonl", 5, "bad_depth"), ("labels.epd", 2, "bad_depth"),
        ("labels.epd", 3, "bad_depth"), ("labels.parquet", 2, "bad_depth"),
        ("labels.parquet", 3, "bad_depth")]
    messages = [message for *_, message in errors]
    for message, depth in zip(messages, ("-5", "100000", "1001", "-5", "100000", "-5",
                                         str(2 ** 40)), strict=True):
        assert depth in message and "0 to 1000" in message, message
    stored = con.execute("select engine_id, depth from labels order by all").fetchall()
    assert stored == [("epd", 7), ("epd", 1000), ("lichess-eval", 0), ("lichess-eval", 20),
                      ("lichess-eval", 1000), ("parquet", 5)]
    for depth in (-5, 1001):
        with pytest.raises(IngestError, match=f"--depth {depth} is not a depth from 0 to 1000"):
            IngestConfig(depth=depth)


# issue 48 §3: lichess_eval_by_hand.jsonl's labels, worked out by hand from the database's
# description (database.lichess.org, lichess-org/database Evals.scala): cp and mate White's,
# each eval a label at its depth from its first pv, knodes thousands of nodes, lines in
# UCI_Chess960 (castling as the king taking its rook: e8h8), which chesslab's labels hold in
# standard UCI (e8g8), as engines and python-chess write it; the PV's first 8 moves.
# (fen, depth, score_cp, score_mate, white_cp, white_mate, best_move, pv, nodes)
LICHESS_BY_HAND = [
    # Black to move: White's -45 is Black's +45; O-O and O-O-O for both sides
    ("r3k2r/8/8/8/8/8/8/R3K2R b KQkq -", 30, 45, None, -45, None, "e8g8",
     ["e8g8", "e1g1", "a8d8"], 2_500_000),
    # White's mate -3: Black mates in 3
    ("r3k2r/8/8/8/8/8/8/R3K2R b KQkq -", 18, None, 3, None, -3, "e8c8", ["e8c8"], 70_000),
    # the en passant square of a legal capture is kept
    ("4k3/8/8/3pP3/8/8/8/4K3 w - d6", 25, 250, None, 250, None, "e5d6", ["e5d6", "e8d7"],
     1_000_000),
    # promotions; MultiPV: the first pv only
    ("8/1P6/8/8/8/8/6p1/K6k b - -", 20, 600, None, -600, None, "g2g1q", ["g2g1q", "b7b8q"],
     12_000),
    ("8/1P6/8/8/8/8/6p1/K6k b - -", 12, 700, None, -700, None, "g2g1q", ["g2g1q"], 7_000),
    ("6k1/5ppp/8/8/8/8/8/R5K1 w - -", 245, None, 1, None, 1, "a1a8", ["a1a8"], 3_000),
    # a rook on e1 going to h1 is no castling
    ("3k4/8/8/8/8/8/8/K3R3 w - -", 22, 500, None, 500, None, "e1h1", ["e1h1", "d8d7"], 40_000),
    # after O-O the rook comes to e1 and goes to a1: only the king's move is castling
    ("4k3/8/8/8/8/8/8/4K2R w K -", 21, 480, None, 480, None, "e1g1",
     ["e1g1", "e8e7", "f1e1", "e7d6", "e1a1", "d6c5", "a1a5", "c5b4"], 50_000),
]


@pytest.mark.parametrize("scanner", [True, False])
def test_evals_written_by_hand_import_as_their_documented_labels(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanner: bool) -> None:
    """Issue 48 §3: every field of every label against values worked out by hand, through
    the compiled scanner and through the Arrow reader it hands unusual lines to."""
    if not scanner:
        from pipelines.formats.lichess_eval import parse_block_arrow
        from pipelines.ingest.training_data import TEXT_PARSERS

        monkeypatch.setitem(TEXT_PARSERS, "lichess-eval", parse_block_arrow)
    lake = Lake(tmp_path / "home")
    [summary] = run_step(INGEST, IngestJob((FIXTURES / "lichess_eval_by_hand.jsonl",),
                                           IngestConfig(workers=1)), lake)
    assert (summary.records, summary.labels, summary.errors) == (6, 8, 0)
    rows = connect(lake).execute(
        "select p.fen, l.depth, l.score_cp, l.score_mate, l.white_cp, l.white_mate, "
        "l.best_move, l.pv, l.nodes from labels l join positions p using (position_key) "
        "where l.engine_id = 'lichess-eval'").fetchall()
    assert sorted((*row[:7], list(row[7]), row[8]) for row in rows) == sorted(LICHESS_BY_HAND)


# lichess_eval_shapes.jsonl, line by line: what each line's shape is refused as, worked out
# from the database's shape (an object with a string fen and a list of evals, each with a
# list of pv objects whose cp, mate, knodes and depth are integers or absent) and from what
# a label holds (cp and mate 32-bit, nodes = 1000 * knodes exact: knodes 0 to 2^53 // 1000).
SHAPE_ERRORS = [
    (1, "bad_record", "not a JSON object: "),
    (2, "bad_fen", "'fen' is not a string: "),
    (3, "bad_fen", "'fen' is not a string: "),                 # no fen at all
    (4, "bad_record", "'evals' is not a list: "),
    (5, "bad_record", "an eval without a 'pvs' list: "),       # an eval that is a number
    (6, "bad_record", "an eval without a 'pvs' list: "),       # an eval with no pvs
    (7, "bad_score", "knodes is not a number: "),              # 1.5
    (8, "bad_score", "depth is not a number: "),               # "20"
    (9, "bad_score", "knodes is not a number: "),              # true: JSON's, not a number
    (10, "bad_record", "a pv is not an object: "),
    (11, "bad_score", "cp is not a number: '+0.35': "),
    (12, "bad_score", "mate is not a number: 1.5: "),
    (13, "bad_move", "a pv's line is not a string: "),
    (14, "bad_score", "cp is not a number: 9223372036854775808: "),   # 2^63: no int64
    (15, "bad_record", "an eval without a 'pvs' list: "),      # a good eval, then "x"
    (19, "bad_score", "an eval whose knodes is not 0 to 9,007,199,254,740 (eval 0 at depth 24: "),
    (20, "bad_score", "an eval whose knodes is not 0 to 9,007,199,254,740 (eval 0 at depth 25: "),
    (21, "bad_score", "an eval whose knodes is not 0 to 9,007,199,254,740 (eval 0 at depth 26: "),
    (22, "bad_score", "a pv needs one of cp or mate, a number (eval 0 at depth 20: "),  # 2^63 - 1
    (23, "bad_score", "a pv needs one of cp or mate, a number (eval 0 at depth 20: "),  # -2^63
    (24, "bad_score", "cp is not a number: -9223372036854775809: "),
    (25, "bad_fen", "bad board in fen: "),      # nine ranks, and a PV with castlings
    (26, "bad_fen", "bad board in fen: "),      # a byte that is not UTF-8 (0xff) in the FEN
]


@pytest.mark.parametrize("scanner", [True, False])
def test_every_shape_the_database_does_not_have_is_refused_by_its_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanner: bool) -> None:
    """Each way a line can miss the database's shape is an error of its own kind naming what
    is wrong and quoting the line; knodes of -1 and past 2^53 / 1000 (stored as nodes -1000
    and wrapped round to 0 and negative values before) are refused; null knodes and cp
    (a mate) and knodes 0 and 2^53 // 1000 are labels."""
    if not scanner:
        from pipelines.formats.lichess_eval import parse_block_arrow
        from pipelines.ingest.training_data import TEXT_PARSERS

        monkeypatch.setitem(TEXT_PARSERS, "lichess-eval", parse_block_arrow)
    path = FIXTURES / "lichess_eval_shapes.jsonl"
    lake = Lake(tmp_path / "home")
    [summary] = run_step(INGEST, IngestJob((path,), IngestConfig(workers=1)), lake)
    con = connect(lake)
    errors = con.execute("select line, kind, message from ingest_errors order by line").fetchall()
    assert [(line, kind) for line, kind, _ in errors] == \
        [(line, kind) for line, kind, _ in SHAPE_ERRORS]
    texts = path.read_bytes().decode(errors="replace").splitlines()
    for (line, kind, message), (_, _, what) in zip(errors, SHAPE_ERRORS, strict=True):
        assert message.startswith(what), (line, message)
        if "(eval" in what:          # the eval is quoted
            item = json.loads(texts[line - 1])["evals"][0]
            assert f'"cp": {item["pvs"][0]["cp"]}, ' in message, (line, message)
            assert f'"knodes": {item["knodes"]}, ' in message, (line, message)
            continue
        if kind == "bad_fen" and line >= 25:     # the FEN is quoted, U+FFFD for the byte
            assert message == f"{what}{json.loads(texts[line - 1])['fen']!r}"
            continue
        quoted = message[len(what):]     # the line (its start, when long)
        assert quoted == repr(texts[line - 1]) or \
            quoted.startswith(repr(texts[line - 1][:120]) + "... ("), (line, message)
    labels = con.execute("select depth, score_cp, score_mate, nodes from labels "
                         "order by depth").fetchall()
    assert labels == [(21, None, 1, None), (22, 10, None, 0),
                      (23, 10, None, 9_007_199_254_740_000)]
    assert (summary.records, summary.labels, summary.errors) == (26, 3, 23)


def test_castlings_are_found_by_following_the_kings() -> None:
    """Worked out by hand: the king stands on e1 behind two pieces (rn2k2r); after 1. Kf2
    Kf8 2. Rh5 Ke8 3. Rde1+ Kd8 the rook on e1 goes to h1 (no castling: the king left e1,
    though the castling field's K still reads as a piece); lines in UCI_Chess960."""
    from pipelines.formats.lichess_eval import standard_line

    assert standard_line("rn2k2r/8/8/8/8/8/8/RN2K2R w KQkq -", ["e1h1", "e8h8"]) == \
        ["e1g1", "e8g8"]
    rook = ["e1f2", "e8f8", "h1h5", "f8e8", "d1e1", "e8d8", "e1h1"]
    assert standard_line("4k3/8/8/8/8/8/8/3RK2R w K - 0 1", rook) == rook
    board = chess.Board("4k3/8/8/8/8/8/8/3RK2R w K - 0 1")
    for move in rook:        # python-chess: a legal line, and the last move is the rook's
        board.push_uci(move)
    assert board.piece_at(chess.H1) == chess.Piece.from_symbol("R")


def test_the_lines_of_a_block_and_the_blank_ones() -> None:
    """A block's lines end at its newlines; text after the last one is a line, nothing after
    it is none; an empty block is one empty line."""
    from pipelines.formats.blocks import blank_lines, line_spans

    for data, spans, blank in ((b"ab\n \t\n\ncd", [(0, 2), (3, 5), (6, 6), (7, 9)],
                                [False, True, True, False]),
                               (b"ab\n", [(0, 2)], [False]),
                               (b" \n", [(0, 1)], [True]),
                               (b"", [(0, 0)], [True])):
        starts, ends = line_spans(data)
        assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == spans, data
        assert blank_lines(data, starts, ends).tolist() == blank, data


# lichess_eval_arrow_shapes.jsonl: lines that are all JSON of the database's types (Arrow's
# reader takes them as one table), each wrong in what it holds: by hand, the error of each,
# its eval quoted with every field of the database's eval (absent ones null).
F = "r5k1/8/8/8/8/8/5PPP/6K1 b - -"
PV = '{"pvs": [{"cp": 5, "mate": null, "line": "a8a1"}], "knodes": 1'
ARROW_SHAPE_ERRORS = [
    (1, "bad_fen", "no 'fen'"),
    (2, "bad_record", f"no evals for {F!r}"),                   # "evals": []
    (3, "bad_record", f"no evals for {F!r}"),                   # no "evals"
    (4, "bad_record", "an eval without pvs (eval 0 at depth 20: "
                      "'{\"pvs\": [], \"knodes\": 1, \"depth\": 20}')"),
    (5, "bad_record", f"an eval without a depth (eval 0 at depth None: '{PV}, \"depth\": null}}')"),
    (6, "bad_score", "a pv needs one of cp or mate, a number (eval 0 at depth 20: "
                     "'{\"pvs\": [{\"cp\": 5, \"mate\": 1, \"line\": \"a8a1\"}], \"knodes\": 1, "
                     "\"depth\": 20}')"),
    (7, "bad_score", "a pv needs one of cp or mate, a number (eval 0 at depth 20: "
                     "'{\"pvs\": [{\"cp\": null, \"mate\": null, \"line\": \"a8a1\"}], "
                     "\"knodes\": 1, \"depth\": 20}')"),
    (8, "bad_move", "a pv's first move is not UCI (eval 0 at depth 20: "
                    "'{\"pvs\": [{\"cp\": 5, \"mate\": null, \"line\": \"a8a1x\"}], "
                    "\"knodes\": 1, \"depth\": 20}')"),
    (9, "bad_move", "a pv's first move is not UCI (eval 0 at depth 20: "
                    "'{\"pvs\": [{\"cp\": 5, \"mate\": null, \"line\": null}], "
                    "\"knodes\": 1, \"depth\": 20}')"),
    # the second eval of the line: its place in the list is 1; the first one is a label
    (10, "bad_move", "a pv's first move is not UCI (eval 1 at depth 22: "
                     "'{\"pvs\": [{\"cp\": 5, \"mate\": null, \"line\": \"a8\"}], "
                     "\"knodes\": 1, \"depth\": 22}')"),
    (12, "bad_record", "an eval without pvs (eval 0 at depth 20: "       # no "pvs" at all
                       "'{\"pvs\": null, \"knodes\": 1, \"depth\": 20}')"),
]


@pytest.mark.parametrize("scanner", [True, False])
def test_lines_of_the_database_s_types_with_wrong_contents(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanner: bool) -> None:
    """Each error at its line with its whole message; the good evals (White's cp, Black to
    move) stored as Black's scores."""
    if not scanner:
        from pipelines.formats.lichess_eval import parse_block_arrow
        from pipelines.ingest.training_data import TEXT_PARSERS

        monkeypatch.setitem(TEXT_PARSERS, "lichess-eval", parse_block_arrow)
    lake = Lake(tmp_path / "home")
    [summary] = run_step(INGEST, IngestJob((FIXTURES / "lichess_eval_arrow_shapes.jsonl",),
                                           IngestConfig(workers=1)), lake)
    con = connect(lake)
    assert con.execute("select line, kind, message from ingest_errors order by line"
                       ).fetchall() == ARROW_SHAPE_ERRORS
    assert sorted(con.execute("select depth, score_cp, white_cp, best_move, pv, nodes "
                              "from labels").fetchall()) == [
        (24, 300, -300, "a8a1", ["a8a1", "g1f1"], 2000), (30, -5, 5, "a8a1", ["a8a1"], 1000)]
    assert (summary.records, summary.labels, summary.errors) == (12, 2, 11)


def test_a_block_with_one_castling_has_it_in_standard_uci(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"fen": "r3k2r/8/8/8/8/8/8/R3K2R w KQkq -", "evals": [
        {"pvs": [{"cp": 5, "line": "e1h1 e8a8"}], "knodes": 1, "depth": 9}]}) + "\n")
    lake = Lake(tmp_path / "home")
    run_step(INGEST, IngestJob((path,), IngestConfig(workers=1)), lake)
    assert connect(lake).execute("select best_move, pv from labels").fetchall() == \
        [("e1g1", ["e1g1", "e8c8"])]
