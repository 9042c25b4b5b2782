"""Tournaments: schedule and colours, PGN and warehouse records, openings, forfeits from
broken engines, resuming an interrupted run, adjudication and SPRT stops.

Games use Stockfish at a few thousand nodes and the stub engines of tests/fixtures/engines.
"""
from __future__ import annotations

import dataclasses
import io
import math
import os
import random
import re
import sys
from collections import Counter
from pathlib import Path

import chess
import chess.gaviota
import chess.pgn
import pytest

from pipelines.games.adjudication import Adjudicator
from pipelines.games.config import GamesError
from pipelines.games.game import Clock
from pipelines.games.limits import TimeControl
from pipelines.tournament import TournamentConfig, TournamentError, run_tournament
from pipelines.tournament.openings import load_openings
from pipelines.tournament.runner import Tournament, TournamentSummary, resolve_players
from pipelines.tournament.schedule import rounds_only_cap, schedule, tournament_id
from pipelines.tournament.store import finished_games
from warehouse import Lake, connect

FIXTURES = Path(__file__).parents[1] / "fixtures"
ENGINES = FIXTURES / "engines"
OPENINGS = FIXTURES / "openings"
SF = "stockfish?Threads=1&Hash=16"
GAVIOTA = Path("/usr/share/gaviotatb/gtb4")
SYZYGY = FIXTURES / "syzygy"   # python-chess's test tables: see SOURCE.txt there


@pytest.fixture
def engines_file(tmp_path: Path) -> str:
    """Players built from the broken stub engines, run by this interpreter."""
    path = tmp_path / "engines.toml"
    path.write_text("".join(
        f'[players.{name}]\ncommand = ["{sys.executable}", "{ENGINES / (name + "_engine.py")}"]\n'
        for name in ("crash", "hang", "illegal")))
    return str(path)


def test_schedule_pairs_games_with_colours_reversed() -> None:
    """Every pairing plays each round's opening twice, once with each colour; round robin of
    3 players over 2 rounds is 12 games, each player White in exactly half of its games."""
    slots = schedule(["a", "b", "c"], "round-robin", rounds=2, openings=5)
    assert len(slots) == 12
    for first, second in zip(slots[::2], slots[1::2], strict=False):
        assert (first.white, first.black) == (second.black, second.white)
        assert first.opening_index == second.opening_index == first.round
    for name in "abc":
        assert sum(s.white == name for s in slots) == sum(s.black == name for s in slots) == 4
    gauntlet = schedule(["a", "b", "c", "d"], "gauntlet", rounds=1, openings=1)
    assert {frozenset((s.white, s.black)) for s in gauntlet} == {
        frozenset("ab"), frozenset("ac"), frozenset("ad")}


def test_openings_from_epd_pgn_and_polyglot() -> None:
    """EPD positions, the first N plies of PGN games (with ECO/Opening), Polyglot walks."""
    epd = load_openings(TournamentConfig.tiny(openings=str(OPENINGS / "two_positions.epd")))
    assert [o.eco for o in epd] == ["B00", "A40"] and epd[0].board().turn == chess.BLACK
    pgn = load_openings(TournamentConfig.tiny(openings=str(OPENINGS / "two_games.pgn"),
                                              opening_plies=3))
    assert pgn[0].moves == ("e2e4", "e7e5", "g1f3") and pgn[1].name == "Queen's Gambit Declined"
    book = load_openings(TournamentConfig.tiny(openings=str(OPENINGS / "tiny_book.bin"),
                                               opening_plies=3, rounds=3))
    assert {o.moves for o in book} == {("e2e4", "e7e5", "g1f3"), ("e2e4", "c7c5", "g1f3"),
                                       ("d2d4", "d7d5", "c2c4")}


def test_time_control_clock() -> None:
    """40/60+0.6: the increment after every move, the base time again after 40 moves."""
    clock = Clock(TimeControl.parse("40/60+0.6"))
    assert clock.moves_to_go(chess.WHITE) == 40
    for _ in range(40):
        clock.spend(chess.WHITE, 1.0)
    assert clock.remaining[chess.WHITE] == pytest.approx(60 - 40 + 40 * 0.6 + 60)
    assert clock.spend(chess.BLACK, 61.0) < 0
    with pytest.raises(GamesError, match="'40/'"):
        TimeControl.parse("40/")
    with pytest.raises(TournamentError, match="'40/'"):
        TournamentConfig.tiny(tc="40/")


def test_adjudication_rules() -> None:
    """Resign only when both engines agree for N moves; draw from move M within D cp."""
    rules = Adjudicator(resign_moves=2, resign_score=500, draw_move_number=10, draw_moves=2,
                        draw_score=10)
    board = chess.Board()
    assert rules.verdict(board, [-600, -700, -650, -900])[0] == "0-1"
    assert rules.verdict(board, [-600, 300, -650, -900]) is None   # Black's engine disagrees
    assert rules.verdict(board, [None, -700, -650, -900]) is None
    assert rules.verdict(board, [5, -5, 0, 3]) is None             # before move 10
    late = chess.Board("r3k3/8/8/8/8/8/8/R3K3 w - - 0 12")
    assert rules.verdict(late, [5, -5, 0, 3])[0] == "1/2-1/2"
    assert rules.verdict(late, [5, -50, 0, 3]) is None


