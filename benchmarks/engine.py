"""Engine speed and strength: chesslab's alpha-beta against sunfish and a limited Stockfish.

Three parts, each printing baseline and ours side by side:

(a) ``nps``: nodes per second of ``engines.alphabeta`` and of sunfish's ``Searcher``, both
    driven in-process on the same positions for the same time, one after the other per
    position (so machine load hits both alike); target ratio >= 10x.
(b) ``sunfish``: a match against sunfish's own UCI front end at a fast time control; target
    >= +100 Elo.
(c) ``stockfish``: a match against Stockfish with ``UCI_LimitStrength`` at ``UCI_Elo`` 1350
    (paper 002's rating floor); target >= 50 %.
(d) ``startup``: seconds from process start to ``uciok`` (and to ``readyok``, which builds the
    searcher) of ``python -m engines.uci alphabeta`` and ``chesslab engine alphabeta``, next to
    sunfish and Stockfish; target ``uciok`` < 1 s.
(e) ``timing``: how the UCI front end keeps time, next to Stockfish on the same positions:
    seconds from ``stop`` to ``bestmove`` after ``go infinite``, a ``go movetime 300``, a move
    on a 2 s clock and on a 20 ms clock (the wall-clock bounds the tests used to assert:
    0.5 s, 1.0 s, 1.3 s, 0.5 s; tests now check behaviour only).
(f) ``multipv``: nodes and time of MultiPV 3 against MultiPV 1 at a fixed depth, in-process.

Matches are game pairs with colours reversed from varied openings, played through
python-chess (``chess.engine.SimpleEngine``) with real clocks (a move that overruns its clock
loses on time; an illegal move or a crash loses). Result: wins/draws/losses, score and the
Elo difference with a 95 % interval (Wilson's, over games; see :func:`elo_interval`);
PGNs go to benchmarks/out/.

    .venv/bin/python benchmarks/engine.py                      # all three, ~10 minutes
    .venv/bin/python benchmarks/engine.py --parts nps --nps-seconds 2
    .venv/bin/python benchmarks/engine.py --parts sunfish --games 40 --tc 5+0.1
    .venv/bin/python benchmarks/engine.py --parts timing,multipv
"""
from __future__ import annotations

import argparse
import importlib.util
import math
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.engine
import chess.pgn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "benchmarks" / "out"

NPS_POSITIONS = {
    "start": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "kiwipete": "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "italian": "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/2P2N2/PP1P1PPP/RNBQK2R w KQkq - 1 5",
    "qgd": "rnbqkb1r/ppp2ppp/4pn2/3p2B1/2PP4/2N5/PP2PPPP/R2QKBNR b KQkq - 3 4",
    "sicilian": "r1bqkb1r/pp2pppp/2np1n2/8/3NP3/2N5/PPP2PPP/R1BQKB1R w KQkq - 2 6",
    "middlegame": "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    "rook-endgame": "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "fine-70": "8/k7/3p4/p2P1p2/P2P1P2/8/8/K7 w - - 0 1",  # Lasker-Reichhelm, pawn ending
}

# Short, varied opening lines (SAN); each is played twice, colours reversed.
OPENINGS = [
    "e4 e5 Nf3 Nc6 Bb5 a6",          # Ruy Lopez
    "e4 c5 Nf3 d6 d4 cxd4",          # Sicilian, open
    "d4 d5 c4 e6 Nc3 Nf6",           # Queen's Gambit Declined
    "e4 e6 d4 d5 Nc3 Nf6",           # French
    "d4 Nf6 c4 g6 Nc3 Bg7",          # King's Indian
    "e4 c6 d4 d5 e5 Bf5",            # Caro-Kann, advance
    "c4 e5 Nc3 Nf6 g3 d5",           # English, reversed Sicilian
    "d4 Nf6 c4 e6 Nc3 Bb4",          # Nimzo-Indian
    "e4 e5 Nf3 Nc6 Bc4 Bc5",         # Italian
    "Nf3 d5 g3 Nf6 Bg2 c6",          # Reti
    "e4 d5 exd5 Qxd5 Nc3 Qa5",       # Scandinavian
    "d4 d5 c4 c6 Nf3 Nf6",           # Slav
    "e4 e5 f4 exf4 Nf3 g5",          # King's Gambit
    "d4 f5 g3 Nf6 Bg2 g6",           # Dutch
    "e4 d6 d4 Nf6 Nc3 g6",           # Pirc
    "e4 Nf6 e5 Nd5 d4 d6",           # Alekhine
    "e4 e5 Nf3 Nf6 Nxe5 d6",         # Petroff
    "d4 d5 Bf4 Nf6 e3 c5",           # London
    "e4 e5 Nf3 Nc6 d4 exd4",         # Scotch
    "c4 c5 Nc3 Nc6 g3 g6",           # English, symmetrical
    "e4 c5 Nc3 Nc6 g3 g6",           # Sicilian, closed
    "d4 Nf6 c4 c5 d5 b5",            # Benko
    "e4 g6 d4 Bg7 Nc3 d6",           # Modern
    "d4 Nf6 Nf3 e6 Bg5 c5",          # Torre
]

