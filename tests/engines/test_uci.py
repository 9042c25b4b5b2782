"""UCI front end: protocol sessions driven by python-chess, bad input, bestmove fallbacks.

Engines run as real UCI processes (``python -m engines.uci ...``): the project's alpha-beta
engine when it is built, and always a small pure-python searcher defined here that obeys the
same interface (``engines.alphabeta.AlphaBeta``), so the front end is tested on its own.
"""
from __future__ import annotations

import importlib.util
import io
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess
import chess.engine
import pytest

from engines.alphabeta.program import AlphaBetaOptions, alphabeta_spec
from engines.timeman import StableStopPolicy, TimeManager
from engines.uci import (
    EngineSpec,
    UciEngine,
    UciError,
    UciOption,
    best_move,
    load_program,
    parse_go,
    parse_position,
    parse_setoption,
    preload,
    program_names,
)

ROOT = Path(__file__).resolve().parents[2]
POSITIONS = {ops["id"]: (board, ops) for board, ops in (
    chess.Board.from_epd(line) for line in
    (ROOT / "tests/fixtures/uci/positions.epd").read_text().splitlines() if line.strip())}


# --------------------------------------------------------------------------------------------
# A pure-python searcher with the AlphaBeta interface
# --------------------------------------------------------------------------------------------

@dataclass
class ToyResult:
    depth: int
    seldepth: int
    score_cp: int | None
    score_mate: int | None
    nodes: int
    time_s: float
    pv: list[chess.Move]


class _Abort(Exception):
    pass


PIECE_CP = {chess.PAWN: 100, chess.KNIGHT: 300, chess.BISHOP: 310, chess.ROOK: 500,
            chess.QUEEN: 900, chess.KING: 0}
MATE = 100_000


class MaterialSearcher:
    """Negamax with alpha-beta on material only; captures first. Depth 1 always completes;
    deeper iterations abort on stop(), max_nodes or the hard deadline, yielding nothing more."""

    def __init__(self, mode: str = "normal") -> None:
        self.mode = mode  # "normal" | "silent" (yields nothing) | "illegal" (bad pv)
        self.games = 0
        self._stop = threading.Event()
        self.nodes = 0
        self._limits: tuple[int | None, float | None] = (None, None)
        self._root: list[chess.Move] = []

    def new_game(self) -> None:
        self.games += 1

    def stop(self) -> None:
        self._stop.set()

    def evaluate(self, board: chess.Board) -> int:
        score = sum(PIECE_CP[p.piece_type] * (1 if p.color == board.turn else -1)
                    for p in board.piece_map().values())
        return score

    def iterate(self, board: chess.Board, max_depth: int = 100, max_nodes: int | None = None,
                hard_deadline: float | None = None, multipv: int = 1,
                searchmoves: Sequence[chess.Move] = ()) -> Iterator[ToyResult]:
        """One line whatever ``multipv`` asks (a searcher may offer fewer lines)."""
        self._stop.clear()
        start, self.nodes = time.monotonic(), 0
        self._root = list(searchmoves)
        if self.mode == "silent":
            return
        for depth in range(1, max_depth + 1):
            self._limits = (max_nodes, hard_deadline)
            try:
                score, pv = self._negamax(board, depth, 0, -MATE - 1, MATE + 1, depth > 1)
            except _Abort:
                return
            if self.mode == "illegal":
                pv = [chess.Move.from_uci("a1a8")]
            mate = None
            if abs(score) > MATE - 1000:
                plies = MATE - abs(score)
                mate = (plies + 1) // 2 if score > 0 else -(plies // 2)
            yield ToyResult(depth, depth, None if mate else score, mate, self.nodes,
                            time.monotonic() - start, pv)

    def _negamax(self, board: chess.Board, depth: int, ply: int, alpha: int, beta: int,
                 abortable: bool) -> tuple[int, list[chess.Move]]:
        self.nodes += 1
        if abortable:
            max_nodes, deadline = self._limits
            if self._stop.is_set() or (max_nodes and self.nodes >= max_nodes) or \
                    (deadline and time.monotonic() >= deadline):
                raise _Abort
        moves = sorted(self._root if ply == 0 and self._root else board.legal_moves,
                       key=lambda m: not board.is_capture(m))
        if not moves:
            return (-(MATE - ply) if board.is_check() else 0), []
        if depth == 0:
            return self.evaluate(board), []
        best, best_pv = -MATE - 1, [moves[0]]
        for move in moves:
            board.push(move)
            score, pv = self._negamax(board, depth - 1, ply + 1, -beta, -alpha, abortable)
            board.pop()
            if -score > best:
                best, best_pv = -score, [move, *pv]
            alpha = max(alpha, best)
            if alpha >= beta:
                break
        return best, best_pv


