#!/usr/bin/env python3
"""Build the bundled sample corpus in ``data/sample/`` from Stockfish 15.1 self-play.

Real human game collections cannot be downloaded where chesslab is developed, so the sample is
engine-vs-engine: Stockfish 15.1 (one thread, 16 MB hash, a fixed node budget per player) plays
from a varied list of named openings, then picks among its MultiPV lines at random for a few
plies so that no two games repeat. Every move carries Lichess-style ``[%eval]`` and ``[%clk]``
comments (the clock is simulated from the TimeControl tag, the eval is Stockfish's score of the
position after the move), and the tags imitate a Lichess export (WhiteElo/BlackElo are nominal
ratings derived from the node budget). A few games start from a position (``SetUp``/``FEN``
tags). From those games the script also writes an EPD suite (best move by Stockfish at a fixed
depth, with ``id``/``bm``/``ce``/``acd``/``c0`` opcodes) and a plain FEN list.

Outputs: ``games.pgn.zst``, ``suite.epd``, ``positions.fen``. Deterministic for a given seed
(Stockfish searches are node-limited on one thread after ``ucinewgame``).

    .venv/bin/python scripts/make_sample.py [--games 400] [--seed 2026] [--out data/sample]

On the development machine (2 cores shared with other jobs) 400 games took 20 minutes.
"""
from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import zstandard

STOCKFISH = "/usr/games/stockfish"
NODE_BUDGETS = (1500, 3000, 6000, 12000)
NOMINAL_ELO = {1500: 1850, 3000: 2050, 6000: 2250, 12000: 2450}
TIME_CONTROLS = ((60, 1), (180, 0), (180, 2), (300, 3), (600, 5), (900, 10))
RANDOM_PLIES = (2, 6)          # MultiPV-random plies after the book line
MULTIPV = 4
RANDOM_WINDOW_CP = 60          # a random pick stays within this of the best line
RESIGN_CP, RESIGN_PLIES = 900, 6
MAX_PLIES = 240
SETUP_EVERY = 40               # every 40th game starts from a position (SetUp/FEN)
EPD_POSITIONS, FEN_POSITIONS, EPD_DEPTH = 80, 60, 14

# (ECO, Lichess-style name, book moves in SAN)
OPENINGS = (
    ("B20", "Sicilian Defense", "e4 c5"),
    ("B22", "Sicilian Defense: Alapin Variation", "e4 c5 c3"),
    ("B90", "Sicilian Defense: Najdorf Variation", "e4 c5 Nf3 d6 d4 cxd4 Nxd4 Nf6 Nc3 a6"),
    ("B33", "Sicilian Defense: Open", "e4 c5 Nf3 Nc6 d4 cxd4 Nxd4 Nf6"),
    ("B40", "Sicilian Defense: French Variation", "e4 c5 Nf3 e6"),
    ("C00", "French Defense", "e4 e6"),
    ("C02", "French Defense: Advance Variation", "e4 e6 d4 d5 e5"),
    ("C11", "French Defense: Classical Variation", "e4 e6 d4 d5 Nc3 Nf6"),
    ("B10", "Caro-Kann Defense", "e4 c6"),
    ("B12", "Caro-Kann Defense: Advance Variation", "e4 c6 d4 d5 e5"),
    ("B01", "Scandinavian Defense", "e4 d5"),
    ("B02", "Alekhine Defense", "e4 Nf6"),
    ("B06", "Modern Defense", "e4 g6"),
    ("B07", "Pirc Defense", "e4 d6 d4 Nf6 Nc3 g6"),
    ("C41", "Philidor Defense", "e4 e5 Nf3 d6"),
    ("C42", "Petrov's Defense", "e4 e5 Nf3 Nf6"),
    ("C44", "Scotch Game", "e4 e5 Nf3 Nc6 d4"),
    ("C47", "Four Knights Game", "e4 e5 Nf3 Nc6 Nc3 Nf6"),
    ("C50", "Italian Game", "e4 e5 Nf3 Nc6 Bc4"),
    ("C55", "Italian Game: Two Knights Defense", "e4 e5 Nf3 Nc6 Bc4 Nf6"),
    ("C60", "Ruy Lopez", "e4 e5 Nf3 Nc6 Bb5"),
    ("C65", "Ruy Lopez: Berlin Defense", "e4 e5 Nf3 Nc6 Bb5 Nf6"),
    ("C30", "King's Gambit", "e4 e5 f4"),
    ("C23", "Bishop's Opening", "e4 e5 Bc4"),
    ("C25", "Vienna Game", "e4 e5 Nc3"),
    ("D00", "Queen's Pawn Game", "d4 d5"),
    ("D02", "Queen's Pawn Game: London System", "d4 d5 Nf3 Nf6 Bf4"),
    ("D06", "Queen's Gambit", "d4 d5 c4"),
    ("D20", "Queen's Gambit Accepted", "d4 d5 c4 dxc4"),
    ("D30", "Queen's Gambit Declined", "d4 d5 c4 e6"),
    ("D10", "Slav Defense", "d4 d5 c4 c6"),
    ("D80", "Grunfeld Defense", "d4 Nf6 c4 g6 Nc3 d5"),
    ("E20", "Nimzo-Indian Defense", "d4 Nf6 c4 e6 Nc3 Bb4"),
    ("E12", "Queen's Indian Defense", "d4 Nf6 c4 e6 Nf3 b6"),
    ("E60", "King's Indian Defense", "d4 Nf6 c4 g6"),
    ("A45", "Indian Defense", "d4 Nf6"),
    ("A56", "Benoni Defense", "d4 Nf6 c4 c5"),
    ("A57", "Benko Gambit", "d4 Nf6 c4 c5 d5 b5"),
    ("A80", "Dutch Defense", "d4 f5"),
    ("A10", "English Opening", "c4"),
    ("A20", "English Opening: King's English Variation", "c4 e5"),
    ("A04", "Zukertort Opening", "Nf3"),
    ("A02", "Bird Opening", "f4"),
    ("A01", "Nimzo-Larsen Attack", "b3"),
    ("A00", "Polish Opening", "b4"),
)