MAX_PLIES = 300  # adjudicated a draw after this many plies


# --------------------------------------------------------------------------------------------
# (a) nodes per second
# --------------------------------------------------------------------------------------------

def nps_alphabeta(fen: str, seconds: float, eval_name: str) -> tuple[int, float, int]:
    """Nodes and time of the completed iterations of one search, and the depth reached."""
    from engines.alphabeta import AlphaBeta, SearchConfig

    searcher = AlphaBeta(SearchConfig(eval=eval_name))
    searcher.new_game()
    start = time.monotonic()
    results = list(searcher.iterate(chess.Board(fen), hard_deadline=start + seconds))
    last = results[-1]  # depth 1 always completes
    return last.nodes, last.time_s, last.depth


def nps_sunfish(fen: str, seconds: float) -> tuple[int, float, int]:
    """Nodes (calls of ``bound``, quiescence included) of sunfish's search for ``seconds``."""
    import sunfish
    import sunfish_ui.uci as sunfish_uci

    sunfish_uci.sunfish = sunfish  # from_fen reads the engine module from this global
    position = sunfish_uci.from_fen(*fen.split())
    searcher = sunfish.Searcher()
    start = time.time()
    searcher.deadline = start + seconds
    depth = 0
    try:
        for reached, _gamma, _score, _move in searcher.search([position]):
            depth = reached
            if time.time() >= start + seconds:
                break
    except sunfish.Stop:
        pass
    return searcher.nodes, time.time() - start, depth


def run_nps(seconds: float, eval_name: str) -> float:
    print(f"\n(a) nodes per second, {seconds:g} s per position, same positions, in-process")
    print(f"{'position':<14}{'sunfish nps':>13}{'depth':>7}{'alphabeta nps':>15}{'depth':>7}"
          f"{'ratio':>8}")
    totals = [0, 0.0, 0, 0.0]
    for name, fen in NPS_POSITIONS.items():
        ab_nodes, ab_time, ab_depth = nps_alphabeta(fen, seconds, eval_name)
        sf_nodes, sf_time, sf_depth = nps_sunfish(fen, seconds)
        ab_nps, sf_nps = ab_nodes / ab_time, sf_nodes / sf_time
        print(f"{name:<14}{sf_nps:>13,.0f}{sf_depth:>7}{ab_nps:>15,.0f}{ab_depth:>7}"
              f"{ab_nps / sf_nps:>7.1f}x")
        totals = [totals[0] + ab_nodes, totals[1] + ab_time, totals[2] + sf_nodes,
                  totals[3] + sf_time]
    ratio = (totals[0] / totals[1]) / (totals[2] / totals[3])
    print(f"{'all':<14}{totals[2] / totals[3]:>13,.0f}{'':>7}{totals[0] / totals[1]:>15,.0f}"
          f"{'':>7}{ratio:>7.1f}x   (target >= 10x)")
    return ratio


# --------------------------------------------------------------------------------------------
# (b), (c) matches
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Player:
    name: str
    command: list[str]
    options: dict[str, str | int | bool] = field(default_factory=dict)


@dataclass(frozen=True)
class TimeControl:
    base_s: float
    increment_s: float

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """``"2+0.05"``: 2 s per game plus 0.05 s per move."""
        base, _, increment = text.partition("+")
        try:
            return cls(float(base), float(increment or 0))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"time control like 2+0.05 expected, got {text!r}") from None

    def __str__(self) -> str:
        return f"{self.base_s:g}+{self.increment_s:g}"


@dataclass
class GameResult:
    opening: str
    white: str
    black: str
    result: str  # "1-0" | "0-1" | "1/2-1/2"
    reason: str
    game: chess.pgn.Game


def opening_board(line: str) -> chess.Board:
    board = chess.Board()
    for san in line.split():
        board.push_san(san)
    return board