def toy_spec(argv: Sequence[str]) -> EngineSpec:
    """``python -m engines.uci tests.engines.test_uci:toy_spec [normal|silent|illegal]``."""
    mode = argv[0] if argv else "normal"
    options = (UciOption("Style", "combo", "normal", choices=("normal", "silent", "illegal")),)

    def make(values: Mapping[str, Any]) -> MaterialSearcher:
        return MaterialSearcher(values["Style"] if values["Style"] != "normal" else mode)

    return EngineSpec("toy material searcher", "tests", options, make)


def alphabeta_available() -> bool:
    return importlib.util.find_spec("engines.alphabeta") is not None


ENGINES = {
    "toy": [sys.executable, "-m", "engines.uci", "tests.engines.test_uci:toy_spec"],
    "alphabeta": [sys.executable, "-m", "engines.uci", "alphabeta", "--hash", "4"],
}


@pytest.fixture(params=sorted(ENGINES), scope="module")
def engine(request: pytest.FixtureRequest) -> Iterator[chess.engine.SimpleEngine]:
    """A UCI process per engine kind, shared by the tests of this module."""
    if request.param == "alphabeta" and not alphabeta_available():
        pytest.skip("engines.alphabeta is not built yet (pip install -e . builds it)")
    process = chess.engine.SimpleEngine.popen_uci(ENGINES[request.param], cwd=ROOT, timeout=20)
    yield process
    process.quit()


# --------------------------------------------------------------------------------------------
# Protocol sessions through python-chess
# --------------------------------------------------------------------------------------------

def test_handshake_declares_id_and_options(engine: chess.engine.SimpleEngine) -> None:
    """``uci`` answers id name/author and every option; python-chess parses them."""
    assert engine.id["name"]
    assert engine.id["author"]
    assert engine.options["Move Overhead"].type == "spin"
    assert engine.options["Clear Hash"].type == "button"
    assert (engine.options["MultiPV"].min, engine.options["MultiPV"].max) == (1, 256)
    if "Eval" in engine.options:
        assert engine.options["Eval"].var == ["hce", "hce-simple", "nnue", "nnue-hybrid"]
        assert engine.options["Model"].type == "string"
        assert engine.options["EvalFile"].type == "string"
        assert engine.options["LMR"].var == ["standard", "none"]
        assert engine.options["LMR"].default == "standard"
        assert engine.options["Hash"].default == 4


def test_analyse_reports_full_info(engine: chess.engine.SimpleEngine) -> None:
    """``go depth 3`` info: depth, seldepth, score, nodes, nps, time and a legal pv."""
    board, _ = POSITIONS["kiwipete"]
    info = engine.analyse(board, chess.engine.Limit(depth=3))
    assert info["depth"] == 3
    assert info["seldepth"] >= 3
    assert info["nodes"] > 0 and "nps" in info and "time" in info
    assert info["pv"] and board.is_legal(info["pv"][0])
    assert info["score"].relative.score(mate_score=100_000) is not None


@pytest.mark.parametrize("name", ["back-rank", "scholar"])
def test_finds_mate_in_one_and_reports_mate_score(engine: chess.engine.SimpleEngine,
                                                  name: str) -> None:
    board, ops = POSITIONS[name]
    info = engine.analyse(board, chess.engine.Limit(depth=3))
    assert info["pv"][0] == ops["bm"][0]
    assert info["score"].relative == chess.engine.Mate(1)


def test_stop_ends_go_infinite(engine: chess.engine.SimpleEngine) -> None:
    """``go infinite`` keeps searching until ``stop``, then answers a legal bestmove (how
    fast is measured by benchmarks/engine.py; python-chess's own timeout is the guard)."""
    board, _ = POSITIONS["italian-middlegame"]
    with engine.analysis(board) as analysis:
        assert analysis.get()["depth"] >= 1   # searching: the first depth came in
        analysis.stop()
        best = analysis.wait()
    assert best.move is not None and board.is_legal(best.move)


def test_movetime_answers_a_legal_move(engine: chess.engine.SimpleEngine) -> None:
    """``go movetime 300`` ends by itself with a legal bestmove after at least depth 1 (the
    budget it searches under is tested as numbers in test_timeman)."""
    board, _ = POSITIONS["italian-middlegame"]
    result = engine.play(board, chess.engine.Limit(time=0.3), info=chess.engine.INFO_ALL)
    assert result.move in board.legal_moves
    assert result.info["depth"] >= 1


