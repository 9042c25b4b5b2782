"""``chesslab tournament | pgn | ratings | sprt``: play, export, rate and test engines."""
from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from flows.options import add_config_arguments, config_from_args
from pipelines.ratings.bayeselo import RatingsConfig
from pipelines.sprt import SprtConfig
from pipelines.tournament.config import TournamentConfig


def register(subparsers: Any) -> None:
    register_tournament(subparsers)
    register_pgn(subparsers)
    register_ratings(subparsers)
    register_sprt(subparsers)


def register_tournament(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "tournament", help="play a round robin or gauntlet between engines",
        description="Games come in pairs (same opening, colours reversed); each finished game "
                    "is written to the warehouse, and running the same command again plays only "
                    "the missing games.")
    parser.add_argument("engines", nargs="+", metavar="ENGINE",
                        help="engine specs: alphabeta:eval=hce, stockfish@1350, toga2, "
                             "uci:PATH, xboard:PATH, NAME from --engines-file; '#name' renames")
    add_config_arguments(parser, TournamentConfig, skip=("engines",))
    parser.add_argument("--no-rate", action="store_true", help="do not rate the games after")
    parser.add_argument("--no-prefect", action="store_true",
                        help="run in this process without Prefect")
    parser.set_defaults(run=run_tournament_command)


def register_pgn(subparsers: Any) -> None:
    parser = subparsers.add_parser("pgn", help="export a tournament's games as PGN")
    parser.add_argument("--tournament", required=True, metavar="ID")
    parser.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    parser.set_defaults(run=run_pgn)


def register_ratings(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "ratings", help="BayesElo ratings of a tournament or a PGN file",
        description="Bradley-Terry with draw Elo and white advantage, fitted by "
                    "minorisation-maximisation as bayeselo's mm; intervals from the covariance.")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--tournament", metavar="ID")
    source.add_argument("--pgn", metavar="FILE")
    parser.add_argument("--anchor", action="append", default=[], metavar="NAME=ELO",
                        help="fix a player's rating (repeat for a ladder)")
    parser.add_argument("--ladder", action="store_true",
                        help="anchor every Stockfish ladder rung of the tournament at its UCI_Elo")
    parser.add_argument("--los", action="store_true", help="print the LOS matrix")
    parser.add_argument("--pair", metavar="A,B",
                        help="also print the trinomial Elo and LOS of A against B")
    add_config_arguments(parser, RatingsConfig, skip=("anchors",))
    parser.set_defaults(run=run_ratings)


def register_sprt(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "sprt", help="fishtest's GSPRT on game-pair counts or a two-player tournament")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--counts", metavar="LL,LD,DD+WL,WD,WW",
                        help="5 pentanomial (or 3 trinomial L,D,W) counts")
    source.add_argument("--tournament", metavar="ID")
    add_config_arguments(parser, SprtConfig)
    parser.set_defaults(run=run_sprt)


def run_tournament_command(args: argparse.Namespace) -> int:
    from pipelines.lmr.deploy import resolve_learned_specs
    from warehouse import Lake

    engines = resolve_learned_specs(Lake(), tuple(args.engines))   # alphabeta:lmr=lmr@N
    config = config_from_args(TournamentConfig, args, engines=engines)
    if not args.verbose:   # xboard engines chat a lot; python-chess warns on every line
        logging.getLogger("chess.engine").setLevel(logging.ERROR)
    if args.no_prefect:
        from pipelines.ratings.bayeselo import fit, format_ratings
        from pipelines.ratings.sources import ladder_anchors, record_ratings, tournament_games
        from pipelines.tournament import run_tournament
        from warehouse import Lake

        summary = run_tournament(config)
        if not args.no_rate and summary.already_done + summary.played:
            lake = Lake()
            games = tournament_games(lake, summary.tournament_id)
            ratings = RatingsConfig(anchors=ladder_anchors(lake, summary.tournament_id))
            table = fit(games, ratings)
            record_ratings(lake, table, games, ratings, summary.tournament_id,
                           summary.tournament_id)
            print(format_ratings(table))
    else:
        from flows.evaluate import evaluate
        from flows.runtime import run_flow

        summary = run_flow(evaluate, workers=1, config=config,
                           skip_ratings=args.no_rate)
    print(f"tournament {summary.tournament_id}: {summary.status}, "
          f"{summary.already_done + summary.played}/{summary.planned} games "
          f"({summary.played} played now)")
    if summary.sprt is not None:
        print(f"SPRT {summary.sprt.describe()}")
    return 0


