"""Ingest: PGN (plain, BOM/CRLF, .gz, .bz2, .zst), EPD suites and FEN lists into the warehouse.

Counts are checked against python-chess reading the same files (``chess.pgn.read_game`` and a
replay of each main line), so a tokenizer that loses a game, a move or a position fails here.
"""
from __future__ import annotations

import bz2
import gzip
import io
import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import chess.polyglot
import pytest
import zstandard

from flows.cli import main as cli_main
from flows.ingest import INGEST, IngestJob
from flows.step import run_step
from pipelines.ingest import IngestConfig, IngestError, discover_sources
from pipelines.ingest import games as games_module
from pipelines.ingest.pgn import (
    ParsedGame,
    parse_game,
    parse_movetext,
    parse_movetext_general,
    split_games,
)
from pipelines.ingest.replay import replay_function, replay_reference
from warehouse import Lake, connect

FIXTURES = Path(__file__).parent.parent / "fixtures"
PGN = FIXTURES / "pgn"
EPD = FIXTURES / "epd"
SAMPLE = Path(__file__).parent.parent.parent / "data" / "sample"
TABLES = ("sources", "games", "moves", "positions", "position_records", "ingest_errors")


def pgn_text(path: Path) -> str:
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    elif path.suffix == ".bz2":
        raw = bz2.decompress(raw)
    return raw.decode("utf-8")


def python_chess_games(text: str) -> Iterator[tuple[chess.pgn.Game, list[chess.Move]]]:
    """Every game python-chess reads, with its main line (stopped where python-chess stops)."""
    handle = io.StringIO(text, newline=None)
    while (game := chess.pgn.read_game(handle)) is not None:
        yield game, list(game.mainline_moves())


def expected_counts(text: str) -> dict[str, Any]:
    """Games, plies, distinct positions and moves of standard games, by python-chess."""
    games = plies = 0
    positions: set[str] = set()
    moves: list[list[tuple[str, str]]] = []
    for game, line in python_chess_games(text):
        games += 1
        if game.headers.get("Variant", "Standard").lower() not in ("standard", "chess960"):
            moves.append([])
            continue
        try:
            board = game.board()
        except ValueError:
            moves.append([])
            continue
        positions.add(board.epd())
        sans = []
        for move in line:
            sans.append((move.uci(), board.san(move)))
            board.push(move)
            positions.add(board.epd())
        plies += len(line)
        moves.append(sans)
    return {"games": games, "plies": plies, "positions": len(positions), "moves": moves}


def row_counts(lake: Lake) -> dict[str, int]:
    """Rows in every part of every table (duplicates included)."""
    return {name: lake.read(name).num_rows for name in TABLES}


@pytest.fixture
def lake(home: Path) -> Lake:
    return Lake(home)


@pytest.mark.parametrize("name", ["quirks.pgn", "quirks_bom_crlf.pgn", "quirks.pgn.gz",
                                  "malformed.pgn", "malformed.pgn.bz2", "chess960.pgn"])
def test_counts_match_python_chess(lake: Lake, name: str) -> None:
    """Games, plies, distinct positions and every move's UCI/SAN agree with python-chess.

    Guards the tokenizer against the quirks of real files: comments over blank lines, nested
    variations, NAGs, `;` and `%` comments, a BOM, CRLF line ends and compressed streams.
    """
    expected = expected_counts(pgn_text(PGN / name))
    [summary] = run_step(INGEST, IngestJob((PGN / name,), IngestConfig.tiny()), lake)
    assert (summary.games, summary.plies, summary.new_positions) == (
        expected["games"], expected["plies"], expected["positions"])
    con = connect(lake)
    got = con.execute(
        "select g.game_index, list(m.uci order by m.ply), list(m.san order by m.ply) "
        "from games g left join moves m using (game_id) group by g.game_index "
        "order by g.game_index").fetchall()
    assert [[(u, s) for u, s in zip(ucis, sans, strict=False) if u] for _, ucis, sans in got] == \
        expected["moves"]
    keys = con.execute("select position_key, fen from positions").fetchall()
    assert all(chess.polyglot.zobrist_hash(chess.Board(fen, chess960=True)) == key
               for key, fen in keys)