def test_clocks_large_and_tiny_answer_legal_moves(engine: chess.engine.SimpleEngine) -> None:
    """``go wtime 2000 btime 2000`` and a 20 ms clock (less than the move overhead) are both
    answered with a legal move rather than a hang or a flag."""
    board, _ = POSITIONS["kiwipete"]
    for clock in (2.0, 0.02):
        result = engine.play(board, chess.engine.Limit(white_clock=clock, black_clock=clock))
        assert result.move in board.legal_moves


def test_self_play_never_makes_an_illegal_move(engine: chess.engine.SimpleEngine) -> None:
    """Twenty plies of self-play on fast limits, new game first: every bestmove is legal
    (python-chess raises on an illegal one; we also check membership explicitly)."""
    board, _ = POSITIONS["perft3"]
    board = board.copy()
    for ply in range(20):
        if board.is_game_over():
            break
        limit = chess.engine.Limit(nodes=300) if ply % 2 else chess.engine.Limit(time=0.02)
        result = engine.play(board, limit, game="perft3-selfplay")
        assert result.move in board.legal_moves
        board.push(result.move)
    assert board.ply() >= 10


def test_setoption_and_position_with_moves(engine: chess.engine.SimpleEngine) -> None:
    """``setoption`` changes are accepted and ``position startpos moves ...`` is replayed:
    the answer must be legal for Black after 1.e4 e5 2.Nf3."""
    if "Eval" in engine.options:
        engine.configure({"Eval": "hce-simple", "LMR": "none", "Hash": 8})
        assert engine.play(chess.Board(), chess.engine.Limit(depth=2)).move is not None
    engine.configure({"Move Overhead": 50})
    board = chess.Board()
    for san in ("e4", "e5", "Nf3"):
        board.push_san(san)
    result = engine.play(board, chess.engine.Limit(depth=2))
    assert result.move in board.legal_moves
    if "Eval" in engine.options:
        engine.configure({"Eval": "hce", "LMR": "standard", "Hash": 4})


# --------------------------------------------------------------------------------------------
# MultiPV and searchmoves, as GUIs and python-chess use them (the real alpha-beta program)
# --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def alphabeta() -> Iterator[chess.engine.SimpleEngine]:
    if not alphabeta_available():
        pytest.skip("engines.alphabeta is not built yet (pip install -e . builds it)")
    process = chess.engine.SimpleEngine.popen_uci(
        [sys.executable, "-m", "engines.uci", "alphabeta"], cwd=ROOT, timeout=20)
    yield process
    process.quit()


def score(info: chess.engine.InfoDict) -> int:
    return info["score"].relative.score(mate_score=100_000)


def test_analyse_with_multipv_returns_distinct_sorted_lines(
        alphabeta: chess.engine.SimpleEngine) -> None:
    """``engine.analyse(board, limit, multipv=3)`` (failed before MultiPV existed): three
    lines numbered 1..3 with three different first moves, scores not increasing, each line a
    legal variation."""
    board, _ = POSITIONS["italian-middlegame"]
    infos = alphabeta.analyse(board, chess.engine.Limit(depth=5), multipv=3)
    assert [info["multipv"] for info in infos] == [1, 2, 3]
    assert len({info["pv"][0] for info in infos}) == 3
    assert score(infos[0]) >= score(infos[1]) >= score(infos[2])
    for info in infos:
        assert info["depth"] == 5
        line = board.copy()
        for move in info["pv"]:
            assert move in line.legal_moves
            line.push(move)


def test_multipv_lines_score_each_root_move_exactly(
        alphabeta: chess.engine.SimpleEngine) -> None:
    """Line 2's score equals a search restricted to line 2's move (``searchmoves``): the
    score of every line is that move's own value, not a bound."""
    board, _ = POSITIONS["kiwipete"]
    infos = alphabeta.analyse(board, chess.engine.Limit(depth=4), multipv=2)
    second = infos[1]["pv"][0]
    alone = alphabeta.analyse(board, chess.engine.Limit(depth=4), root_moves=[second],
                              game="fresh")
    assert alone["pv"][0] == second
    assert abs(score(alone) - score(infos[1])) <= 30  # same move, another TT state