def test_adjudication_thresholds_are_inclusive_as_in_cutechess() -> None:
    """cutechess's GameAdjudicator counts a score *at* the threshold (``score <= resign``,
    ``|score| <= draw``), starts the draw rule *at* its move number and ends a game *at* its
    length; each verdict is the whole tuple: result, Termination tag, reason."""
    resign = Adjudicator(resign_moves=2, resign_score=500)
    start = chess.Board()
    assert resign.verdict(start, [-500, -500, -500, -500]) == (
        "0-1", "adjudication", "White loses by adjudication: both engines see -500 cp for 2 moves")
    assert resign.verdict(start, [500, 500, 500, 500]) == (
        "1-0", "adjudication", "Black loses by adjudication: both engines see +500 cp for 2 moves")
    assert resign.verdict(start, [-499, -500, -500, -500]) is None
    assert resign.verdict(start, [-500, -500, -500]) is None           # three plies of four

    draw = Adjudicator(draw_move_number=12, draw_moves=2, draw_score=10)
    at_12 = chess.Board("r3k3/8/8/8/8/8/8/R3K3 w - - 0 12")
    assert draw.verdict(at_12, [10, -10, 10, -10]) == (
        "1/2-1/2", "adjudication", "Draw by adjudication: scores within 10 cp for 2 moves")
    assert draw.verdict(at_12, [10, -11, 10, -10]) is None
    assert draw.verdict(at_12, [0, 0, 0]) is None                      # three plies of four
    at_11 = chess.Board("r3k3/8/8/8/8/8/8/R3K3 w - - 0 11")
    assert draw.verdict(at_11, [0, 0, 0, 0]) is None
    no_count = Adjudicator(draw_move_number=12, draw_moves=0, draw_score=10)
    assert no_count.verdict(at_12, [0, 0, 0, 0]) is None               # movecount 0: off

    length = Adjudicator(max_plies=4)
    assert length.verdict(board_after(None, "e4 e5 Nf3"), []) is None
    assert length.verdict(board_after(None, "e4 e5 Nf3 Nc6"), []) == (
        "1/2-1/2", "adjudication", "Draw by adjudication: 4 plies")


@pytest.mark.skipif(not GAVIOTA.is_dir(), reason="Debian package gaviotatb not installed")
def test_tablebase_adjudication() -> None:
    """Gaviota 3-piece tables (Debian gaviotatb): KQK is a win, KK-like KNK a draw."""
    rules = Adjudicator(tablebases=str(GAVIOTA))
    win = rules.verdict(chess.Board("8/8/8/8/8/8/2k5/K6Q b - - 0 1"), [])
    assert win is not None and win[0] == "1-0" and "tablebase" in win[2]
    assert rules.verdict(chess.Board("8/8/8/8/8/8/2k5/K6N w - - 0 1"), [])[0] == "1/2-1/2"
    rules.close()
    with pytest.raises(GamesError, match="no Syzygy"):
        Adjudicator(tablebases=str(OPENINGS))


def kpk_positions(count: int, seed: int) -> list[chess.Board]:
    """Random legal positions of king and pawn against king, the pawn White's or Black's,
    either side to move, none of them over."""
    rng = random.Random(seed)
    boards: list[chess.Board] = []
    while len(boards) < count:
        board = chess.Board(None)
        pawn = chess.Piece(chess.PAWN, rng.random() < 0.5)
        squares = rng.sample(range(64), 3)
        board.set_piece_at(squares[0], chess.Piece(chess.KING, chess.WHITE))
        board.set_piece_at(squares[1], chess.Piece(chess.KING, chess.BLACK))
        board.set_piece_at(squares[2], pawn)
        board.turn = rng.random() < 0.5
        if board.is_valid() and not board.is_game_over():
            boards.append(board)
    return boards


def tablebase_verdict(wdl: int, turn: chess.Color) -> tuple[str, str, str]:
    """The verdict for a win/draw/loss of the side to move, as cutechess words it."""
    if wdl == 0:
        return ("1/2-1/2", "adjudication", "Draw by tablebase adjudication")
    white = (wdl > 0) == (turn == chess.WHITE)
    return ("1-0" if white else "0-1", "adjudication",
            f"{'White' if white else 'Black'} wins by tablebase adjudication")


@pytest.mark.skipif(not GAVIOTA.is_dir(), reason="Debian package gaviotatb not installed")
def test_syzygy_adjudication_agrees_with_gaviota() -> None:
    """Syzygy WDL tables (tests/fixtures/syzygy, from python-chess's test data): on 300
    random KPK positions every verdict is the one Gaviota's KPK table (another generator,
    another format) gives, with wins for both colours and draws among them."""
    rules = Adjudicator(tablebases=str(SYZYGY))
    assert (rules.syzygy is not None, rules.gaviota, rules.tablebase_pieces) == (True, None, 3)
    seen: Counter[str] = Counter()
    with chess.gaviota.open_tablebase(str(GAVIOTA)) as gaviota:
        for board in kpk_positions(300, seed=1):
            expected = tablebase_verdict(gaviota.probe_wdl(board), board.turn)
            assert rules.verdict(board, []) == expected, board.fen()
            seen[expected[0]] += 1
    rules.close()
    assert set(seen) == {"1-0", "0-1", "1/2-1/2"}, seen


def test_syzygy_adjudication_of_pieces_and_what_it_leaves_alone(tmp_path: Path) -> None:
    """KQ and KR against a lone king win for their side, whoever moves; KN and KB against
    a king draw. Castling rights (no table covers them) and a fourth piece (beyond the
    tables) leave the game to the engines."""
    rules = Adjudicator(tablebases=str(SYZYGY))
    cases = {
        "8/8/8/8/8/8/2k5/K6Q b - - 0 1": "1-0", "8/8/8/8/8/8/2k5/K6Q w - - 0 1": "1-0",
        "q6k/8/8/8/8/8/8/2K5 w - - 0 1": "0-1", "7k/8/8/8/8/8/r7/2K5 b - - 0 1": "0-1",
        "8/8/8/3k4/8/8/8/R3K3 w - - 0 1": "1-0",
        "8/8/8/3k4/8/8/8/N3K3 w - - 0 1": "1/2-1/2", "8/8/8/3k4/8/8/8/B3K3 b - - 0 1": "1/2-1/2",
    }
    for fen, result in cases.items():
        verdict = rules.verdict(chess.Board(fen), [])
        assert verdict is not None and verdict[0] == result, fen
    assert rules.verdict(chess.Board("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1"), []) is None
    assert rules.verdict(chess.Board("4k3/8/8/8/8/8/8/RN2K3 w - - 0 1"), []) is None
    rules.close()