def test_chess960_castling(lake: Lake) -> None:
    """Chess960 games replay with 960 castling (king takes rook in UCI), not as errors."""
    [summary] = run_step(INGEST, IngestJob((PGN / "chess960.pgn",), IngestConfig.tiny()), lake)
    assert (summary.plies, summary.errors) == (40, 0)
    con = connect(lake)
    assert con.execute("select ply, uci from moves where san = 'O-O'").fetchall() == \
        [(15, "f8h8")]
    assert con.execute("select variant from games").fetchone() == ("chess960",)


def test_tags_setup_and_annotations(lake: Lake) -> None:
    """Lichess tags, SetUp/FEN games and [%clk]/[%eval] (mate scores included) are recorded."""
    run_step(INGEST, IngestJob((PGN / "quirks.pgn",), IngestConfig.tiny()), lake)
    con = connect(lake)
    games = {row[0]: row[1:] for row in con.execute(
        "select game_index, event, white_elo, black_elo, time_control, termination, eco, "
        "opening, start_fen, variant, result, tags from games").fetchall()}
    assert games[0][0] == 'Paris "Opera" game'
    assert games[2][7] == "7K/8/k1P5/7p/8/8/8/8 w - - 0 1"
    assert games[3][1:8] == (1500, None, "60+0", "Normal", "A02", "Bird Opening", None)
    assert games[3][8] == "standard"
    assert json.loads(games[3][10])["WhiteRatingDiff"] == "-6"
    assert games[4][0] is None and games[4][9] == "*"
    annotations = con.execute(
        "select ply, san, clock_s, eval_cp, eval_mate from moves m join games g using (game_id) "
        "where g.game_index = 3 order by ply").fetchall()
    assert annotations == [(0, "f3", 60.0, -39, None), (1, "e5", 59.5, -36, None),
                           (2, "g4", 58.0, None, -1), (3, "Qh4#", 58.1, None, None)]
    reti = con.execute("select m.position_key from moves m join games g using (game_id) "
                       "where g.game_index = 2 and ply = 0").fetchone()
    start = chess.Board("7K/8/k1P5/7p/8/8/8/8 w - - 0 1")
    assert reti == (chess.polyglot.zobrist_hash(start),)


def test_malformed_games_are_recorded_and_the_rest_ingested(lake: Lake) -> None:
    """Broken tags, an illegal SAN, an unknown variant and a bad FEN each give an
    ingest_errors row with file, game index, line and reason; the games around them load."""
    [summary] = run_step(INGEST, IngestJob((PGN / "malformed.pgn",), IngestConfig.tiny()), lake)
    con = connect(lake)
    errors = con.execute(
        "select game_index, line, kind, message, path from ingest_errors order by line").fetchall()
    assert [e[:3] for e in errors] == [
        (1, 9, "bad_tag"), (1, 10, "bad_tag"), (2, 15, "illegal_move"),
        (3, 22, "unknown_variant"), (4, 28, "bad_fen")]
    assert "'Ke3'" in errors[2][3] and "ply 4" in errors[2][3]
    assert "'Atomic'" in errors[3][3]
    assert {e[4] for e in errors} == {str(PGN / "malformed.pgn")}
    games = con.execute("select game_index, plies, error is not null, white "
                        "from games order by game_index").fetchall()
    assert games == [(0, 7, False, "Scholar"), (1, 4, False, None), (2, 4, True, "A"),
                     (3, 0, True, None), (4, 0, True, None), (5, 13, False, "Legall")]
    assert summary.errors == 5 and summary.games == 6


def test_truncated_zst_keeps_the_games_before_the_cut(lake: Lake) -> None:
    """A .zst cut mid-frame keeps every game read before the cut and records the cut."""
    [summary] = run_step(INGEST, IngestJob((PGN / "truncated.pgn.zst",), IngestConfig.tiny()), lake)
    full = expected_counts(pgn_text(PGN / "quirks.pgn"))
    assert summary.truncated and summary.games == 3
    assert summary.plies == sum(len(m) for m in full["moves"][:3])
    con = connect(lake)
    assert con.execute("select game_index, kind from ingest_errors").fetchall() == \
        [(3, "truncated")]
    assert con.execute("select truncated, games from sources").fetchall() == [(True, 3)]


