"""``chesslab mcc roundrobin|epsilon|kqk|reti|solver``: the experiments of paper 001
(Monte Carlo Chess) on the Monte-Carlo engine; results go to the warehouse."""
from __future__ import annotations

import argparse
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from flows.options import add_config_arguments, config_from_args
from flows.runtime import add_games_arguments, games_options
from pipelines.mcc import MccConfig

if TYPE_CHECKING:
    from pipelines.tournament import TournamentConfig


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "mcc", help="paper 001's experiments on the Monte-Carlo engine",
        description="Round robins are tournaments (rerun to resume) rated with BayesElo "
                    "against MCC = 0; diagnostics are written to the mcc_results table.")
    experiments = parser.add_subparsers(dest="experiment", required=True)
    for name, helptext in (("roundrobin", "Table 7/8: Combined, DecisiveMoves, HP_SEE 0.4, "
                                          "ProgressiveBias, MCC"),
                           ("epsilon", "Tables 1/3: the epsilon sweep of heavy playouts")):
        sub = experiments.add_parser(name, help=helptext)
        add_config_arguments(sub, MccConfig, skip=("runner",))
        add_games_arguments(sub)     # --cluster, --workers: the games runner (pipelines.games)
        if name == "epsilon":
            sub.add_argument("--kind", choices=("see", "eval"), default="see")
        sub.set_defaults(run=run_round_robin)
    kqk = experiments.add_parser("kqk", help="Figure 6: White mates in random KQK playouts")
    kqk.add_argument("--playouts", type=int, default=1_000_000)
    kqk.add_argument("--seed", type=int, default=1)
    kqk.add_argument("--fen", default=None, help="a KQK position (default: the module's)")
    kqk.set_defaults(run=run_kqk)
    reti = experiments.add_parser("reti", help="Figure 7: iterations until 1.Kg7 is chosen")
    reti.add_argument("--iterations", type=int, default=200_000)
    reti.add_argument("--seeds", type=int, default=3, help="runs per variant")
    reti.set_defaults(run=run_reti)
    solver = experiments.add_parser(
        "solver", help="the solver on EPD mate problems (dm)",
        description="Prints each problem's result and the score (exact/problems); exits 0 "
                    "when the run finished, whatever the score, and non-zero on an error.")
    solver.add_argument("epd", help="EPD file with dm opcodes")
    solver.add_argument("--variant", default="solver")
    solver.add_argument("--iterations", type=int, default=300_000)
    solver.add_argument("--hash-mb", type=int, default=256,
                        help="tree memory, MB: an expanded node keeps a slot per legal move, "
                             "so a long proof needs about 1 GB per million iterations (KQK)")
    solver.set_defaults(run=run_solver)


def round_robin_of(args: argparse.Namespace
                   ) -> tuple[TournamentConfig, Mapping[str, tuple[float, ...]]]:
    """The experiment's tournament (played on the games runner the options name) and the
    thesis' table it is printed beside."""
    from pipelines import mcc

    config = config_from_args(MccConfig, args, runner=games_options(args))
    if args.experiment == "roundrobin":
        return mcc.main_round_robin(config), dict(mcc.TABLE_8)
    return mcc.epsilon_round_robin(args.kind, config), mcc.sweep_reference(args.kind)


def run_round_robin(args: argparse.Namespace) -> int:
    from pipelines import mcc
    from pipelines.tournament import run_tournament

    logging.getLogger("chess.engine").setLevel(logging.ERROR)
    tournament, thesis = round_robin_of(args)
    summary = run_tournament(tournament, args.lake)
    table = mcc.rate_against_mcc(args.lake, summary.tournament_id)
    print(mcc.beside_thesis(table, thesis))
    print(f"tournament {summary.tournament_id}: {summary.status}, "
          f"{summary.already_done + summary.played}/{summary.planned} games")
    return 0


def run_kqk(args: argparse.Namespace) -> int:
    from pipelines import mcc

    fen = args.fen or mcc.KQK_FEN
    expected = mcc.THESIS_KQK_MATES * args.playouts / 1_000_000
    for repetition in (2, 3):
        result = mcc.kqk_statistic(args.playouts, args.seed, fen, repetition)
        print(f"repetition {repetition}: {result['white_wins']} White mates in "
              f"{args.playouts} playouts ({100 * result['white_wins'] / args.playouts:.3f}%; "
              f"thesis {mcc.THESIS_KQK_MATES} per 1,000,000), value {result['white_value']:.6f}")
        mcc.record(args.lake, "kqk", "mcc", fen, args.seed, args.playouts,
                   f"repetition={repetition}",
                   {"white_mates": (result["white_wins"], expected),
                    "mean_plies": (result["plies"] / args.playouts, None)})
    return 0


def run_reti(args: argparse.Namespace) -> int:
    from pipelines import mcc

    for variant in ("combined", "combined-discard"):
        for seed in range(1, args.seeds + 1):
            result = mcc.reti_study(variant, args.iterations, seed)
            print(f"{variant:<17} seed {seed}: 1.Kg7 from iteration "
                  f"{result['iterations_to_move']} ({_seconds(result['seconds_to_move'])}), "
                  f"final choice {result['final_move']}, {result['iterations']} iterations "
                  f"in {result['seconds']:.1f} s")
            mcc.record(args.lake, "reti", variant, mcc.RETI_FEN, seed, args.iterations,
                       "1.Kg7", {"iterations_to_move": (result["iterations_to_move"], None),
                                 "seconds_to_move": (result["seconds_to_move"], None)})
    return 0


def _seconds(value: float | None) -> str:
    return "never" if value is None else f"{value:.2f} s"


def run_solver(args: argparse.Namespace) -> int:
    from pipelines import mcc

    rows = mcc.solver_suite(args.epd, args.variant, args.iterations, hash_mb=args.hash_mb)
    for row in rows:
        print(f"dm {row['dm']}  found {row['mate']}  {'exact' if row['exact'] else 'MISSED':<6} "
              f"{row['iterations']:>8} iterations {row['seconds']:6.2f} s  {row['fen']}")
        mcc.record(args.lake, "solver", args.variant, row["fen"], 1, args.iterations, row["id"],
                   {"mate_moves": (row["mate"], row["dm"]),
                    "iterations": (row["iterations"], None)})
    exact = sum(row["exact"] for row in rows)
    print(f"{exact}/{len(rows)} exact within {args.iterations} iterations")
    return 0   # a finished run reports its score; a missed problem is a result, not an error


__all__ = ["register"]
