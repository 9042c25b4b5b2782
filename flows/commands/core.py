"""``chesslab perft`` and ``chesslab bench``: the compiled core's move counts and search speed."""
from __future__ import annotations

import argparse

from engines.alphabeta.bench import BenchConfig, run_bench
from engines.core import perft_count, perft_divide
from flows.options import add_config_arguments, config_from_args


def register(subparsers: argparse._SubParsersAction) -> None:
    perft = subparsers.add_parser("perft", help="count leaf nodes of the legal move tree")
    perft.add_argument("fen", help='FEN of the position ("startpos" for the initial one)')
    perft.add_argument("depth", type=int, help="plies")
    perft.add_argument("--divide", action="store_true", help="one count per root move")
    perft.set_defaults(run=run_perft)
    bench = subparsers.add_parser("bench", help="fixed-depth search of the bench positions")
    add_config_arguments(bench, BenchConfig)
    bench.set_defaults(run=run_bench_command)


def run_perft(args: argparse.Namespace) -> int:
    fen = None if args.fen == "startpos" else args.fen
    if args.divide:
        counts = perft_divide(fen, args.depth)
        for uci, nodes in sorted(counts.items()):
            print(f"{uci}: {nodes}")
        print(f"\nNodes searched: {sum(counts.values())}")
    else:
        print(perft_count(fen, args.depth))
    return 0


def run_bench_command(args: argparse.Namespace) -> int:
    from engines.identity import MODEL_VERSION

    formula = None
    if MODEL_VERSION.match(args.lmr):     # lmr@N: the learned formula, bench-normalised
        from engines.alphabeta.formula import LmrFormula
        from pipelines.models.deploy import resolve_settings

        settings = resolve_settings(args.lake, "bench", {"lmr": args.lmr},
                                    known=("lmr", "lmr_formula"))
        if "lmr_formula" in settings:      # else not a model name: the config refuses it
            args.lmr, formula = settings["lmr"], LmrFormula.parse(settings["lmr_formula"])
    config = config_from_args(BenchConfig, args, lmr="default" if formula else args.lmr)
    result = run_bench(config, formula)
    print(f"positions: {config.positions}  depth: {config.depth}  eval: {config.eval}  "
          f"lmr: {args.lmr}")
    print(f"Total time (ms) : {result.seconds * 1000:.0f}")
    print(f"Nodes searched  : {result.nodes}")
    print(f"Nodes/second    : {result.nps:.0f}")
    return 0
