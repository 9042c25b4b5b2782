#!/usr/bin/env python3
"""Move quality at fixed depth: the alpha-beta engine with ``--eval nnue`` against ``--eval
hce`` on the same positions, judged by Stockfish.

For each position, Stockfish at ``--reference-depth`` gives the best value; each evaluation
searches to each of ``--depths`` and plays a move; the move's regret is the best value minus
Stockfish's value after it (centipawns, capped at 500, mates at 3000). Both evaluations face
the same positions, so the difference of their mean regrets comes with a paired standard
error. Nodes are counted too: a net that needs more nodes for a depth pays for it at a clock.

This answers "is the net a better evaluation than the HCE inside the search?" in minutes,
where a match at equal time needs hundreds of games; it is not a strength claim.

    .venv/bin/python benchmarks/eval_quality.py --net HOME/models/nnue/7/nnue.npz \\
        --dataset HOME/models/nnue/7/dataset.parquet --count 1000 --depths 3,5,7

Positions come from a model's ``dataset.parquet`` (its validation rows: games the net never
trained on) or from ``--fens`` (one FEN or EPD per line).
"""
from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.engine

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engines.alphabeta import AlphaBeta, SearchConfig  # noqa: E402

MATE_CP = 3000
REGRET_CAP = 500
BLUNDER_CP = 100


@dataclass
class Tally:
    """Regrets (capped) and nodes of one evaluation at one depth, position by position."""

    regrets: list[float] = field(default_factory=list)
    nodes: int = 0

    def mean(self) -> float:
        return sum(self.regrets) / len(self.regrets)

    def blunders(self) -> float:
        return sum(r > BLUNDER_CP for r in self.regrets) / len(self.regrets)


def board_of(line: str) -> chess.Board:
    """A FEN line, or an EPD one (operations such as ``bm`` after the four fields)."""
    try:
        return chess.Board(line)
    except ValueError:
        return chess.Board.from_epd(line)[0]


def read_positions(args: argparse.Namespace) -> list[chess.Board]:
    if args.fens:
        lines = [line.strip() for line in args.fens.read_text().splitlines() if line.strip()]
        boards = [board_of(line) for line in lines]
    else:
        import duckdb

        rows = duckdb.connect().execute(
            "select fen from read_parquet(?) where validation order by hash(position_key) "
            "limit ?", [str(args.dataset), args.count]).fetchall()
        boards = [chess.Board(fen) for (fen,) in rows]
    return [b for b in boards if not b.is_game_over()][:args.count]


def value_cp(score: chess.engine.PovScore, board: chess.Board) -> int:
    return int(score.pov(board.turn).score(mate_score=MATE_CP))


def after_move(sf: chess.engine.SimpleEngine, board: chess.Board, move: chess.Move,
               limit: chess.engine.Limit) -> int:
    """Stockfish's value of ``move`` for the side that plays it."""
    child = board.copy(stack=False)
    child.push(move)
    if child.is_checkmate():
        return MATE_CP
    if child.is_game_over():
        return 0
    return -value_cp(sf.analyse(child, limit)["score"], child)


def paired(a: list[float], b: list[float]) -> tuple[float, float]:
    """Mean of b - a and its standard error."""
    diffs = [y - x for x, y in zip(a, b, strict=True)]
    mean = sum(diffs) / len(diffs)
    var = sum((d - mean) ** 2 for d in diffs) / max(1, len(diffs) - 1)
    return mean, math.sqrt(var / len(diffs))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--net", type=Path, required=True, help="a chesslab NNUE v1 .npz")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--dataset", type=Path, help="a model's dataset.parquet")
    source.add_argument("--fens", type=Path, help="a file of FEN or EPD lines")
    parser.add_argument("--count", type=int, default=500, help="positions (default: 500)")
    parser.add_argument("--depths", default="3,5,7", help="search depths (default: 3,5,7)")
    parser.add_argument("--reference-depth", type=int, default=10,
                        help="Stockfish's depth for the values (default: 10)")
    parser.add_argument("--stockfish", default="/usr/games/stockfish")
    args = parser.parse_args(argv)
    depths = [int(d) for d in args.depths.split(",")]
    boards = read_positions(args)
    if not boards:
        parser.error("no positions to judge")
    engines = {"hce": AlphaBeta(SearchConfig(eval="hce")),
               "nnue": AlphaBeta(SearchConfig(eval="nnue", nnue_path=str(args.net)))}
    tallies = {(name, d): Tally() for name in engines for d in depths}
    limit = chess.engine.Limit(depth=args.reference_depth)
    with chess.engine.SimpleEngine.popen_uci(args.stockfish) as sf:
        sf.configure({"Threads": 1, "Hash": 64})
        for board in boards:
            best = value_cp(sf.analyse(board, limit)["score"], board)
            judged: dict[chess.Move, int] = {}
            for name, engine in engines.items():
                for d in depths:
                    engine.new_game()
                    result = engine.best_move(board, d)
                    move = result.pv[0]
                    if move not in judged:
                        judged[move] = after_move(sf, board, move, limit)
                    tally = tallies[name, d]
                    tally.regrets.append(min(REGRET_CAP, max(0, best - judged[move])))
                    tally.nodes += result.nodes
    print(f"{len(boards)} positions, Stockfish depth {args.reference_depth} as the judge; "
          f"regret capped at {REGRET_CAP} cp; blunder = regret > {BLUNDER_CP} cp")
    for d in depths:
        hce, nnue = tallies["hce", d], tallies["nnue", d]
        diff, se = paired(hce.regrets, nnue.regrets)
        print(f"depth {d}: regret hce {hce.mean():.1f} cp, nnue {nnue.mean():.1f} cp "
              f"(nnue - hce {diff:+.1f} +- {se:.1f}); blunders hce {hce.blunders():.1%}, "
              f"nnue {nnue.blunders():.1%}; nodes nnue/hce {nnue.nodes / hce.nodes:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