@pytest.mark.parametrize("name", ["back-rank", "scholar"])
def test_multipv_puts_the_mate_in_one_first(alphabeta: chess.engine.SimpleEngine,
                                           name: str) -> None:
    board, ops = POSITIONS[name]
    infos = alphabeta.analyse(board, chess.engine.Limit(depth=3), multipv=3)
    assert infos[0]["pv"][0] == ops["bm"][0]
    assert infos[0]["score"].relative == chess.engine.Mate(1)
    assert all(info["score"].relative < chess.engine.Mate(1) for info in infos[1:])


def test_searchmoves_restricts_the_best_move(alphabeta: chess.engine.SimpleEngine) -> None:
    """``go searchmoves h2h3 g2g3`` on the back-rank mate: the mate Rd8# is not allowed, so
    the answer is one of the two given moves and the score is no mate."""
    board, _ = POSITIONS["back-rank"]
    allowed = [chess.Move.from_uci("h2h3"), chess.Move.from_uci("g2g3")]
    result = alphabeta.play(board, chess.engine.Limit(depth=4), root_moves=allowed,
                            info=chess.engine.INFO_ALL)
    assert result.move in allowed
    assert result.info["score"].relative.mate() is None
    infos = alphabeta.analyse(board, chess.engine.Limit(depth=3), multipv=3,
                              root_moves=allowed)
    assert [info["pv"][0] in allowed for info in infos] == [True, True]  # 2 moves: 2 lines


def test_searchmoves_reach_the_searcher_and_illegal_ones_are_ignored() -> None:
    """In process: the toy searcher only sees the given root moves; an illegal one is ignored
    as Stockfish does (a GUI waiting for ``bestmove`` gets one), and when none is legal every
    move is searched."""
    front, out = front_end()
    front.handle("position fen " + POSITIONS["back-rank"][0].fen())
    assert run_go(front, "go depth 2 searchmoves g1f1").startswith("bestmove g1f1")
    assert run_go(front, "go searchmoves d1d9 g1f1 depth 2").startswith("bestmove g1f1")
    assert run_go(front, "go searchmoves d1d9 depth 2").startswith("bestmove ")
    assert not any(line.startswith("info string error") for line in lines(out))


def test_multipv_option_keeps_the_searcher() -> None:
    """``setoption name MultiPV`` is the front end's: the searcher (and its hash) is kept."""
    front, _ = front_end()
    searcher = front.searcher()
    front.handle("setoption name MultiPV value 4")
    assert front.searcher() is searcher and front.values["MultiPV"] == 4


# --------------------------------------------------------------------------------------------
# Programs by discovery
# --------------------------------------------------------------------------------------------

def test_programs_are_discovered_from_their_folders() -> None:
    """``engines/alphabeta/program.py`` makes ``alphabeta`` an engine; no list to edit."""
    assert "alphabeta" in program_names()
    assert "core" not in program_names()  # a package without program.py is no engine
    program = load_program("alphabeta")
    assert program.name == "alphabeta" and program.options is AlphaBetaOptions
    with pytest.raises(UciError, match="unknown engine 'mcts9': expected one of alphabeta"):
        load_program("mcts9")


def test_uci_entry_lists_programs_in_help_and_errors() -> None:
    """``python -m engines.uci --help`` lists the discovered programs; a bad name exits 2
    with one line naming it and the programs there are."""
    run = [sys.executable, "-m", "engines.uci"]
    shown = subprocess.run([*run, "--help"], cwd=ROOT, capture_output=True, text=True,
                           timeout=60, check=True)
    assert "  alphabeta    Alpha-beta search" in shown.stderr
    bad = subprocess.run([*run, "nosuch"], cwd=ROOT, capture_output=True, text=True,
                         input="quit\n", timeout=60, check=False)
    assert bad.returncode == 2
    assert bad.stderr.splitlines() == [
        f"engines.uci: error: unknown engine 'nosuch': expected one of "
        f"{', '.join(program_names())} or module:function"]


# --------------------------------------------------------------------------------------------
# In-process protocol: bad input, fallbacks, exact lines
# --------------------------------------------------------------------------------------------

def front_end(mode: str = "normal") -> tuple[UciEngine, io.StringIO]:
    out = io.StringIO()
    return UciEngine(toy_spec([mode]), output=out), out


def lines(out: io.StringIO) -> list[str]:
    return out.getvalue().splitlines()


def run_go(front: UciEngine, command: str) -> str:
    """Send a go command and wait for its bestmove line."""
    front.handle(command)
    assert front.wait(20)
    return [line for line in lines(front.output) if line.startswith("bestmove")][-1]