@pytest.mark.parametrize("suffix", [".pgn.zst", ".pgn.gz", ".pgn.bz2"])
def test_file_that_is_not_the_archive_it_claims_is_unreadable(lake: Lake, tmp_path: Path,
                                                              suffix: str) -> None:
    """Plain PGN bytes named as an archive: a one-line IngestError naming the file, no rows."""
    fake = tmp_path / f"games{suffix}"
    fake.write_bytes((PGN / "quirks.pgn").read_bytes())
    with pytest.raises(IngestError, match=f"games{suffix}"):
        run_step(INGEST, IngestJob((fake,), IngestConfig.tiny()), lake)
    assert row_counts(lake)["sources"] == 0


def test_second_ingest_adds_nothing(lake: Lake) -> None:
    """Sources are keyed by SHA-256: the same files again add zero rows anywhere."""
    first = run_step(INGEST, IngestJob((PGN, EPD), IngestConfig.tiny()), lake)
    before = row_counts(lake)
    second = run_step(INGEST, IngestJob((PGN, EPD), IngestConfig.tiny()), lake)
    assert row_counts(lake) == before
    assert not any(s.skipped for s in first) and all(s.skipped for s in second)
    assert before["sources"] == len(first) == 17


def test_positions_are_deduped_against_the_warehouse(lake: Lake, tmp_path: Path) -> None:
    """Other games through the same positions (the quirks games under other Event tags) add
    games but no new positions; the same games again (the .gz copy) add nothing but their
    count as duplicates."""
    renamed = tmp_path / "renamed.pgn"
    renamed.write_text(pgn_text(PGN / "quirks.pgn").replace('[Event "', '[Event "Replay of '))
    [plain] = run_step(INGEST, IngestJob((PGN / "quirks.pgn",), IngestConfig.tiny()), lake)
    [other] = run_step(INGEST, IngestJob((renamed,), IngestConfig.tiny()), lake)
    [gz] = run_step(INGEST, IngestJob((PGN / "quirks.pgn.gz",), IngestConfig.tiny()), lake)
    assert plain.new_positions > 0 and other.new_positions == 0
    assert (other.games, other.duplicates, other.plies) == (5, 1, plain.plies - 6)  # the untagged game
    assert (gz.games, gz.duplicates, gz.plies, gz.new_positions) == (5, 5, 0, 0)
    assert connect(lake).execute("select count(*) from games").fetchone() == (9,)


def test_collisions_are_detected_and_counted(lake: Lake, monkeypatch: pytest.MonkeyPatch) -> None:
    """Positions whose keys clash (keys cut to 4 bits here) keep the first FEN met (in this
    file, or stored by an earlier one); every other FEN under a taken key is counted once per
    file and recorded as a 'collision' error."""
    real = replay_function()

    def clashing(fen: str | None, sans: Any) -> Any:
        keys, fens, ucis, sans_out, error = real(fen, sans)
        return [k & 0xF for k in keys], fens, ucis, sans_out, error

    monkeypatch.setattr(games_module, "replay_function", lambda: clashing)
    names = ["quirks.pgn", "malformed.pgn"]  # the second file clashes with stored positions
    first: dict[int, str] = {}
    clashes: list[set[tuple[int, str]]] = []
    for name in names:
        clashes.append(set())
        for game, line in python_chess_games(pgn_text(PGN / name)):
            if game.headers.get("Variant", "Standard") != "Standard" or \
                    game.headers.get("FEN", "").startswith("8/8/8/8 "):
                continue  # the Atomic game and the bad FEN: no positions
            board = game.board()
            for move in [*line, None]:
                key, fen = chess.polyglot.zobrist_hash(board) & 0xF, board.epd()
                if first.setdefault(key, fen) != fen:
                    clashes[-1].add((key, fen))
                if move:
                    board.push(move)
    summaries = run_step(INGEST, IngestJob(tuple(PGN / name for name in names), IngestConfig.tiny()), lake)
    assert [s.collisions for s in summaries] == [len(c) for c in clashes]
    assert min(len(c) for c in clashes) > 0
    assert sum(s.new_positions for s in summaries) == len(first) == 16
    errors = [e for e in lake.read("ingest_errors").to_pylist() if e["kind"] == "collision"]
    assert len(errors) == sum(len(c) for c in clashes)
    shown = connect(lake).execute(
        "select count(*) from ingest_errors where kind = 'collision'").fetchone()
    assert shown == (len(errors),)  # the view's key keeps every collision of a game
    assert "collides with" in errors[0]["message"]
    sources = {row["path"]: row["source_id"] for row in lake.read("sources").to_pylist()}
    assert {(e["path"], e["source_id"]) for e in errors} == {
        (path, source_id) for path, source_id in sources.items()} and len(sources) == 2