def play_game(white: chess.engine.SimpleEngine, black: chess.engine.SimpleEngine,
              names: tuple[str, str], opening: str, tc: TimeControl) -> GameResult:
    """One game with real clocks; time forfeits, illegal moves and crashes lose."""
    board = opening_board(opening)
    engines = {chess.WHITE: white, chess.BLACK: black}
    clocks = {chess.WHITE: tc.base_s, chess.BLACK: tc.base_s}
    game_id = object()
    result, reason = "1/2-1/2", f"adjudicated draw after {MAX_PLIES} plies"
    while board.ply() < MAX_PLIES:
        outcome = board.outcome(claim_draw=True)
        if outcome is not None:
            result, reason = outcome.result(), outcome.termination.name.lower()
            break
        mover = board.turn
        limit = chess.engine.Limit(white_clock=clocks[chess.WHITE], black_clock=clocks[chess.BLACK],
                                   white_inc=tc.increment_s, black_inc=tc.increment_s)
        started = time.monotonic()
        try:
            played = engines[mover].play(board, limit, game=game_id)
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError) as exc:
            result, reason = ("0-1" if mover == chess.WHITE else "1-0"), f"engine error: {exc}"
            break
        clocks[mover] -= time.monotonic() - started
        if clocks[mover] < 0:
            result, reason = ("0-1" if mover == chess.WHITE else "1-0"), "time forfeit"
            break
        clocks[mover] += tc.increment_s
        if played.move is None or played.move not in board.legal_moves:
            loser = "0-1" if mover == chess.WHITE else "1-0"
            result, reason = loser, f"illegal move {played.move}"
            break
        board.push(played.move)
    game = chess.pgn.Game.from_board(board)
    game.headers.update(White=names[0], Black=names[1], Result=result, Opening=opening,
                        Termination=reason, TimeControl=str(tc))
    return GameResult(opening, names[0], names[1], result, reason, game)