@pytest.mark.parametrize("line,message", [
    ("go depth x", "go depth needs a number, got 'x'"),
    ("go depth 0", "go depth must be at least 1, got 0"),
    ("go wtime", "go wtime needs a number"),
    ("go sideways 3", "unknown go parameter 'sideways'"),
    ("position fen 8/8/8 w - - 0 1", "bad fen '8/8/8 w - - 0 1'"),
    ("position startpos moves e2e4 e2e4", "illegal move 'e2e4'"),
    ("position middle", "expected 'position startpos' or 'position fen'"),
    ("setoption name Nope value 3", "no such option 'Nope'"),
    ("setoption name Style value fancy", "takes one of normal/silent/illegal, got 'fancy'"),
    ("setoption name Move Overhead value -4", "takes 0..5000, got '-4'"),
    ("setoption value 3", "expected 'setoption name ...'"),
    ("castle now", "unknown command 'castle now'"),
])
def test_bad_lines_get_an_info_string_and_the_engine_lives_on(line: str, message: str) -> None:
    front, out = front_end()
    assert front.handle(line)
    assert lines(out)[-1].startswith("info string error: ")
    assert message in lines(out)[-1]
    front.handle("isready")
    assert lines(out)[-1] == "readyok"


def test_bad_position_leaves_the_previous_position() -> None:
    front, _ = front_end()
    front.handle("position startpos moves e2e4")
    front.handle("position startpos moves d2d4 d2d4")
    assert front.board.move_stack == [chess.Move.from_uci("e2e4")]


def test_uci_lines_are_exact() -> None:
    front, out = front_end()
    front.handle("uci")
    assert lines(out) == [
        "id name toy material searcher", "id author tests",
        "option name Style type combo default normal var normal var silent var illegal",
        "option name MultiPV type spin default 1 min 1 max 256",
        "option name Move Overhead type spin default 30 min 0 max 5000",
        "option name Clear Hash type button", "uciok"]


def test_alphabeta_options_follow_the_command_line() -> None:
    """``--eval hce-simple --hash 64`` become the defaults the GUI sees."""
    out = io.StringIO()
    spec = alphabeta_spec(AlphaBetaOptions(eval="hce-simple", hash=64, lmr="none"))
    UciEngine(spec, output=out).handle("uci")
    text = out.getvalue()
    assert "option name Hash type spin default 64 min 1 max 65536" in text
    assert ("option name Eval type combo default hce-simple var hce var hce-simple var nnue "
            "var nnue-hybrid") in text
    assert "option name Model type string default <empty>" in text
    assert "option name LMR type combo default none var standard var none" in text
    with pytest.raises(ValueError, match="'sharp'"):
        AlphaBetaOptions(eval="sharp")


def test_search_log_is_flushed_to_its_file_at_ucinewgame(tmp_path: Path) -> None:
    """``--search-log-rate 1 --search-log FILE``: the LMR decisions of a search reach the
    file when the game ends (paper 003 appendix A.2 data; lost if the front end never
    flushes); the engine never writes the warehouse (``lmr-data`` stores the file's rows)."""
    if not alphabeta_available():
        pytest.skip("engines.alphabeta is not built yet (pip install -e . builds it)")
    from engines.alphabeta.searchlog import read_search_log

    log_file = tmp_path / "search_log.jsonl"
    out = io.StringIO()
    front = UciEngine(alphabeta_spec(AlphaBetaOptions(hash=1, search_log_rate=1.0,
                                                      search_log=str(log_file))), output=out)
    front.handle("position fen " + POSITIONS["italian-middlegame"][0].fen())
    front.handle("go depth 5")
    assert front.wait(60)
    assert lines(out)[-1].startswith("bestmove ")
    assert not log_file.exists()
    front.handle("ucinewgame")
    rows = read_search_log(log_file)
    assert len(rows) > 0
    assert min(row["depth"] for row in rows) >= 1
    front.handle("quit")  # nothing new to write: the file keeps its rows
    assert len(read_search_log(log_file)) == len(rows)


def test_a_sampled_search_log_needs_its_file() -> None:
    """``--search-log-rate`` without ``--search-log``: refused at start, naming both."""
    with pytest.raises(UciError, match=r"SearchLogRate 0.5 needs the SearchLog option"):
        preload(alphabeta_spec(AlphaBetaOptions(hash=1, search_log_rate=0.5)))


def test_search_that_yields_nothing_still_plays_a_legal_move() -> None:
    """A searcher that returns no depth at all: bestmove falls back to a legal move."""
    front, _ = front_end("silent")
    front.handle("position fen " + POSITIONS["kiwipete"][0].fen())
    answer = run_go(front, "go depth 3")
    move = chess.Move.from_uci(answer.split()[1])
    assert move in POSITIONS["kiwipete"][0].legal_moves