@pytest.mark.skipif(not GAVIOTA.is_dir(), reason="Debian package gaviotatb not installed")
def test_a_position_without_a_syzygy_table_falls_back_to_gaviota(tmp_path: Path) -> None:
    """Syzygy holding only KQvK, then Gaviota: a KPK position has no Syzygy table, so
    Gaviota's verdict is taken; KQK is still Syzygy's."""
    only_kqk = tmp_path / "syzygy"
    only_kqk.mkdir()
    (only_kqk / "KQvK.rtbw").write_bytes((SYZYGY / "KQvK.rtbw").read_bytes())
    rules = Adjudicator(tablebases=os.pathsep.join([str(only_kqk), str(GAVIOTA)]))
    assert rules.syzygy is not None and rules.gaviota is not None
    won = chess.Board("8/8/8/8/8/2k5/4P3/4K3 w - - 0 1")   # the pawn queens (Gaviota: win)
    with chess.gaviota.open_tablebase(str(GAVIOTA)) as gaviota:
        assert gaviota.probe_wdl(won) == 1
    assert rules.verdict(won, []) == tablebase_verdict(1, chess.WHITE)
    assert rules.verdict(chess.Board("8/8/8/8/8/8/2k5/K6Q b - - 0 1"), [])[0] == "1-0"
    rules.close()


@pytest.mark.skipif(not GAVIOTA.is_dir(), reason="Debian package gaviotatb not installed")
def test_tablebases_split_over_folders_and_the_folders_refused(tmp_path: Path) -> None:
    """Tables of one kind in two folders are one set (KQK from the first, KRK from the
    second); the most pieces is read from the file names (``KRvKN.rtbw``, ``krkn.gtb.cp4``:
    4); empty entries in the list are ignored; no folders, no tables; a missing folder and a
    folder without tables are refused by name."""
    from pipelines.games.adjudication import open_tablebases

    def folder(name: str, tables: dict[str, Path]) -> str:
        path = tmp_path / name
        path.mkdir()
        for table, source in tables.items():
            (path / table).write_bytes(source.read_bytes())
        return str(path)

    kqk, krk = chess.Board("8/8/8/8/8/8/2k5/K6Q b - - 0 1"), chess.Board(
        "8/8/8/3k4/8/8/8/R3K3 w - - 0 1")
    for tables in ([folder("s1", {"KQvK.rtbw": SYZYGY / "KQvK.rtbw"}),
                    folder("s2", {"KRvK.rtbw": SYZYGY / "KRvK.rtbw"})],
                   [folder("g1", {"kqk.gtb.cp4": GAVIOTA / "kqk.gtb.cp4"}),
                    folder("g2", {"krk.gtb.cp4": GAVIOTA / "krk.gtb.cp4"})]):
        rules = Adjudicator(tablebases=os.pathsep.join(["", *tables, ""]))
        assert rules.tablebase_pieces == 3
        assert rules.verdict(kqk, []) == tablebase_verdict(2, chess.WHITE)
        assert rules.verdict(krk, []) == tablebase_verdict(2, chess.WHITE)
        rules.close()
    four = folder("four", {"KQvK.rtbw": SYZYGY / "KQvK.rtbw", "KRvKN.rtbw": SYZYGY / "KRvK.rtbw"})
    four_gtb = folder("four_gtb", {"krkn.gtb.cp4": GAVIOTA / "krk.gtb.cp4"})
    syzygy, gaviota, pieces = open_tablebases(four)
    assert (gaviota, pieces) == (None, 4)
    syzygy.close()
    syzygy, gaviota, pieces = open_tablebases(four_gtb)
    assert (syzygy, pieces) == (None, 4)
    gaviota.close()
    assert open_tablebases(None) == open_tablebases("") == (None, None, 0)
    assert Adjudicator().verdict(kqk, []) is None
    with pytest.raises(GamesError) as missing:
        open_tablebases(str(tmp_path / "nowhere"))
    assert str(missing.value) == f"tablebase folder {str(tmp_path / 'nowhere')!r} not found"
    with pytest.raises(GamesError) as empty:
        open_tablebases(folder("empty", {"KQvK.txt": SYZYGY / "KQvK.rtbw"}))
    assert str(empty.value) == (
        f"no Syzygy (.rtbw) or Gaviota (.gtb.cp4) tables in {str(tmp_path / 'empty')!r}")


def test_cursed_wins_and_blessed_losses_are_draws_under_the_fifty_move_rule() -> None:
    """Syzygy's WDL 1 (a win only past the 50-move rule) and -1 (a loss saved by it) are
    draws; 2 and -2 stand. (No 3- or 4-piece table has such positions, so this is the rule
    itself, as python-chess documents probe_wdl's values.)"""
    from pipelines.games.adjudication import fifty_move_wdl

    assert [fifty_move_wdl(wdl) for wdl in (-2, -1, 0, 1, 2)] == [-2, 0, 0, 0, 2]


def test_tournament_records_game_pairs_with_pgn(home: Path, stockfish_path: str) -> None:
    """Two games from one EPD opening, colours reversed, each row with its PGN: cutechess
    tags, SetUp/FEN of the opening, per-move eval/depth/time comments, PlyCount matching;
    the Event names the players (issue 49 §4: "chesslab tournament" for every match)."""
    config = TournamentConfig.tiny(engines=(f"{SF}#sf_a", f"{SF}#sf_b"),
                                   openings=str(OPENINGS / "two_positions.epd"))
    summary = run_tournament(config, Lake(home))
    assert (summary.planned, summary.played, summary.status) == (2, 2, "finished")
    rows = finished_games(Lake(home), summary.tournament_id)
    assert [(r["white"], r["black"]) for r in rows] == [("sf_a", "sf_b"), ("sf_b", "sf_a")]
    for row in rows:
        game = chess.pgn.read_game(io.StringIO(row["pgn"]))
        assert game.headers["FEN"] == row["opening_fen"] == load_openings(config)[0].fen
        assert game.headers["ECO"] == "B00" and game.headers["Opening"] == "King's pawn"
        assert int(game.headers["PlyCount"]) == row["plies"] == len(list(game.mainline()))
        assert game.headers["Termination"] == row["termination"]
        assert game.headers["Result"] == row["result"]
        assert game.headers["TimeControl"] == "-"
        assert game.headers["Event"] == "sf_a vs sf_b"
        comment = next(iter(game.mainline())).comment
        assert re.fullmatch(r"[+-](\d+\.\d\d|M\d+)/\d+ \d+\.\d{3}s", comment), comment
        assert row["engine_s"] <= row["duration_s"]
    con = connect(home)
    status = con.execute("select status, games_done from tournament_status").fetchall()
    assert status == [("finished", 2)]
    assert con.execute("select event from tournaments").fetchall() == [("sf_a vs sf_b",)]