def test_epd_suite_keeps_opcodes(lake: Lake) -> None:
    """EPD opcodes survive: bm/am as SAN lists, id, dm, c0, and all of them in ops."""
    summaries = run_step(INGEST, IngestJob((EPD / "bratko_kopec.epd", EPD / "opcodes.epd"), IngestConfig.tiny()), lake)
    assert [(s.records, s.errors) for s in summaries] == [(24, 0), (5, 2)]
    con = connect(lake)
    bk = dict(con.execute("select id, bm from position_records where id like 'BK.%'").fetchall())
    assert len(bk) == 24
    assert bk["BK.01"] == ["Qd1+"] and bk["BK.05"] == ["Nd5", "a4"]
    assert bk["BK.14"] == ["Qd2", "Qe1"] and bk["BK.15"] == ["Qxg7+"]
    rows = {r["id"]: r for r in con.sql(
        "select * from position_records where id not like 'BK.%'").to_arrow_table().to_pylist()}
    assert rows["opcodes.1"]["dm"] == 1 and rows["opcodes.1"]["bm"] == ["Qxf7#"]
    assert rows["opcodes.1"]["c0"] == "Scholar's mate"
    assert rows["WAC.002"]["am"] == ["Rxa3"] and rows["WAC.002"]["fen"].endswith(" b - - 3 41")
    assert json.loads(rows["WAC.001"]["ops"]) == {
        "bm": ["Qg6"], "id": "WAC.001", "c0": "Win at Chess 1", "acd": 20, "ce": 600}
    assert rows["WAC.003"]["line"] == 5
    errors = con.execute("select line, kind, message from ingest_errors order by line").fetchall()
    assert [e[:2] for e in errors] == [(4, "bad_epd"), (6, "bad_opcode")]
    assert "this is not an epd line" in errors[0][2] and "'Rb1'" in errors[1][2]
    kept = con.execute("select bm, ops from position_records where id like '%wrong bm'").fetchone()
    assert kept == (None, '{"bm": "Rb1", "id": "WAC.002 with a wrong bm"}')
    assert con.execute("select count(*) from positions").fetchone() == (28,)


def test_fen_list(lake: Lake) -> None:
    """FEN lists: comments and blank lines skipped, bad FENs recorded with their line."""
    [summary] = run_step(INGEST, IngestJob((EPD / "positions.fen",), IngestConfig.tiny()), lake)
    assert (summary.records, summary.new_positions, summary.errors) == (4, 4, 2)
    con = connect(lake)
    assert [r[0] for r in con.execute(
        "select line from position_records order by line").fetchall()] == [2, 4, 5, 8]
    assert con.execute("select line, kind from ingest_errors order by line").fetchall() == [
        (6, "bad_fen"), (7, "bad_fen")]
    start = chess.polyglot.zobrist_hash(chess.Board())
    assert con.execute("select fen from positions where position_key = ?",
                       [start]).fetchone() == (chess.Board().epd(),)


def test_process_pool_gives_the_same_rows(home: Path, tmp_path: Path) -> None:
    """workers=2 (a process pool) writes exactly what the in-process run writes."""
    results = []
    for workers, folder in ((1, "one"), (2, "two")):
        lake = Lake(tmp_path / folder)
        config = IngestConfig(workers=workers, chunk_games=2, flush_games=2, pool_from_mb=0)
        run_step(INGEST, IngestJob((PGN / "quirks.pgn", PGN / "malformed.pgn"), config), lake)
        con = connect(lake)
        results.append([con.execute(f"select * exclude ({skip}) from {t} order by all").fetchall()
                        for t, skip in (("moves", "game_id"), ("positions", "first_seen"),
                                        ("games", "game_id"))])
    assert results[0] == results[1]