def test_illegal_pv_is_never_played() -> None:
    """A searcher whose pv starts with an illegal move (a1a8 through pieces)."""
    front, _ = front_end("illegal")
    answer = run_go(front, "go depth 2")
    assert answer != "bestmove a1a8"
    assert chess.Move.from_uci(answer.split()[1]) in chess.Board().legal_moves


@pytest.mark.parametrize("name,score", [("fools-mate", "mate 0"), ("stalemate", "cp 0")])
def test_no_legal_move_answers_null_move(name: str, score: str) -> None:
    """Mated or stalemated at the root: no search, ``score mate 0`` / ``cp 0`` like Stockfish,
    and ``bestmove 0000``."""
    front, out = front_end()
    front.handle("position fen " + POSITIONS[name][0].fen())
    assert run_go(front, "go depth 2") == "bestmove 0000"
    assert lines(out)[-2] == f"info depth 0 score {score}"


def test_only_move_is_played_at_once_on_a_clock() -> None:
    front, out = front_end()
    front.handle("position fen " + POSITIONS["only-move"][0].fen())
    assert run_go(front, "go wtime 60000 btime 60000").startswith("bestmove a1b2")
    assert sum(line.startswith("info depth") for line in lines(out)) == 1


def test_go_infinite_waits_for_stop_even_when_the_search_is_done() -> None:
    """``go infinite depth 2`` on a mate in one: the search ends at once, but bestmove must
    wait for ``stop`` (UCI: no bestmove during ``go infinite`` before ``stop``)."""
    front, out = front_end()
    front.handle("position fen " + POSITIONS["back-rank"][0].fen())
    front.handle("go infinite depth 2")
    assert not front.wait(0.3)
    assert not any(line.startswith("bestmove") for line in lines(out))
    assert any(line.startswith("info depth 2 ") for line in lines(out))
    front.handle("stop")
    assert lines(out)[-1] == "bestmove d1d8"


def test_a_stability_policy_plugs_into_the_front_end() -> None:
    """Paper 003's algorithm 2 through the UCI front end: ``go depth 4`` with a predictor
    that calls every position stable stops after depth 3; with one that never does, depth 4
    is searched (guards the hook a later volatility model is plugged into)."""
    for stability, deepest in ((1.0, 3), (0.0, 4)):
        out = io.StringIO()
        policy = StableStopPolicy(lambda board, delta, changed, value, p=stability: p)
        front = UciEngine(toy_spec([]), output=out, time_manager=TimeManager(policy=policy))
        run_go(front, "go depth 4")
        depths = [int(line.split()[2]) for line in lines(out) if line.startswith("info depth")]
        assert depths == list(range(1, deepest + 1))


def test_ucinewgame_reaches_the_searcher_and_resets_the_position() -> None:
    front, _ = front_end()
    front.handle("position startpos moves e2e4")
    front.handle("isready")
    searcher = front.searcher()
    assert isinstance(searcher, MaterialSearcher)
    front.handle("ucinewgame")
    front.handle("setoption name Clear Hash")
    assert searcher.games == 2
    assert front.board == chess.Board()


def test_changing_an_option_rebuilds_the_searcher() -> None:
    front, _ = front_end()
    first = front.searcher()
    front.handle("setoption name Style value silent")
    second = front.searcher()
    assert second is not first and isinstance(second, MaterialSearcher)
    assert second.mode == "silent"


def test_nodes_limit_and_ponder_move() -> None:
    """``go nodes 200``: the last info line stays near the node limit; bestmove carries a
    legal ponder move from the pv."""
    front, out = front_end()
    answer = run_go(front, "go nodes 200")
    infos = [line for line in lines(out) if line.startswith("info depth")]
    nodes = int(infos[-1].split(" nodes ")[1].split()[0])
    assert nodes <= 200
    words = answer.split()
    if "ponder" in words:
        board = chess.Board()
        board.push_uci(words[1])
        assert chess.Move.from_uci(words[3]) in board.legal_moves


def test_quit_during_a_search_ends_it() -> None:
    front, out = front_end()
    front.handle("go infinite")
    time.sleep(0.05)
    assert front.handle("quit") is False
    assert lines(out)[-1].startswith("bestmove ")