def test_forfeits_from_crash_hang_and_illegal_move(home: Path, stockfish_path: str,
                                                   engines_file: str) -> None:
    """A crash forfeits as 'abandoned' and the engine is restarted for the next game (it
    plays its two moves again); a hang forfeits as 'stalled connection' without a clock and
    'time forfeit' with one; an illegal move as 'illegal move'. The reason is in the PGN."""
    base = dict(engines_file=engines_file, concurrency=1, move_timeout_s=1.0)
    crash = run_tournament(TournamentConfig.tiny(engines=("crash", SF), **base), Lake(home))
    rows = finished_games(Lake(home), crash.tournament_id)
    assert [r["termination"] for r in rows] == ["abandoned", "abandoned"]
    assert [r["result"] for r in rows] == ["0-1", "1-0"]
    assert [r["plies"] for r in rows] == [4, 5]          # restarted: two moves in each game
    assert "exit code 3" in rows[0]["reason"] and "exit code 3" in rows[0]["pgn"]
    hang = run_tournament(TournamentConfig.tiny(engines=("hang", SF), rounds=1, **base),
                          Lake(home))
    hung = finished_games(Lake(home), hang.tournament_id)
    assert [r["termination"] for r in hung] == ["stalled connection"] * 2
    timed = run_tournament(TournamentConfig.tiny(engines=("hang", SF), nodes=None, tc="1+0.1",
                                                 **base), Lake(home))
    assert finished_games(Lake(home), timed.tournament_id)[0]["termination"] == "time forfeit"
    illegal = run_tournament(TournamentConfig.tiny(engines=("illegal", SF), **base), Lake(home))
    rows = finished_games(Lake(home), illegal.tournament_id)
    assert rows[0]["termination"] == "illegal move" and rows[0]["result"] == "0-1"
    assert '[Termination "illegal move"]' in rows[0]["pgn"]


def test_time_forfeits_record_time_against_budget_and_are_marked(
        home: Path, stockfish_path: str, engines_file: str) -> None:
    """Issue 48: 4 of 14 clock games on a busy cluster were lost on time and nothing said
    so. At 1+0.1, an engine that stops answering after two moves loses both games on time:
    each game stores each side's measured time against its budget (the hung side's budget
    its second plus two increments, its time past it, the last wait included; Stockfish's
    within its own), the standings line marks the forfeits, and the summary counts them and
    warns, as it does above 1% of the games and not at 1%."""
    from types import SimpleNamespace

    from flows.commands.tournament import report

    lines: list[str] = []
    config = TournamentConfig.tiny(engines=("hang", f"{SF}#sf"), nodes=None, tc="1+0.1",
                                   engines_file=engines_file, concurrency=1, progress=True,
                                   rating_interval=2)
    summary = run_tournament(config, Lake(home), progress=lines.append)
    rows = finished_games(Lake(home), summary.tournament_id)
    assert [r["termination"] for r in rows] == ["time forfeit"] * 2
    for row in rows:
        hang, sf = ("white", "black") if row["white"] == "hang" else ("black", "white")
        assert row[f"{hang}_budget_s"] == pytest.approx(1.2)
        assert row[f"{hang}_time_s"] > 1.4            # its budget and most of the margin
        sf_moves = 2 if hang == "white" else 3
        assert row[f"{sf}_budget_s"] == pytest.approx(1 + 0.1 * sf_moves)
        assert 0 < row[f"{sf}_time_s"] <= row[f"{sf}_budget_s"]
    assert summary.time_forfeits == {"hang": 2, "sf": 0}
    standing = [line for line in lines if " vs " in line]
    assert standing and standing[-1].split("; ")[1] == "lost on time: hang 2, sf 0"
    warning = ("warning: 2 of 2 games lost on time (100.0%: hang 2), above 1%: the engines "
               "are short of CPU for this time control")
    assert sum(warning in line for line in lines) == 1
    text = report(SimpleNamespace(tournament=summary, ratings=None))
    assert "lost on time: hang 2, sf 0 (2 of 2 games, 100.0%)" in text and warning in text
    at_one = TournamentSummary("t", ["a", "b"], 100, 0, played=100, time_forfeits={"a": 1})
    assert at_one.forfeit_warning() is None
    assert TournamentSummary("t", ["a", "b"], 100, 0, played=100,
                             time_forfeits={"a": 1, "b": 1}).forfeit_warning() is not None


def test_interrupted_tournament_resumes_missing_games(home: Path, stockfish_path: str,
                                                      engines_file: str) -> None:
    """Killed after its first batch (one game pair), the same command plays only the two
    missing games: same tournament id, every slot once, the first pair untouched."""
    config = TournamentConfig.tiny(engines=(f"{SF}#sf", "crash"), rounds=2, concurrency=1,
                                   engines_file=engines_file)

    def interrupt(line: str) -> None:
        raise KeyboardInterrupt(line)

    with pytest.raises(KeyboardInterrupt):
        run_tournament(config, Lake(home), progress=interrupt)
    first = finished_games(Lake(home), Tournament(config, Lake(home)).id)
    assert [r["game_key"] for r in first] == ["0:0:0", "0:0:1"]
    summary = run_tournament(config, Lake(home))
    assert (summary.already_done, summary.played, summary.planned) == (2, 2, 4)
    rows = finished_games(Lake(home), summary.tournament_id)
    assert sorted(r["game_key"] for r in rows) == ["0:0:0", "0:0:1", "0:1:0", "0:1:1"]
    assert [r["pgn"] for r in rows[:2]] == [r["pgn"] for r in first]
    con = connect(home)
    events = [e for (e,) in con.execute(
        "select event from tournament_events order by recorded_at").fetchall()]
    assert events == ["started", "interrupted", "resumed", "finished"]