def elo_from_score(score: float) -> float:
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def elo_interval(points: Sequence[float], z: float = 1.96) -> tuple[float, float, float, float]:
    """Score, Elo and a 95 % interval from per-game points (1, 0.5, 0) of our side.

    The interval is Wilson's score interval over the games, as if every game were decisive
    (draws only narrow the true interval, so this is conservative); unlike the normal
    approximation it stays informative at 0 % or 100 %: 20 wins out of 20 give >= +287.

    >>> score, elo, low, high = elo_interval([1.0] * 20)
    >>> round(low), high
    (287, inf)
    """
    n = len(points)
    score = sum(points) / n
    centre = (score + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(score * (1 - score) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low, high = max(centre - half, 0.0), min(centre + half, 1.0)
    return score, elo_from_score(score), elo_from_score(low), elo_from_score(high)


def run_match(ours: Player, theirs: Player, games: int, tc: TimeControl, label: str,
              target: str, slug: str) -> tuple[float, float]:
    print(f"\n{label}: {ours.name} vs {theirs.name}, {games} games (pairs, colours reversed), "
          f"time control {tc}")
    engines = {}
    for player in (ours, theirs):
        engines[player.name] = chess.engine.SimpleEngine.popen_uci(player.command, cwd=ROOT,
                                                                   timeout=30)
        if player.options:
            engines[player.name].configure(player.options)
    points: list[float] = []
    results: list[GameResult] = []
    tally = {"win": 0, "draw": 0, "loss": 0}
    forfeits = {ours.name: 0, theirs.name: 0}
    started = time.monotonic()
    try:
        for index in range(games):
            opening = OPENINGS[(index // 2) % len(OPENINGS)]
            white, black = (ours, theirs) if index % 2 == 0 else (theirs, ours)
            game = play_game(engines[white.name], engines[black.name], (white.name, black.name),
                             opening, tc)
            ours_white = white is ours
            point = {"1-0": 1.0, "0-1": 0.0}.get(game.result, 0.5)
            point = point if ours_white else 1.0 - point
            points.append(point)
            results.append(game)
            tally["win" if point == 1 else "loss" if point == 0 else "draw"] += 1
            if game.reason == "time forfeit":
                forfeits[white.name if game.result == "0-1" else black.name] += 1
            print(f"  game {index + 1:>3}: {white.name} - {black.name} {game.result:<8} "
                  f"({game.reason}, {game.game.end().ply()} plies)  [{opening}]", flush=True)
    finally:
        for process in engines.values():
            process.quit()
    write_pgn(results, slug)
    score, elo, low, high = elo_interval(points)
    print(f"{label}: +{tally['win']} ={tally['draw']} -{tally['loss']}  score {score:.1%}  "
          f"Elo {elo + 0.0:+.0f} (95% {low + 0.0:+.0f} .. {high + 0.0:+.0f})  "
          f"in {time.monotonic() - started:.0f} s   (target {target})")
    print("  time forfeits: " + ", ".join(f"{name} {n}" for name, n in forfeits.items()))
    return score, elo


def write_pgn(results: Sequence[GameResult], slug: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"engine_{slug}_{time.strftime('%Y%m%d-%H%M%S')}.pgn"
    with path.open("w") as handle:
        for result in results:
            print(result.game, file=handle, end="\n\n")
    print(f"  games written to {path.relative_to(ROOT)}")


# --------------------------------------------------------------------------------------------
# (d) start-up
# --------------------------------------------------------------------------------------------

def startup_seconds(command: list[str]) -> tuple[float, float]:
    """Seconds from spawn to ``uciok``, and to ``readyok`` after an ``isready``."""
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, bufsize=1)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("uci\n")
    process.stdin.flush()
    marks = []
    for answer, then in (("uciok", "isready\n"), ("readyok", "quit\n")):
        for line in process.stdout:
            if line.strip() == answer:
                break
        marks.append(time.monotonic() - started)
        process.stdin.write(then)
        process.stdin.flush()
    process.wait(30)
    return marks[0], marks[1]


def run_startup(ours: Player, runs: int = 5) -> None:
    print(f"\n(d) start-up, median of {runs} runs (seconds)")
    chesslab = str(Path(sys.executable).with_name("chesslab"))
    players = [sunfish_player(), stockfish_player(1350),
               Player("python -m engines.uci", ours.command),
               Player("chesslab engine", [chesslab, "engine", *ours.command[3:]])]
    print(f"{'program':<22}{'uciok':>8}{'readyok':>9}")
    for player in players:
        marks = sorted(startup_seconds(player.command) for _ in range(runs))
        uciok = statistics.median(m[0] for m in marks)
        readyok = statistics.median(m[1] for m in marks)
        print(f"{player.name:<22}{uciok:>8.3f}{readyok:>9.3f}")
    print("target: uciok < 1 s for both of ours")


# --------------------------------------------------------------------------------------------
# (e) time keeping over UCI
# --------------------------------------------------------------------------------------------

#: The wall-clock bounds tests used to assert, in seconds, by measurement.
TIMING_BOUNDS = {"stop": 0.5, "movetime 300": 1.0, "clock 2 s": 1.3, "clock 20 ms": 0.5}


def timing_sample(engine: chess.engine.SimpleEngine, board: chess.Board) -> dict[str, float]:
    """Seconds of each timed exchange on one position."""
    with engine.analysis(board) as analysis:
        analysis.get()
        time.sleep(0.3)
        started = time.monotonic()
        analysis.stop()
        analysis.wait()
        sample = {"stop": time.monotonic() - started}
    for name, limit in (("movetime 300", chess.engine.Limit(time=0.3)),
                        ("clock 2 s", chess.engine.Limit(white_clock=2.0, black_clock=2.0)),
                        ("clock 20 ms", chess.engine.Limit(white_clock=0.02, black_clock=0.02))):
        started = time.monotonic()
        engine.play(board, limit, game=object())
        sample[name] = time.monotonic() - started
    return sample


def run_timing(ours: Player, runs: int = 3) -> None:
    print(f"\n(e) time keeping over UCI, worst of {runs} runs x {len(NPS_POSITIONS)} positions "
          "(seconds; ours and Stockfish alternate per position)")
    players = [ours, stockfish_player(1350)]
    engines = [chess.engine.SimpleEngine.popen_uci(p.command, cwd=ROOT, timeout=30)
               for p in players]
    worst: list[dict[str, float]] = [dict.fromkeys(TIMING_BOUNDS, 0.0) for _ in players]
    try:
        engines[1].configure({k: v for k, v in players[1].options.items()
                              if not k.startswith("UCI_")})
        for _ in range(runs):
            for fen in NPS_POSITIONS.values():
                for engine, record in zip(engines, worst, strict=True):
                    for name, seconds in timing_sample(engine, chess.Board(fen)).items():
                        record[name] = max(record[name], seconds)
    finally:
        for engine in engines:
            engine.quit()
    print(f"{'exchange':<14}{'bound':>7}{'ours':>8}{'stockfish':>11}{'ratio':>8}")
    for name, bound in TIMING_BOUNDS.items():
        ratio = worst[0][name] / worst[1][name] if worst[1][name] > 0 else math.inf
        print(f"{name:<14}{bound:>7.2f}{worst[0][name]:>8.3f}{worst[1][name]:>11.3f}"
              f"{ratio:>7.2f}x")


# --------------------------------------------------------------------------------------------
# (f) the cost of MultiPV
# --------------------------------------------------------------------------------------------

def run_multipv(depth: int = 6, lines: int = 3) -> None:
    from engines.alphabeta import AlphaBeta, SearchConfig

    print(f"\n(f) MultiPV {lines} against MultiPV 1, depth {depth}, in-process, alternating")
    print(f"{'position':<14}{'nodes 1':>11}{'nodes ' + str(lines):>11}{'ratio':>8}"
          f"{'time ratio':>12}")
    totals = [0, 0, 0.0, 0.0]
    for name, fen in NPS_POSITIONS.items():
        measured = []
        for multipv in (1, lines):
            engine = AlphaBeta(SearchConfig())
            start = time.perf_counter()
            last = list(engine.iterate(chess.Board(fen), max_depth=depth, multipv=multipv))[-1]
            measured.append((last.nodes, time.perf_counter() - start))
        (n1, t1), (nk, tk) = measured
        totals = [totals[0] + n1, totals[1] + nk, totals[2] + t1, totals[3] + tk]
        print(f"{name:<14}{n1:>11,}{nk:>11,}{nk / n1:>7.2f}x{tk / t1:>11.2f}x")
    print(f"{'all':<14}{totals[0]:>11,}{totals[1]:>11,}{totals[1] / totals[0]:>7.2f}x"
          f"{totals[3] / totals[2]:>11.2f}x")


def sunfish_player() -> Player:
    spec = importlib.util.find_spec("sunfish")
    if spec is None or spec.origin is None:
        raise SystemExit("sunfish is not installed: pip install --no-deps sunfish==2026.1")
    return Player("sunfish", [sys.executable, spec.origin])


def stockfish_player(elo: int) -> Player:
    path = shutil.which("stockfish") or "/usr/games/stockfish"
    if not Path(path).exists():
        raise SystemExit("stockfish not found (apt-get install stockfish)")
    # Stockfish's 10 ms default Move Overhead flags at fast controls on a loaded machine (its
    # timer thread is scheduled late); 100 ms keeps the match about chess, not about forfeits.
    return Player(f"stockfish@{elo}", [path], {"Threads": 1, "Hash": 16, "Move Overhead": 100,
                                               "UCI_LimitStrength": True, "UCI_Elo": elo})


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="startup,nps,sunfish,stockfish,timing,multipv",
                        help="comma-separated: startup, nps, sunfish, stockfish, timing, "
                             "multipv (default: all)")
    parser.add_argument("--eval", default="hce", choices=("hce", "hce-simple"),
                        help="evaluation of our engine (default: hce)")
    parser.add_argument("--nps-seconds", type=float, default=1.0,
                        help="search time per position for (a) (default: 1)")
    parser.add_argument("--games", type=int, default=20, help="games per match (default: 20)")
    parser.add_argument("--tc", type=TimeControl.parse, default=TimeControl(4.0, 0.1),
                        help="time control base+increment in seconds (default: 4+0.1)")
    parser.add_argument("--stockfish-elo", type=int, default=1350,
                        help="UCI_Elo of the Stockfish opponent (default: 1350)")
    args = parser.parse_args(argv)
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    unknown = parts - {"startup", "nps", "sunfish", "stockfish", "timing", "multipv"}
    if unknown:
        parser.error(f"unknown parts: {', '.join(sorted(unknown))}")
    for line in OPENINGS:
        opening_board(line)  # a typo in an opening fails here, not mid-match
    ours = Player(f"alphabeta-{args.eval}",
                  [sys.executable, "-m", "engines.uci", "alphabeta", "--eval", args.eval])
    if "startup" in parts:
        run_startup(ours)
    if "nps" in parts:
        run_nps(args.nps_seconds, args.eval)
    if "sunfish" in parts:
        run_match(ours, sunfish_player(), args.games, args.tc, "(b) vs sunfish", ">= +100 Elo",
                  "sunfish")
    if "stockfish" in parts:
        run_match(ours, stockfish_player(args.stockfish_elo), args.games, args.tc,
                  "(c) vs Stockfish", ">= 50%", f"stockfish{args.stockfish_elo}")
    if "timing" in parts:
        run_timing(ours)
    if "multipv" in parts:
        run_multipv()
    return 0


if __name__ == "__main__":
    sys.exit(main())