def run_pgn(args: argparse.Namespace) -> int:
    from pipelines.tournament.store import finished_games
    from warehouse import Lake

    rows = finished_games(Lake(), args.tournament)
    if not rows:
        raise LookupError(f"no games of tournament {args.tournament!r} in this home")
    text = "\n\n".join(row["pgn"].strip() for row in rows) + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text)
    return 0


def parse_anchors(items: list[str]) -> dict[str, float]:
    anchors = {}
    for item in items:
        name, eq, value = item.rpartition("=")
        try:
            anchors[name] = float(value)
        except ValueError:
            name = ""
        if not eq or not name:
            raise ValueError(f"--anchor wants NAME=ELO, got {item!r}")
    return anchors


def run_ratings(args: argparse.Namespace) -> int:
    from pipelines.ratings.bayeselo import fit, format_los, format_ratings, pair_counts
    from pipelines.ratings.pair import pair_elo
    from pipelines.ratings.sources import (
        games_from_pgn, ladder_anchors, record_ratings, tournament_games,
    )
    from warehouse import Lake

    lake = Lake()
    anchors = parse_anchors(args.anchor)
    if args.tournament:
        games = tournament_games(lake, args.tournament)
        if args.ladder:
            anchors = {**ladder_anchors(lake, args.tournament), **anchors}
    else:
        if args.ladder:
            raise ValueError("--ladder needs --tournament (a PGN file has no UCI_Elo)")
        games = games_from_pgn(args.pgn)
    config = config_from_args(RatingsConfig, args, anchors=anchors)
    table = fit(games, config)
    print(format_ratings(table))
    if args.los:
        print()
        print(format_los(table))
    if args.pair:
        first, _, second = args.pair.partition(",")
        key = tuple(sorted((first, second)))
        counts = pair_counts(games).get(key)  # type: ignore[arg-type]
        if counts is None:
            raise LookupError(f"no games between {first!r} and {second!r}")
        wins, draws, losses = counts if key[0] == first else counts[::-1]
        pair = pair_elo(wins, draws, losses, config.confidence)
        print(f"\n{first} vs {second}: +{wins} ={draws} -{losses}, Elo {pair.elo:+.1f} "
              f"[{pair.lower:+.1f}, {pair.upper:+.1f}], LOS {100 * pair.los:.1f}%")
    source = args.tournament or args.pgn
    record_ratings(lake, table, games, config, source, args.tournament)
    return 0


def run_sprt(args: argparse.Namespace) -> int:
    from pipelines.sprt import llr, SprtResult
    from pipelines.sprt.store import record_sprt, tournament_counts
    from warehouse import Lake

    config = config_from_args(SprtConfig, args)
    if args.counts:
        try:
            counts = [int(c) for c in args.counts.split(",")]
        except ValueError:
            raise ValueError(f"--counts wants integers, got {args.counts!r}") from None
        header = ""
    else:
        counts, first, second = tournament_counts(Lake(), args.tournament)
        header = f"{first} vs {second}, game pairs LL,LD,DD+WL,WD,WW = {counts}\n"
    result = SprtResult(tuple(counts), llr(counts, config), config.lower_bound,
                        config.upper_bound)
    print(f"{header}{result.describe()}")
    if args.tournament:
        record_sprt(Lake(), result, config, args.tournament)
    return 0


__all__ = ["register"]
