"""``chesslab tournament``: play a round robin or gauntlet, then rate it."""
from __future__ import annotations

import argparse
import json
import logging
from typing import Any

from flows.options import add_config_arguments, add_output_format, config_from_args
from flows.runtime import add_games_arguments, add_runner_arguments, games_options, make_runner
from pipelines.tournament.config import TournamentConfig

#: ``tournament --help`` in groups: the fields of TournamentConfig by what they decide.
GROUPS = {
    "players and schedule": ("engines_file", "format", "rounds", "event"),
    "openings": ("openings", "opening_plies", "opening_order", "seed"),
    "limits (one of --tc, --movetime-ms, --nodes, --depth)": (
        "tc", "movetime_ms", "nodes", "depth", "timemargin_ms", "move_timeout_s"),
    "adjudication": ("resign_moves", "resign_score", "draw_move_number", "draw_moves",
                     "draw_score", "tablebases", "max_plies"),
    "SPRT (two players)": ("sprt_elo0", "sprt_elo1", "sprt_alpha", "sprt_beta", "sprt_model",
                           "sprt_stop"),
    "output": ("progress", "rating_interval"),
    "where the games are played": ("concurrency",),
}
#: ``--format`` is the output's here; the tournament's type was ``--format`` before.
TYPE_HINTS = {kind: f"{kind!r} is the tournament's type: give --type {kind} (--format is "
                    f"the output's: table or json)" for kind in ("round-robin", "gauntlet")}


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "tournament", help="play a round robin or gauntlet between engines",
        description="Games come in pairs (same opening, colours reversed); each finished game "
                    "is written to the warehouse, and running the same command again plays only "
                    "the missing games.")
    parser.add_argument("engines", nargs="+", metavar="ENGINE",
                        help="engine specs: alphabeta:eval=hce, stockfish@1350, toga2, "
                             "uci:PATH, xboard:PATH, NAME from --engines-file; '#name' renames")
    add_config_arguments(parser, TournamentConfig, skip=("engines", "runner"), groups=GROUPS)
    games = next(g for g in parser._action_groups if g.title == "where the games are played")
    add_games_arguments(games)
    output = next(g for g in parser._action_groups if g.title == "output")
    output.add_argument("--no-rate", action="store_true", help="do not rate the games after")
    add_output_format(output, hints=TYPE_HINTS)
    add_runner_arguments(parser.add_argument_group("how the command runs"), cluster=False)
    parser.set_defaults(run=run_tournament_command)


def run_tournament_command(args: argparse.Namespace) -> int:
    config = config_from_args(TournamentConfig, args, engines=tuple(args.engines),
                              runner=games_options(args))
    if not args.verbose:   # xboard engines chat a lot; python-chess warns on every line
        logging.getLogger("chess.engine").setLevel(logging.ERROR)
    from flows.evaluate import evaluate

    with make_runner(args) as runner:
        result = evaluate(runner, config, args.lake, skip_ratings=args.no_rate)
    print(json.dumps(document(result), indent=2) if args.output == "json" else report(result))
    return 0


def document(result: Any) -> dict[str, Any]:
    """The tournament's outcome as one JSON document: its id, status and games, the
    standings (the ratings table with its interval mode, when rated) and the SPRT's state."""
    from pipelines.ratings.report import ratings_document

    summary = result.tournament
    return {"tournament_id": summary.tournament_id, "status": summary.status,
            "players": list(summary.players), "planned": summary.planned,
            "games_done": summary.already_done + summary.played, "played_now": summary.played,
            "terminations": dict(summary.terminations), "repeated": summary.repeated,
            "standings": None if result.ratings is None else ratings_document(result.ratings),
            "sprt": None if summary.sprt is None else summary.sprt.as_dict()}


def report(result: Any) -> str:
    """The ratings table (when rated), the tournament line and the SPRT's state."""
    from pipelines.ratings import format_ratings
    from pipelines.ratings.bayeselo import intervals_line

    summary = result.tournament
    lines = [format_ratings(result.ratings), intervals_line(result.ratings)] \
        if result.ratings is not None else []
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