def test_tournament_stops_when_the_sprt_decides(home: Path, stockfish_path: str) -> None:
    """Full Stockfish against its 1350 rung wins (nearly) every pair: with elo1 = 300
    (logistic) and alpha = beta = 0.2, three won pairs give LLR 1.59 > log(4), so the SPRT
    accepts H1 before the 8 planned pairs, right after a complete pair."""
    config = TournamentConfig.tiny(engines=(SF, "stockfish@1350"), rounds=8, concurrency=1,
                                   sprt_elo0=0, sprt_elo1=300, sprt_alpha=0.2, sprt_beta=0.2,
                                   sprt_model="logistic")
    summary = run_tournament(config, Lake(home))
    assert summary.status == "sprt_stopped"
    assert summary.sprt is not None and summary.sprt.decision == "H1"
    assert summary.played < summary.planned and summary.played % 2 == 0
    con = connect(home)
    assert con.execute("select decision from sprt_results").fetchall() == [("H1",)]


def test_no_sprt_stop_plays_every_round_and_records_the_verdict(home: Path,
                                                                 stockfish_path: str) -> None:
    """``--no-sprt-stop``: the same match as above plays its 4 planned pairs after the SPRT
    has decided (a comparison at a fixed number of games), and its verdict is recorded."""
    config = TournamentConfig.tiny(engines=(SF, "stockfish@1350"), rounds=4, concurrency=1,
                                   sprt_elo0=0, sprt_elo1=300, sprt_alpha=0.2, sprt_beta=0.2,
                                   sprt_model="logistic", sprt_stop=False)
    summary = run_tournament(config, Lake(home))
    assert summary.played == summary.planned == 8
    assert summary.sprt is not None and summary.sprt.decision == "H1"


def test_a_sweep_stops_the_sprt_of_a_broken_engine(home: Path, engines_file: str) -> None:
    """Issue 48: Stockfish against hce-simple went 80-0 at normalized bounds 0, 5 and was
    played to the cap (LLR 0.806, as fishtest computes it: the GSPRT needs 147 won pairs).
    With ``--sprt-sweep 4`` the match against an engine that loses every game (an illegal
    move on its third search) stops after its first 4 pairs, all won: H1, the reason said;
    without it the same match plays on (its LLR after 4 pairs is 0.08)."""
    stub = ENGINES / "stub_engine.py"
    players = Path(engines_file).read_text() + \
        f'[players.stub]\ncommand = ["{sys.executable}", "{stub}"]\n'
    Path(engines_file).write_text(players)
    base = dict(engines=("stub", "illegal"), engines_file=engines_file, rounds=10,
                concurrency=1, sprt_elo0=0, sprt_elo1=5)
    summary = run_tournament(TournamentConfig.tiny(sprt_sweep=4, **base), Lake(home))
    assert (summary.status, summary.played) == ("sprt_stopped", 8)
    assert summary.sprt is not None and summary.sprt.decision == "H1"
    assert summary.sprt.counts == (0, 0, 0, 0, 4)
    assert summary.sprt.describe().endswith(
        "-> accept H1 (a sweep: the first 4 game pairs all won)")
    assert summary.sprt.llr == pytest.approx(0.0806, abs=1e-4)
    with pytest.raises(TournamentError, match="sprt_sweep must be >= 0, got -1"):
        TournamentConfig.tiny(sprt_sweep=-1, **base)


def test_an_sprt_s_rounds_only_cap_it() -> None:
    """Issue 10: an SPRT's rounds (evaluate's --max-games) changed its tournament id, so a
    larger cap replayed every game. They stay out of an SPRT's id, not out of a plain
    tournament's, nor out of an SPRT's on a Polyglot book (walked once per round)."""
    def config(rounds: int, elo1: float | None = 10.0, openings: str | None = None
               ) -> TournamentConfig:
        return TournamentConfig.tiny(rounds=rounds, openings=openings,
                                     sprt_elo0=None if elo1 is None else 0.0, sprt_elo1=elo1)

    def identity(config: TournamentConfig) -> str:
        return tournament_id(config, resolve_players(config), None)

    assert identity(config(50)) == identity(config(100))
    assert identity(config(50)) != identity(config(50, elo1=5.0))
    assert identity(config(50, elo1=None)) != identity(config(100, elo1=None))
    book = str(OPENINGS / "tiny_book.bin")
    assert (rounds_only_cap(config(50)), rounds_only_cap(config(50, openings=book))) == (
        True, False)


def test_a_rebuilt_own_engine_starts_a_new_tournament(monkeypatch: pytest.MonkeyPatch) -> None:
    """An own engine's code revision is part of the tournament id, so a rerun after the
    engine changed plays a new match instead of resuming one with the old build's games;
    a tournament of external engines alone keeps its id."""
    import pipelines.tournament.schedule as schedule

    own = TournamentConfig.tiny(engines=("alphabeta", "alphabeta:eval=hce-simple"))
    external = TournamentConfig.tiny(engines=(SF, "stockfish?Hash=32"))
    before = [tournament_id(c, resolve_players(c), None) for c in (own, external)]
    monkeypatch.setattr(schedule, "own_version", lambda: "0.1.0+rev.00000000")
    after = [tournament_id(c, resolve_players(c), None) for c in (own, external)]
    assert before[0] != after[0] and before[1] == after[1]


