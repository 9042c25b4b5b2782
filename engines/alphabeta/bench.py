"""``chesslab bench``: a fixed search over fixed positions, for node counts and speed.

Each position is searched to the same depth after ``new_game()``, so the total node count is a
deterministic fingerprint of the search (any change to pruning, ordering or evaluation moves
it) and nodes per second compare builds and machines. The positions are the classic
Stockfish bench set (openings, middlegames, endgames).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import chess

from engines.alphabeta import EVALS, LMR_BUILTINS, AlphaBeta, Reduction, SearchConfig

BENCH_FENS = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 10",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11",
    "4rrk1/pp1n3p/3q2pQ/2p1pb2/2PP4/2P3N1/P2B2PP/4RRK1 b - - 7 19",
    "rq3rk1/ppp2ppp/1bnpb3/3N2B1/3NP3/7P/PPPQ1PP1/2KR3R w - - 7 14",
    "r1bq1r1k/1pp1n1pp/1p1p4/4p2Q/4Pp2/1BNP4/PPP2PPP/3R1RK1 w - - 2 14",
    "r3r1k1/2p2ppp/p1p1bn2/8/1q2P3/2NPQN2/PPP3PP/R4RK1 b - - 2 15",
    "r1bbk1nr/pp3p1p/2n5/1N4p1/2Np1B2/8/PPP2PPP/2KR1B1R w kq - 0 13",
    "r1bq1rk1/ppp1nppp/4n3/3p3Q/3P4/1BP1B3/PP1N2PP/R4RK1 w - - 1 16",
    "4r1k1/r1q2ppp/ppp2n2/4P3/5Rb1/1N1BQ3/PPP3PP/R5K1 w - - 1 17",
    "2rqkb1r/ppp2p2/2npb1p1/1N1Nn2p/2P1PP2/8/PP2B1PP/R1BQK2R b KQ - 0 11",
    "r1bq1r1k/b1p1npp1/p2p3p/1p6/3PP3/1B2NN2/PP3PPP/R2Q1RK1 w - - 1 16",
    "3r1rk1/p5pp/bpp1pp2/8/q1PP1P2/b3P3/P2NQRPP/1R2B1K1 b - - 6 22",
    "r1q2rk1/2p1bppp/2Pp4/p6b/Q1PNp3/4B3/PP1R1PPP/2K4R w - - 2 18",
    "4k2r/1pb2ppp/1p2p3/1R1p4/3P4/2r1PN2/P4PPP/1R4K1 b - - 3 22",
    "3q2k1/pb3p1p/4pbp1/2r5/PpN2N2/1P2P2P/5PP1/Q2R2K1 b - - 4 26",
    "6k1/6p1/6Pp/ppp5/3pn2P/1P3K2/1PP2P2/3N4 b - - 0 1",
    "3b4/5kp1/1p1p1p1p/pP1PpP1P/P1P1P3/3KN3/8/8 w - - 0 1",
    "2K5/p7/7P/5pR1/8/5k2/r7/8 w - - 0 1",
    "8/6pk/1p6/8/PP3p1p/5P2/4KP1q/3Q4 w - - 0 1",
    "7k/3p2pp/4q3/8/4Q3/5Kp1/P6b/8 w - - 0 1",
    "8/2p5/8/2kPKp1p/2p4P/2P5/3P4/8 w - - 0 1",
    "8/1p3pp1/7p/5P1P/2k3P1/8/2K2P2/8 w - - 0 1",
    "8/pp2r1k1/2p1p3/3pP2p/1P1P1P1P/P5KR/8/8 w - - 0 1",
]


class BenchConfigError(ValueError):
    """A BenchConfig field out of range."""


@dataclass
class BenchConfig:
    """What ``chesslab bench`` searches.

    depth: fixed search depth per position.
    eval: "hce" or "hce-simple".
    lmr: "default" or "none".
    hash_mb: transposition table size, MiB.
    positions: how many of the bench positions to use (from the start of the list).
    """

    depth: int = field(default=8, metadata={"help": "search depth per position"})
    eval: str = field(default="hce", metadata={"help": "evaluation: hce or hce-simple"})
    lmr: str = field(default="default", metadata={
        "help": "late-move reductions: default, none, or lmr@N (a learned formula, resolved "
                "by chesslab bench)"})
    hash_mb: int = field(default=16, metadata={"help": "transposition table, MiB"})
    positions: int = field(default=len(BENCH_FENS), metadata={"help": "positions to search"})

    def __post_init__(self) -> None:
        if not 1 <= self.depth <= 64:
            raise BenchConfigError(f"bench depth must be in 1..64, got {self.depth!r}")
        if self.eval not in EVALS:
            raise BenchConfigError(f"eval must be one of {EVALS}, got {self.eval!r}")
        if self.lmr not in LMR_BUILTINS:
            raise BenchConfigError(f"lmr must be one of {LMR_BUILTINS}, got {self.lmr!r}")
        if not 1 <= self.positions <= len(BENCH_FENS):
            raise BenchConfigError(
                f"positions must be in 1..{len(BENCH_FENS)}, got {self.positions!r}")

    @classmethod
    def tiny(cls) -> BenchConfig:
        return cls(depth=4, positions=6, hash_mb=1)


@dataclass
class BenchResult:
    nodes: int
    seconds: float
    per_position: list[int]

    @property
    def nps(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else 0.0


def run_bench(config: BenchConfig, reduction: Reduction | None = None) -> BenchResult:
    """Search every bench position to ``config.depth``; a fresh game for each.

    ``reduction`` replaces ``config.lmr`` by a callable reduction(d, m, state): paper 003
    scales a learned formula until its bench node count matches the default's (Figure 6.1).
    """
    lmr: str | Reduction = reduction if reduction is not None else config.lmr
    engine = AlphaBeta(SearchConfig(eval=config.eval, lmr=lmr, hash_mb=config.hash_mb))
    per_position = []
    start = time.perf_counter()
    for fen in BENCH_FENS[:config.positions]:
        engine.new_game()
        result = list(engine.iterate(chess.Board(fen), max_depth=config.depth))[-1]
        per_position.append(result.nodes)
    return BenchResult(sum(per_position), time.perf_counter() - start, per_position)