def test_discovery_of_files_folders_and_globs(tmp_path: Path) -> None:
    """Folders are searched recursively for known suffixes; bad paths name themselves."""
    found = discover_sources([PGN, str(EPD / "*.epd")])
    names = [s.path.name for s in found]
    assert names == ["broken_games.pgn", "capablanca_latin1.pgn", "capablanca_latin1.pgn.gz",
                     "capablanca_latin1.pgn.zst", "chess960.pgn", "lasker_cp1252.pgn",
                     "malformed.pgn", "malformed.pgn.bz2", "quirks.pgn", "quirks.pgn.gz",
                     "quirks_bom_crlf.pgn", "quirks_complete.pgn.zst", "truncated.pgn.zst",
                     "variants.pgn",
                     "bratko_kopec.epd", "opcodes.epd"]
    assert [(s.format, s.compression) for s in found][6:8] == [("pgn", "none"), ("pgn", "bz2")]
    with pytest.raises(IngestError, match="missing.pgn"):
        discover_sources([tmp_path / "missing.pgn"])
    with pytest.raises(IngestError, match="nothing"):
        discover_sources([str(tmp_path / "nothing*.pgn")])
    (tmp_path / "notes.txt").write_text("not a FEN list")
    assert discover_sources([tmp_path]) == []
    assert [s.format for s in discover_sources([tmp_path / "notes.txt"])] == ["fen"]
    (tmp_path / "notes.doc").write_text("x")
    with pytest.raises(IngestError, match="notes.doc"):
        discover_sources([tmp_path / "notes.doc"])


def test_split_games_follows_python_chess_rules() -> None:
    """Game boundaries on edge cases agree with read_game: tags separated by one blank line
    belong to one game, a header-only game, a `%` line inside movetext, a comment over a
    blank line, and a game without tags."""
    text = ('[Event "a"]\n\n[Site "b"]\n\n1. e4 e5 *\n\n\n[Event "tags only"]\n\n\n'
            '1. d4 {a comment\n\nover a blank line} d5\n% escape line\n2. c4 *\n\n'
            '1. Nf3 ; comment {\nNf6 *\n')
    ours = [parse_game(g) for g in split_games(io.StringIO(text))]
    theirs = [(g.headers.get("Event"), [m.uci() for m in line])
              for g, line in python_chess_games(text)]
    assert len(ours) == len(theirs) == 4
    for game, (event, ucis) in zip(ours, theirs, strict=False):
        assert game.tags.get("Event", "?") == event
        assert replay_reference(None, game.sans)[2] == ucis
    assert ours[0].tags == {"Event": "a", "Site": "b"}


QUIRK_LINES = ('[Event "x"]', '[Site "y"]', '[Broken tag', '', '', '%escape', '; semi {',
               '{comment', 'more}', '} e4', '1. e4 e5', '2. Nf3 {c} Nc6', '(2... d6 3. d4)', ')',
               '(', '{ multi', 'line }', '3. Bb5 a6 $1', '1-0', '*', '1... c5 {[%clk 0:00:10]}',
               'Nf3;x', '{;} d4', '\ufeff[Event "bom"]')


def test_random_quirk_mixes_read_like_python_chess() -> None:
    """On 2500 random mixes of tags, blank lines, BOMs, `%`/`;` lines, comments opened and
    closed on other lines and variations, games and main lines agree with read_game (where
    python-chess itself read them without error, and no tag-pair line ended a movetext: there
    python-chess reads the next game into the one before, which ours deliberately does not)."""
    rng = random.Random(2026)
    compared = 0
    for _ in range(2500):
        text = "\n".join(rng.choice(QUIRK_LINES) for _ in range(rng.randint(1, 14)))
        try:
            theirs = list(python_chess_games(text))
        except IndexError:  # python-chess crashes on some stray parentheses
            continue
        if any(game.errors for game, _ in theirs):
            continue
        raws = list(split_games(io.StringIO(text)))
        if any(raw.ended_by_tags for raw in raws):
            continue
        ours = [parse_game(raw) for raw in raws]
        assert [replay_reference(None, game.sans)[2] for game in ours] == \
            [[move.uci() for move in line] for _, line in theirs], text
        compared += 1
    assert compared > 500