def test_engine_that_cannot_start_is_a_user_error(home: Path, stockfish_path: str) -> None:
    """Stockfish 15.1's UCI_Elo starts at 1350: a 1000 rung fails before any game is played
    (not a tournament of forfeits) and nothing is written."""
    config = TournamentConfig.tiny(engines=(SF, "stockfish@1000"))
    with pytest.raises(TournamentError, match="stockfish@1000 failed to start.*1350"):
        run_tournament(config, Lake(home))
    assert not Lake(home).parts("tournaments")


def test_labels_and_tournament_players_share_one_engine_identity(
        home: Path, stockfish_path: str, selfplay_positions: list[dict[str, object]]) -> None:
    """Issue 8, one identity for every player: Stockfish labelling with Threads=1, Hash=16
    and Stockfish playing a tournament with ``?Threads=1&Hash=16`` have one engine_id that
    joins one ``engines`` row and the labels; Hash=32 is another engine. (Before, labels
    hashed the id name and tournaments the command line, so the two never joined.)"""
    from flows.label import LABEL
    from flows.step import run_step
    from pipelines.label import LabelConfig

    lake = Lake(home)
    lake.write("positions", selfplay_positions[:4])
    labelled = run_step(LABEL, LabelConfig.tiny(depths=(2,), hash_mb=16), lake)
    config = TournamentConfig.tiny(engines=(f"{SF}#sf_a", "stockfish?Threads=1&Hash=32#sf_b"),
                                   openings=str(OPENINGS / "two_positions.epd"))
    run_tournament(config, Lake(home))
    rows = connect(home).execute(
        "select p.player, p.engine_id, e.name, e.version, e.kind, e.options, "
        "(select count(*) from labels l where l.engine_id = p.engine_id) "
        "from tournament_players p join engines e using (engine_id) order by p.player"
    ).fetchall()
    sf_a, sf_b = rows
    assert sf_a == ("sf_a", labelled.engine_id, "Stockfish", "15.1", "external",
                    '{"Hash":"16","Threads":"1"}', 4)
    assert sf_b[1] != labelled.engine_id and sf_b[1].startswith("stockfish-15.1-")
    assert sf_b[5:] == ('{"Hash":"32","Threads":"1"}', 0)
    assert lake.read("engines").num_rows == 2


# --------------------------------------------------------------------------------------------
# Issue 32: every player and model checked before the first game
# --------------------------------------------------------------------------------------------

def tournament_cli(home: Path, *engines: str) -> int:
    from flows.cli import main

    return main(["--home", str(home), "tournament", *engines, "--nodes", "50", "--rounds", "1",
                 "--move-timeout-s", "3", "--concurrency", "1", "--no-prefect", "--no-rate"])


def nothing_played(home: Path) -> bool:
    lake = Lake(home)
    return not lake.parts("tournaments") and not lake.parts("tournament_games")