@dataclass
class Player:
    nodes: int

    @property
    def name(self) -> str:
        return f"Stockfish 15.1 ({self.nodes} nodes)"


def white_cp(score: chess.engine.PovScore) -> tuple[int | None, int | None]:
    """(centipawns, mate) from White's point of view."""
    white = score.white()
    return (None, white.mate()) if white.is_mate() else (white.score(), None)


def eval_text(cp: int | None, mate: int | None) -> str:
    return f"#{mate}" if mate is not None else f"{cp / 100:.2f}"


def clock_text(seconds: float) -> str:
    s = max(0, int(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class SampleGame:
    """One game being played: its board, moves and their comments."""

    def __init__(self, start: chess.Board, base: int, increment: int) -> None:
        self.board = start.copy()
        self.start = start.copy()
        self.comments: list[str] = []
        self.clocks = [float(base), float(base)]
        self.increment = increment
        self.result = "*"
        self.termination = "Normal"

    def spend(self, rng: random.Random) -> str:
        side = 0 if self.board.turn == chess.WHITE else 1
        used = min(self.clocks[side] * 0.9, self.clocks[side] / 30 * rng.uniform(0.2, 1.8))
        self.clocks[side] = self.clocks[side] - used + self.increment
        return clock_text(self.clocks[side])


def pick_move(engine: chess.engine.SimpleEngine, board: chess.Board, nodes: int, explore: bool,
              rng: random.Random, game_id: int) -> tuple[chess.Move, chess.engine.PovScore]:
    """Stockfish's move, or a random MultiPV line near the best while exploring."""
    infos = engine.analyse(board, chess.engine.Limit(nodes=nodes),
                           multipv=MULTIPV if explore else 1, game=game_id)
    best = infos[0]
    if not explore:
        return best["pv"][0], best["score"]
    best_cp = best["score"].relative.score(mate_score=100000)
    near = [i for i in infos if "pv" in i
            and best_cp - i["score"].relative.score(mate_score=100000) <= RANDOM_WINDOW_CP]
    chosen = rng.choice(near)
    return chosen["pv"][0], chosen["score"]


def play_game(engine: chess.engine.SimpleEngine, start: chess.Board, white: Player, black: Player,
              book: list[str], tc: tuple[int, int], rng: random.Random, game_id: int) -> SampleGame:
    game = SampleGame(start, *tc)
    for san in book:
        game.board.push_san(san)
        game.comments.append(f"[%clk {game.spend(rng)}]")
    explore_until = game.board.ply() + rng.randint(*RANDOM_PLIES)
    streak = 0  # consecutive plies with one side at least RESIGN_CP ahead (signed)
    while not game.board.is_game_over() and not game.board.is_repetition(3):
        if len(game.board.move_stack) >= MAX_PLIES:
            game.result, game.termination = "1/2-1/2", "Adjudication"
            return game
        player = white if game.board.turn == chess.WHITE else black
        move, score = pick_move(engine, game.board, player.nodes,
                                game.board.ply() < explore_until, rng, game_id)
        cp, mate = white_cp(score)
        if game.comments:  # the score of this position is the eval after the previous move
            game.comments[-1] = f"[%eval {eval_text(cp, mate)}] " + game.comments[-1]
        white_score = score.white().score(mate_score=100000)
        sign = (white_score >= RESIGN_CP) - (white_score <= -RESIGN_CP)
        streak = streak + sign if sign and streak * sign >= 0 else sign
        if abs(streak) >= RESIGN_PLIES:  # the losing side resigns
            game.result = "1-0" if streak > 0 else "0-1"
            return game
        clock = game.spend(rng)
        game.board.push(move)
        game.comments.append(f"[%clk {clock}]")
    outcome = game.board.outcome(claim_draw=True)
    game.result = outcome.result() if outcome else "1/2-1/2"
    return game


def to_pgn(game: SampleGame, headers: dict[str, str]) -> str:
    pgn = chess.pgn.Game.from_board(game.board)
    pgn.headers.clear()
    for name, value in headers.items():
        pgn.headers[name] = value
    if game.start.fen() != chess.STARTING_FEN:
        pgn.setup(game.start)
    pgn.headers["Result"] = game.result
    for node, comment in zip(pgn.mainline(), game.comments, strict=False):
        node.comment = comment
    exporter = chess.pgn.StringExporter(headers=True, variations=False, comments=True, columns=None)
    return pgn.accept(exporter) + "\n\n"


def make_games(engine: chess.engine.SimpleEngine, count: int, rng: random.Random
               ) -> tuple[list[str], list[tuple[int, chess.Board]]]:
    """PGN texts and (game number, board) samples of middlegame positions."""
    texts: list[str] = []
    samples: list[tuple[int, chess.Board]] = []
    start_positions: list[chess.Board] = []
    for n in range(count):
        white, black = Player(rng.choice(NODE_BUDGETS)), Player(rng.choice(NODE_BUDGETS))
        tc = rng.choice(TIME_CONTROLS)
        eco, opening, moves = rng.choice(OPENINGS)
        from_position = n % SETUP_EVERY == SETUP_EVERY - 1 and start_positions
        start = rng.choice(start_positions) if from_position else chess.Board()
        book = [] if from_position else moves.split()
        game = play_game(engine, start, white, black, book, tc, rng, n)
        day = 1 + n % 28
        headers = {
            "Event": "chesslab sample: Stockfish 15.1 self-play"
                     + (" from position" if from_position else ""),
            "Site": "chesslab scripts/make_sample.py", "Date": f"2026.10.{day:02d}",
            "Round": str(n + 1), "White": white.name, "Black": black.name, "Result": "*",
            "UTCDate": f"2026.10.{day:02d}", "UTCTime": f"{n % 24:02d}:{(n * 7) % 60:02d}:00",
            "WhiteElo": str(NOMINAL_ELO[white.nodes]), "BlackElo": str(NOMINAL_ELO[black.nodes]),
            "ECO": "?" if from_position else eco, "Opening": "?" if from_position else opening,
            "TimeControl": f"{tc[0]}+{tc[1]}", "Termination": game.termination,
        }
        texts.append(to_pgn(game, headers))
        replay = game.start.copy()
        for ply, move in enumerate(game.board.move_stack):
            if ply in (24, 40) and not replay.is_game_over():
                samples.append((n, replay.copy(stack=False)))
                if ply == 24:
                    start_positions.append(replay.copy(stack=False))
            replay.push(move)
        if (n + 1) % 50 == 0:
            print(f"  {n + 1} games", flush=True)
    return texts, samples


def make_epd(engine: chess.engine.SimpleEngine, samples: list[tuple[int, chess.Board]]) -> str:
    lines = []
    for i, (game_no, board) in enumerate(samples, 1):
        info = engine.analyse(board, chess.engine.Limit(depth=EPD_DEPTH), game=f"epd{i}")
        lines.append(board.epd(
            bm=[info["pv"][0]], ce=info["score"].relative.score(mate_score=32000),
            acd=EPD_DEPTH, id=f"chesslab.sample.{i:03d}", c0=f"game {game_no + 1}"))
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).parent.parent / "data" / "sample")
    parser.add_argument("--stockfish", default=STOCKFISH)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    with chess.engine.SimpleEngine.popen_uci(args.stockfish) as engine:
        engine.configure({"Threads": 1, "Hash": 16})
        texts, samples = make_games(engine, args.games, rng)
        rng.shuffle(samples)
        epd = make_epd(engine, samples[:EPD_POSITIONS])
    pgn = "".join(texts).encode()
    (args.out / "games.pgn.zst").write_bytes(zstandard.ZstdCompressor(level=19).compress(pgn))
    (args.out / "suite.epd").write_text(epd)
    fens = [board.fen() for _, board in samples[EPD_POSITIONS:EPD_POSITIONS + FEN_POSITIONS]]
    (args.out / "positions.fen").write_text(
        "# chesslab sample: positions from Stockfish 15.1 self-play games, one FEN per line\n"
        + "\n".join(fens) + "\n")
    print(f"{args.games} games, {len(pgn)} bytes of PGN, {time.monotonic() - began:.0f} s")


if __name__ == "__main__":
    main()