def test_fast_movetext_path_matches_the_general_tokenizer() -> None:
    """The regex fast path for variation-free movetext (every Lichess export) reads the same
    SANs, clocks, evals and result as the token-by-token reader, on the sample corpus."""
    text = zstandard.ZstdDecompressor().stream_reader(
        (SAMPLE / "games.pgn.zst").read_bytes()).read().decode()
    games = list(split_games(io.StringIO(text + pgn_text(PGN / "quirks.pgn"))))
    assert len(games) == 405
    for raw in games:
        fast, general = ParsedGame(raw.index, raw.line), ParsedGame(raw.index, raw.line)
        parse_movetext(raw.movetext, fast)
        parse_movetext_general(raw.movetext, general)
        assert fast == general


def test_core_replay_matches_reference() -> None:
    """The compiled replay gives the python-chess reference's keys, FENs, UCIs, SANs and
    errors on every fixture game (the fast path must not change a row)."""
    core = replay_function()
    for name in ("quirks.pgn", "malformed.pgn"):
        for raw in split_games(io.StringIO(pgn_text(PGN / name))):
            game = parse_game(raw)
            if "Variant" in game.tags or game.tags.get("FEN", "").startswith("8/8/8/8 "):
                continue
            fen = game.tags.get("FEN")
            fast, reference = core(fen, game.sans), replay_reference(fen, game.sans)
            assert fast[:4] == reference[:4]
            assert (fast[4] is None) == (reference[4] is None)


def test_bundled_sample_corpus(lake: Lake) -> None:
    """data/sample (the demo's input) ingests cleanly with the counts its README states, and
    python-chess, reading the same files here, agrees: 400 games, 57,834 plies, 54,404
    distinct positions, 80 EPD records and 60 FEN lines whose positions all come from those
    games."""
    text = zstandard.ZstdDecompressor().stream_reader(
        (SAMPLE / "games.pgn.zst").read_bytes()).read().decode()
    expected: dict[str, Any] = {"games": 0, "plies": 0, "with_fen": 0}
    game_positions: set[str] = set()
    for game, line in python_chess_games(text):
        board = game.board()
        game_positions.add(board.epd())
        for move in line:
            board.push(move)
            game_positions.add(board.epd())
        expected["games"] += 1
        expected["plies"] += len(line)
        expected["with_fen"] += "FEN" in game.headers
    expected["positions"] = len(game_positions)
    records = {"suite.epd": [chess.Board.from_epd(line)[0] for line in
                             (SAMPLE / "suite.epd").read_text().splitlines() if line.strip()],
               "positions.fen": [chess.Board(line) for line in
                                 (SAMPLE / "positions.fen").read_text().splitlines()
                                 if line.strip() and not line.startswith("#")]}
    assert all(board.epd() in game_positions for boards in records.values() for board in boards)
    summaries = run_step(INGEST, IngestJob((SAMPLE,), IngestConfig(workers=1)), lake)
    assert {Path(s.path).name: (s.games, s.records, s.plies, s.new_positions, s.errors)
            for s in summaries} == {
        "games.pgn.zst": (expected["games"], 0, expected["plies"], expected["positions"], 0),
        "positions.fen": (0, len(records["positions.fen"]), 0, 0, 0),
        "suite.epd": (0, len(records["suite.epd"]), 0, 0, 0)}
    assert (expected["games"], expected["plies"], expected["positions"]) == (400, 57834, 54404)
    assert (len(records["suite.epd"]), len(records["positions.fen"])) == (80, 60)
    con = connect(lake)
    assert con.execute("select count(*), sum(plies) from games").fetchone() == (
        expected["games"], expected["plies"])
    assert con.execute("select count(*) from positions").fetchone() == (expected["positions"],)
    assert con.execute("select count(*) from games where start_fen is not null").fetchone() == \
        (expected["with_fen"],)
    assert con.execute("select count(*) from moves where clock_s is null").fetchone() == (0,)


