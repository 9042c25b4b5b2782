"""``chesslab tournament``: play a round robin or gauntlet, then rate it."""
from __future__ import annotations

import argparse
import logging
from typing import Any

from flows.options import add_config_arguments, config_from_args
from flows.runtime import add_games_arguments, add_runner_arguments, games_options, make_runner
from pipelines.tournament.config import TournamentConfig


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "tournament", help="play a round robin or gauntlet between engines",
        description="Games come in pairs (same opening, colours reversed); each finished game "
                    "is written to the warehouse, and running the same command again plays only "
                    "the missing games.")
    parser.add_argument("engines", nargs="+", metavar="ENGINE",
                        help="engine specs: alphabeta:eval=hce, stockfish@1350, toga2, "
                             "uci:PATH, xboard:PATH, NAME from --engines-file; '#name' renames")
    add_config_arguments(parser, TournamentConfig, skip=("engines", "runner"))
    add_games_arguments(parser)
    parser.add_argument("--no-rate", action="store_true", help="do not rate the games after")
    add_runner_arguments(parser, cluster=False)
    parser.set_defaults(run=run_tournament_command)


def run_tournament_command(args: argparse.Namespace) -> int:
    config = config_from_args(TournamentConfig, args, engines=tuple(args.engines),
                              runner=games_options(args))
    if not args.verbose:   # xboard engines chat a lot; python-chess warns on every line
        logging.getLogger("chess.engine").setLevel(logging.ERROR)
    from flows.evaluate import evaluate

    with make_runner(args) as runner:
        result = evaluate(runner, config, args.lake, skip_ratings=args.no_rate)
    print(report(result))
    return 0


def report(result: Any) -> str:
    """The ratings table (when rated), the tournament line and the SPRT's state."""
    from pipelines.ratings import format_ratings

    summary = result.tournament
    lines = [format_ratings(result.ratings)] if result.ratings is not None else []
    lines.append(f"tournament {summary.tournament_id}: {summary.status}, "
                 f"{summary.already_done + summary.played}/{summary.planned} games "
                 f"({summary.played} played now)")
    lost = sum(summary.time_forfeits.values())
    if lost:
        lines.append("lost on time: " + ", ".join(
            f"{name} {n}" for name, n in sorted(summary.time_forfeits.items())) +
            f" ({lost} of {summary.already_done + summary.played} games, "
            f"{summary.forfeit_rate:.1%})")
    if warning := summary.forfeit_warning():
        lines.append(warning)
    if summary.lost_workers:
        lines.append(f"lost workers: {', '.join(summary.lost_workers)}; "
                     f"{summary.replayed_batches} of their batches played again elsewhere")
    if summary.sprt is not None:
        lines.append(summary.sprt.describe())
    return "\n".join(lines)