def test_run_reads_until_quit() -> None:
    front, out = front_end()
    script = io.StringIO("uci\nisready\nposition startpos\ngo depth 1\nisready\nquit\nuci\n")
    assert front.run(script) == 0
    assert lines(out).count("uciok") == 1  # nothing after quit is read
    assert any(line.startswith("bestmove ") for line in lines(out))


def test_parsers_directly() -> None:
    assert parse_go("movetime 250 depth 4".split()).movetime == 250
    assert parse_go(["infinite"]).infinite
    assert parse_go("searchmoves e2e4 d2d4 depth 3".split()).depth == 3
    assert parse_go("depth 3 searchmoves e2e4 d2d4".split()).searchmoves == ("e2e4", "d2d4")
    with pytest.raises(UciError, match="needs at least one move"):
        parse_go("searchmoves depth 3".split())
    assert parse_go("mate 3".split()).mate == 3
    assert parse_setoption("name Move Overhead value 100".split()) == ("Move Overhead", "100")
    assert parse_setoption("name Clear Hash".split()) == ("Clear Hash", None)
    board = parse_position("fen 4k3/8/8/8/8/8/8/4K3 w - - 0 1 moves e1d1".split())
    assert board.fen() == "4k3/8/8/8/8/8/8/3K4 b - - 1 1"
    with pytest.raises(UciError, match="'z9z9'"):
        parse_position("startpos moves z9z9".split())
    assert best_move(chess.Board(), [])[0] in chess.Board().legal_moves
    assert best_move(chess.Board(), [], [chess.Move.from_uci("h2h4")])[0].uci() == "h2h4"


# --------------------------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------------------------

HEAVY = ("prefect", "duckdb", "pyarrow", "torch", "engines.alphabeta")