def test_cli_missing_file_exits_non_zero(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An unreadable path gives a one-line error naming it and exit status 2."""
    assert cli_main(["ingest", "--no-prefect", str(home / "missing.pgn")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "missing.pgn" in err


def test_cli_prints_a_summary_table(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`chesslab ingest --no-prefect` ingests and prints one line per file plus a total."""
    assert cli_main(["ingest", "--no-prefect", "--workers", "1",
                     str(PGN / "malformed.pgn"), str(EPD / "bratko_kopec.epd")]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].split()[:3] == ["file", "games", "records"]
    assert lines[-1].split()[:6] == ["total", "6", "24", "28", "48", "5"]


def test_a_file_shows_its_progress_while_it_is_read(home: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 49 §3: ``ingest`` said nothing inside a file (one line per file, after it), so
    a multi-GB ``.pgn.zst`` or ``.jsonl.zst`` ran for minutes without a word. A line every
    few seconds (every chunk here): the bytes read of the file's size, the rate, the time
    left, the games and new positions so far; the same for training data."""
    import pipelines.progress
    from pipelines.ingest.run import ingest_file
    from pipelines.ingest.sources import SourceFile

    monkeypatch.setattr(pipelines.progress, "EVERY_S", 0.0)
    lines: list[str] = []
    path = FIXTURES / "label_engines" / "selfplay.pgn"
    size = path.stat().st_size
    summary = ingest_file(Lake(home), SourceFile(path, "pgn", "none"),
                          IngestConfig(workers=1, chunk_games=2, flush_games=2), None,
                          lines.append)
    pattern = (r"ingest selfplay\.pgn: ([\d.]+ kB)/([\d.]+ kB) \(\d+%\)(, [\d.,]+ [kM]?B/s)?"
               r"(, ETA [\w ]+)?; (\d+) games, ([\d,]+) new positions")
    found = [re.fullmatch(pattern, line) for line in lines]
    assert len(lines) == 5 and all(found), lines       # 9 games in chunks of 2
    assert [int(m[5]) for m in found if m] == [2, 4, 6, 8, 9]
    assert {m[2] for m in found if m} == {f"{size / 1000:.1f} kB"}
    assert found[-1] and found[-1][6] == f"{summary.new_positions:,}"

    evals = FIXTURES / "formats" / "lichess_eval.jsonl"
    lines.clear()
    ingest_file(Lake(home), SourceFile(evals, "lichess-eval", "none"),
                IngestConfig(workers=1, block_bytes=256), None, lines.append)
    assert lines and all(re.fullmatch(r"ingest lichess_eval\.jsonl: [\d.]+ k?B/[\d.]+ k?B "
                                      r"\(\d+%\).*; [\d,]+ records, [\d,]+ labels", line)
                         for line in lines), lines


def test_a_pool_workers_two_steps_write_what_one_step_writes(tmp_path: Path) -> None:
    """The pool's steps in the worker that runs them (the process pool test above runs them in
    child processes, where mutation testing's tracing does not follow): parse_stage keeps the
    parsed chunk and returns one base key a game; write_stage writes it under the keys given,
    as parse then write in one step does, and only once: a chunk not parsed in this worker is
    an error naming it."""
    text = pgn_text(PGN / "quirks.pgn")
    raws = list(split_games(io.StringIO(text)))

    def job(home: str) -> games_module.ChunkJob:
        return games_module.ChunkJob(str(tmp_path / home), "f" * 64, str(PGN / "quirks.pgn"),
                                     raws, 3)
    bases = games_module.parse_stage(job("one"))
    assert len(bases) == len(raws) and len(set(bases)) == len(bases)
    staged = games_module.write_stage("f" * 64, 3, bases)
    direct = games_module.write_chunk(games_module.parse_chunk(job("two")), bases)
    assert (staged.games, staged.plies, staged.new_positions, staged.duplicates) == \
        (direct.games, direct.plies, direct.new_positions, direct.duplicates)
    expected = expected_counts(text)      # python-chess's counts
    assert (staged.games, staged.plies, staged.new_positions) == \
        (expected["games"], expected["plies"], expected["positions"])
    with pytest.raises(RuntimeError, match="chunk 3 of source ffffffffffffffff was not parsed here"):
        games_module.write_stage("f" * 64, 3, bases)