def test_a_misspelled_engine_setting_is_named_before_any_game(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``alphabeta:eval=hcee`` used to fail as "engine process died unexpectedly": now one
    line names the spec, the bad value and the valid ones, exit 2, nothing written."""
    for spec, needles in (
            ("alphabeta:eval=hcee", ("'hcee'", "valid: hce, hce-simple, nnue, nnue-hybrid")),
            ("alphabeta:evl=hce", ("no setting 'evl'", "did you mean 'eval'")),
            ("alphabeta?Hash=0", ("option 'Hash' takes 1..65536, got '0'",))):
        assert tournament_cli(home, spec, "alphabeta:hash=1") == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"chesslab tournament: error: engine '{spec}': "), err
        assert all(needle in err for needle in needles) and "\n" not in err, err
        assert "died" not in err
    assert nothing_played(home)


def register_model(lake: Lake, kind: str, version: int, artifact: Path) -> None:
    """A finished model as training records it: its file's real sha256."""
    import hashlib

    from pipelines.models.registry import record_model

    digest = hashlib.sha256(artifact.read_bytes()).hexdigest()
    record_model(lake, kind, version, f"{kind}-test", "{}", artifact, digest)


def test_models_that_cannot_load_stop_the_tournament_before_any_game(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 32 item 5: an unknown model kind, a damaged policy_value.pt (recorded with its
    hash: the export itself was cut short) and a replaced NNUE file used to give a tournament
    of forfeits (the engine accepted go and never answered) that exited 0. Now each is one
    line naming the player and the model, exit 2, before any game and with nothing stored."""
    from engines.nnue.netfile import random_arrays, save_arrays
    from engines.puct.network import Architecture, random_network, save_network

    lake = Lake(home)
    folder = home / "models"
    (folder / "policy_value" / "1").mkdir(parents=True)
    (folder / "nnue" / "1").mkdir(parents=True)
    pt = save_network(random_network(Architecture(1, 8, 16)),
                      folder / "policy_value" / "1" / "policy_value.pt")
    pt.write_bytes(pt.read_bytes()[: pt.stat().st_size // 2])
    register_model(lake, "policy_value", 1, pt)
    net = folder / "nnue" / "1" / "nnue.npz"
    save_arrays(net, random_arrays(1))
    register_model(lake, "nnue", 1, net)
    recorded = connect(home).execute("select artifact_sha256 from models where kind = 'nnue'"
                                     ).fetchone()[0]
    save_arrays(net, random_arrays(2))          # another net under the registered name
    import hashlib

    found = hashlib.sha256(net.read_bytes()).hexdigest()
    cases = [
        ("puct:model=foo@1", "engine 'puct:model=foo@1': no model 'foo@1'"),
        ("alphabeta:eval=nnue,model=foo@1", "no model 'foo@1'"),
        ("puct:model=policy_value@1", "policy_value.pt"),
        ("alphabeta:eval=nnue,model=nnue@1", f"model nnue@1: artifact '{net}' has sha256 "
                                             f"{found}, the registry recorded {recorded}"),
    ]
    for spec, needle in cases:
        assert tournament_cli(home, spec, "alphabeta:hash=1") == 2, spec
        err = capsys.readouterr().err.strip()
        assert err.startswith("chesslab tournament: error: ") and needle in err, err
        assert "\n" not in err
    assert nothing_played(home)


def hand_elo(wins: int, draws: int, losses: int) -> tuple[float, float, float]:
    """Elo and 95% interval from the score and its standard error (cutechess-cli's way)."""
    n = wins + draws + losses
    score = (wins + draws / 2) / n
    sd = math.sqrt((wins * (1 - score) ** 2 + draws * (0.5 - score) ** 2
                    + losses * score ** 2) / n / n)

    def elo(s: float) -> float:
        return math.inf if s >= 1 else -math.inf if s <= 0 else -400 * math.log10(1 / s - 1)
    return elo(score), elo(score - 1.959964 * sd), elo(score + 1.959964 * sd)


def test_standings_lines_by_hand() -> None:
    """Three players: a line each, best score first, with W/D/L, score and Elo interval."""
    from pipelines.tournament import standings

    games = [("a", "b", 1.0), ("b", "a", 0.5), ("a", "c", 1.0), ("c", "a", 0.0),
             ("b", "c", 0.5), ("c", "b", 1.0)]
    counts = standings.player_counts(["a", "b", "c"], games)
    assert counts == {"a": (3, 1, 0), "b": (0, 2, 2), "c": (1, 1, 2)}
    lines = standings.report(["a", "b", "c"], counts, done=6, planned=12)
    elo, low, high = hand_elo(1, 1, 2)
    assert lines[0] == "[6/12] standings:"
    assert [line.split()[0] for line in lines[1:]] == ["a", "c", "b"]
    assert lines[2] == (f"  c  +1 =1 -2, score 37.5%, Elo {elo:+.1f} [{low:+.1f}, {high:+.1f}] "
                        f"(95%)")
    assert "score 87.5%" in lines[1] and "+inf]" in lines[1]


def test_running_score_elo_and_llr_every_n_games(home: Path, stockfish_path: str) -> None:
    """Issue 32 §4, like cutechess-cli's -ratinginterval: after every 2nd game the match line
    with the first player's score, Elo and interval and the SPRT's LLR and parameters, equal
    to what the stored games give by hand."""
    from pipelines.sprt import pentanomial, sprt

    lines: list[str] = []
    config = TournamentConfig.tiny(engines=(f"{SF}#a", f"{SF}#b"), rounds=2, concurrency=1,
                                   nodes=1500, rating_interval=2, sprt_elo0=0, sprt_elo1=5)
    summary = run_tournament(config, Lake(home), progress=lines.append)
    assert summary.played == 4
    reports = [line for line in lines if " vs " in line]
    assert [line.split()[0] for line in reports] == ["[2/4]", "[4/4]"]
    games = finished_games(Lake(home), summary.tournament_id)
    scores = [g["white_score"] if g["white"] == "a" else 1 - g["white_score"] for g in games]
    wins, draws = scores.count(1.0), scores.count(0.5)
    losses = len(scores) - wins - draws
    pairs = {}
    for game, score in zip(games, scores, strict=True):
        pairs.setdefault((game["pairing"], game["round"]), []).append(score)
    llr = sprt(pentanomial([sum(p) for p in pairs.values()]), 0, 5).llr
    elo, low, high = hand_elo(wins, draws, losses)
    text = {math.inf: "+inf", -math.inf: "-inf"}
    shown = [text.get(v, f"{v:+.1f}") for v in (elo, low, high)]
    assert reports[-1] == (
        f"[4/4] a vs b: +{wins} ={draws} -{losses}, score {(wins + draws / 2) / 4:.1%}, "
        f"Elo {shown[0]} [{shown[1]}, {shown[2]}] (95%); SPRT elo0=0 elo1=5 alpha=0.05 "
        f"beta=0.05 (normalized Elo): LLR {llr:.3f} (-2.944, 2.944) -> continue")


def test_rating_interval_zero_prints_no_standings(home: Path, stockfish_path: str) -> None:
    lines: list[str] = []
    config = TournamentConfig.tiny(engines=(f"{SF}#a", f"{SF}#b"), concurrency=1, nodes=1000,
                                   rating_interval=0)
    run_tournament(config, Lake(home), progress=lines.append)
    assert len(lines) == 2 and all(" vs " not in line for line in lines)
    with pytest.raises(TournamentError, match="rating_interval must be >= 0, got -1"):
        TournamentConfig.tiny(rating_interval=-1)


def test_repeated_games_are_flagged_and_warned_of_for_an_sprt(
        home: Path, stockfish_path: str, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 49 §4: deterministic engines at fixed nodes with no --openings played 40 games
    that were 2 distinct games, fed to an SPRT as 20 independent pairs. Stockfish on one
    thread at 2,000 nodes plays the same pair every round: the run warns (a rating of the
    same games counted again), and an SPRT's run says once that its pairs repeat."""
    config = TournamentConfig.tiny(engines=(f"{SF}#sf_a", f"{SF}#sf_b"), rounds=3,
                                   concurrency=1)
    summary = run_tournament(config, Lake(home))
    assert (summary.played, summary.repeated) == (6, 4)
    assert "4 of the 6 games played repeat an earlier game move for move" in caplog.text
    sprt = dataclasses.replace(config, rounds=8, sprt_elo0=0.0, sprt_elo1=10.0)
    lines: list[str] = []
    run_tournament(sprt, Lake(home / "sprt"), progress=lines.append)
    said = [line for line in lines if "the SPRT counts the same pairs" in line]
    assert len(said) == 1 and said[0].startswith("warning: tournament ")


def test_a_misspelt_option_of_an_external_engine_is_one_line(home: Path,
                                                             stockfish_path: str) -> None:
    """Issue 49 §4: ``uci:PATH?Hsh=16`` gave a Dask "Compute Failed" block with a traceback
    and the engine's whole option list, then the same line again: now one line naming the
    option and the nearest one the engine declares."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "flows.cli", "--home", str(home), "tournament",
         f"uci:{stockfish_path}?Hsh=16", f"{SF}#sf", "--nodes", "100", "--no-prefect"],
        capture_output=True, text=True, timeout=300, cwd=Path(__file__).parents[2])
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Compute Failed" not in done.stderr, done.stderr
    assert lines[0].startswith("chesslab tournament: error: worker ")
    assert lines[0].endswith(f"uci:{stockfish_path}?Hsh=16: the engine has no option 'Hsh' "
                             f"(did you mean 'Hash'?)"), lines


# --- issue 48: what a tournament's mutation run found unchecked --------------------------------

def board_after(fen: str | None, sans: str = "") -> chess.Board:
    board = chess.Board(fen) if fen else chess.Board()
    for san in sans.split():
        board.push_san(san)
    return board


@pytest.mark.parametrize("fen,sans,verdict", [
    (None, "f3 e5 g4 Qh4#", ("0-1", "normal", "Black mates")),
    (None, "e4 e5 Bc4 Nc6 Qh5 Nf6 Qxf7#", ("1-0", "normal", "White mates")),
    ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "", ("1/2-1/2", "normal", "Draw by stalemate")),
    ("8/8/8/4k3/8/8/8/4K3 w - - 0 1", "",
     ("1/2-1/2", "normal", "Draw by insufficient mating material")),
    ("8/8/8/4k3/8/8/8/R3K3 w - - 100 80", "", ("1/2-1/2", "normal", "Draw by fifty moves rule")),
    ("8/8/8/4k3/8/8/8/R3K3 w - - 150 100", "", ("1/2-1/2", "normal", "Draw by fifty moves rule")),
    (None, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8",
     ("1/2-1/2", "normal", "Draw by 3-fold repetition")),
    (None, "Nf3 Nf6 Ng1 Ng8 " * 4, ("1/2-1/2", "normal", "Draw by 3-fold repetition")),
    ("8/8/8/4k3/8/8/8/R3K3 w - - 99 80", "", None),
    (None, "Nf3 Nf6 Ng1 Ng8", None),
])
def test_a_game_over_by_the_rules_is_worded_as_cutechess_words_it(
        fen: str | None, sans: str, verdict: tuple[str, str, str] | None) -> None:
    """Mates by each side, stalemate, bare kings, the fifty-move rule at 100 plies (no claim
    needed) and at 75 moves, threefold and fivefold repetition; 99 plies and a second
    repetition play on. The words are cutechess's (its PGN's Termination comments)."""
    from pipelines.games.game import rules_verdict

    assert rules_verdict(board_after(fen, sans)) == verdict


def test_a_time_forfeit_against_a_side_that_cannot_mate_is_a_draw() -> None:
    """FIDE 6.9 as cutechess applies it: the side that lost on time draws when its opponent
    has no mating material; any other failure (a crash), or an opponent who can mate, loses
    the game; the material that counts is the opponent's, not the side's own."""
    from pipelines.games.game import EngineFailure, forfeit

    lone_black = chess.Board("8/8/8/4k3/8/8/8/Q3K3 w - - 0 1")
    lone_white = chess.Board("q7/8/8/4k3/8/8/8/4K3 w - - 0 1")
    late = EngineFailure("time forfeit", "White loses on time")
    assert forfeit(lone_black, chess.WHITE, late) == (
        "1/2-1/2", "time forfeit", "White loses on time; opponent cannot mate: draw")
    assert forfeit(lone_white, chess.WHITE, late) == (
        "0-1", "time forfeit", "White loses on time")
    assert forfeit(lone_white, chess.BLACK, EngineFailure("time forfeit", "Black loses on time")
                   ) == ("1/2-1/2", "time forfeit",
                         "Black loses on time; opponent cannot mate: draw")
    crash = EngineFailure("abandoned", "White's engine crashed")
    assert forfeit(lone_black, chess.WHITE, crash) == ("0-1", "abandoned", "White's engine crashed")
    assert forfeit(lone_black, chess.BLACK, crash) == ("1-0", "abandoned", "White's engine crashed")


def test_an_engine_s_score_is_recorded_from_white_s_point_of_view() -> None:
    """What the adjudicator compares: a score reported by the side to move, turned to White's
    view; a mate as 100,000 cp less the moves to it (python-chess's ``mate_score``)."""
    from chess.engine import Cp, Mate, PovScore

    from pipelines.games.game import score_for_white

    assert score_for_white({"score": PovScore(Cp(35), chess.BLACK), "depth": 9}) == -35
    assert score_for_white({"score": PovScore(Cp(35), chess.WHITE)}) == 35
    assert score_for_white({"score": PovScore(Mate(3), chess.BLACK)}) == -(100_000 - 3)
    assert score_for_white({"score": PovScore(Mate(-2), chess.WHITE)}) == -(100_000 - 2)
    assert score_for_white({"depth": 9}) is None


def test_an_adjudicator_s_defaults_are_the_rules_defaults() -> None:
    """No rule is on by default; a rule turned on alone takes the thresholds of
    ``Adjudication`` (the tournament config's)."""
    from pipelines.games.adjudication import Adjudication

    late = chess.Board("r3k3/8/8/8/8/8/8/R3K3 w - - 0 300")
    assert Adjudicator().verdict(late, [-90_000] * 40) is None
    assert Adjudicator().verdict(late, [0] * 40) is None
    defaults = Adjudication()
    made = Adjudicator(resign_moves=1, draw_move_number=1)
    assert (made.resign_score, made.draw_moves, made.draw_score, made.max_plies) == (
        defaults.resign_score, defaults.draw_moves, defaults.draw_score, defaults.max_plies)


def test_the_adjudicator_of_rules_takes_every_rule() -> None:
    from pipelines.games.adjudication import Adjudication

    rules = Adjudication(resign_moves=3, resign_score=500, draw_move_number=30, draw_moves=6,
                         draw_score=8, tablebases=str(SYZYGY), max_plies=200)
    made = Adjudicator.from_rules(rules)
    try:
        assert (made.resign_moves, made.resign_score, made.draw_move_number, made.draw_moves,
                made.draw_score, made.max_plies) == (3, 500, 30, 6, 8, 200)
        assert made.syzygy is not None and made.tablebase_pieces == 3
    finally:
        made.close()