@pytest.mark.parametrize("module", ["engines.uci", "flows.commands.engine"])
def test_entry_modules_import_nothing_heavy(module: str) -> None:
    """Startup must stay well under a second: no prefect/duckdb/pyarrow (or the compiled
    search) at import time; they load on first use."""
    code = (f"import sys, {module}; "
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.strip()
    assert loaded == ""


def test_chesslab_engine_command_speaks_uci() -> None:
    """``chesslab engine alphabeta --eval hce-simple`` answers ``uci`` (without building the
    searcher: that happens at isready)."""
    answer = subprocess.run(
        [sys.executable, "-m", "flows.cli", "engine", "alphabeta", "--eval", "hce-simple"],
        input="uci\nquit\n", cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    assert "option name Eval type combo default hce-simple" in answer.stdout
    assert answer.stdout.splitlines()[-1] == "uciok"


def test_chesslab_engine_lists_discovered_programs() -> None:
    answer = subprocess.run(
        [sys.executable, "-m", "flows.cli", "engine", "nosuch"], input="quit\n", cwd=ROOT,
        capture_output=True, text=True, timeout=60, check=False)
    assert answer.returncode == 2
    names = ", ".join(program_names())
    assert f"unknown engine 'nosuch': choose from {names}" in answer.stderr


def test_chesslab_engine_rejects_bad_options() -> None:
    answer = subprocess.run(
        [sys.executable, "-m", "flows.cli", "engine", "alphabeta", "--hash", "0"],
        input="quit\n", cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert answer.returncode == 2
    assert "--hash must be 1..65536 MB, got 0" in answer.stderr


# --------------------------------------------------------------------------------------------
# Issue 32 item 5: positions that are not chess positions, searchers that cannot be built
# --------------------------------------------------------------------------------------------

#: Positions python-chess's Board.status() rejects; alpha-beta and MCTS used to search them
#: and answer moves like e2e8 (taking the king).
INVALID_FENS = {
    "no kings": "8/8/8/8/8/8/4P3/8 w - - 0 1",
    "no black king": "8/8/8/8/8/8/4P3/4K3 w - - 0 1",
    "two white kings": "4k3/8/8/8/8/8/4P3/3KK3 w - - 0 1",
    "side not to move in check": "4k3/4R3/8/8/8/8/8/4K3 w - - 0 1",
    "pawn on the eighth rank": "3Pk3/8/8/8/8/8/8/4K3 w - - 0 1",
    "pawn on the first rank": "4k3/8/8/8/8/8/8/3pK3 w - - 0 1",
}


def own_front_end(program: str) -> tuple[UciEngine, io.StringIO]:
    from engines.mcts.program import MctsOptions, mcts_spec

    out = io.StringIO()
    spec = alphabeta_spec(AlphaBetaOptions.tiny()) if program == "alphabeta" \
        else mcts_spec(MctsOptions.tiny())
    return UciEngine(spec, output=out), out


@pytest.mark.parametrize("program", ["alphabeta", "mcts"])
@pytest.mark.parametrize("case", sorted(INVALID_FENS))
def test_invalid_positions_are_refused_and_not_searched(program: str, case: str) -> None:
    """python-chess's Board.status() is the oracle: every FEN it calls invalid is refused with
    an info string naming the FEN and the reason, and the go after it answers bestmove 0000
    without a search (no info depth line); the next valid position plays again."""
    if not alphabeta_available():
        pytest.skip("engines are not built yet (pip install -e . builds them)")
    fen = INVALID_FENS[case]
    assert not chess.Board(fen).is_valid()       # the oracle agrees it is no position
    front, out = own_front_end(program)
    front.handle(f"position fen {fen}")
    refusal = lines(out)[-1]
    assert refusal.startswith(f"info string error: refused position '{fen}': ")
    expected = {"no kings": "no white king", "no black king": "no black king",
                "two white kings": "more than one king",
                "side not to move in check": "the side not to move is in check",
                "pawn on the eighth rank": "a pawn on the first or eighth rank",
                "pawn on the first rank": "a pawn on the first or eighth rank"}[case]
    assert expected in refusal
    before = len(lines(out))
    assert run_go(front, "go depth 2") == "bestmove 0000"
    answer = lines(out)[before:]
    assert not any(line.startswith("info depth") for line in answer), answer
    assert answer[0].startswith("info string error: no search: refused position")
    front.handle("position startpos moves e2e4")
    assert chess.Move.from_uci(run_go(front, "go depth 2").split()[1]) in front.board.legal_moves
    front.handle("quit")


def test_sloppy_castling_and_en_passant_fields_are_still_played() -> None:
    """Castling rights without their rook and an en-passant square no pawn can use are
    tolerated (python-chess drops them from the FEN the searcher gets), as other engines do."""
    front, out = front_end()
    for fen in ("4k3/8/8/8/8/8/8/4K2R w KQkq - 0 1", "4k3/8/8/8/4P3/8/8/4K3 b - e3 0 1"):
        assert chess.Board(fen).status() & ~(chess.STATUS_BAD_CASTLING_RIGHTS
                                             | chess.STATUS_INVALID_EP_SQUARE) == 0
        front.handle(f"position fen {fen}")
        assert not lines(out) or not lines(out)[-1].startswith("info string")
        move = chess.Move.from_uci(run_go(front, "go depth 2").split()[1])
        assert move in chess.Board(fen).legal_moves


def test_a_go_whose_searcher_cannot_be_built_still_answers() -> None:
    """A searcher that fails to build (a network that cannot load) used to leave ``go``
    unanswered for ever: now an info string gives the reason and bestmove 0000 follows."""
    def broken(values: Mapping[str, Any]) -> MaterialSearcher:
        raise UciError("NetFile: no network file 'gone.pt'")

    out = io.StringIO()
    front = UciEngine(EngineSpec("broken", "tests", (), broken), output=out)
    front.handle("position startpos")
    front.handle("go nodes 10")
    assert front.wait(5)
    assert lines(out)[-2:] == ["info string error: cannot search: NetFile: no network file "
                               "'gone.pt'", "bestmove 0000"]


def test_uci_is_answered_while_the_program_loads(tmp_path: Path) -> None:
    """Issue 49 §4: the PUCT engine imported torch and loaded its net before answering
    ``uci`` (20 s at load 10), past python-chess's and most GUIs' 10 s handshake timeout. The
    files now load in a thread from the start: ``uciok`` comes while the load still waits
    (here for a file the test makes), ``isready`` waits for the load."""
    release = tmp_path / "release"
    run = subprocess.Popen([sys.executable, "-m", "engines.uci",
                            "tests.fixtures.engines.slow_load:spec", str(release)],
                           cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.stdin is not None and run.stdout is not None
    try:
        run.stdin.write("uci\n")
        run.stdin.flush()
        lines = []
        while (line := run.stdout.readline().strip()) != "uciok":
            assert line, "the program ended before uciok"
            lines.append(line)
        assert lines[:2] == ["id name slow loader", "id author tests"]
        assert not (tmp_path / "loaded").exists()       # answered before the load ended
        release.touch()
        run.stdin.write("isready\nquit\n")
        run.stdin.flush()
        assert run.stdout.readline().strip() == "readyok"
        assert (tmp_path / "loaded").exists()
        assert run.wait(timeout=60) == 0
    finally:
        run.kill()
