"""The ``evaluate`` flow: play a tournament, then rate it (anchored on the Stockfish ladder
when it has rungs). The work is ``pipelines.tournament`` and ``pipelines.ratings``."""
from __future__ import annotations

import dataclasses

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from pipelines.ratings import RatingsConfig, RatingTable, fit, format_ratings
from pipelines.ratings.sources import ladder_anchors, record_ratings, tournament_games
from pipelines.tournament import TournamentConfig, TournamentSummary, run_tournament
from warehouse import Lake


@task(name="tournament", cache_policy=NO_CACHE)
def tournament_task(config: TournamentConfig, home: str) -> TournamentSummary:
    """Play the games not yet in the warehouse (a retry resumes: finished games are kept)."""
    summary = run_tournament(config, home, progress=get_run_logger().info)
    get_run_logger().info("tournament %s: %s, %d games played", summary.tournament_id,
                          summary.status, summary.played)
    return summary


@task(name="ratings", cache_policy=NO_CACHE)
def ratings_task(home: str, tournament_id: str, config: RatingsConfig) -> RatingTable:
    lake = Lake(home)
    games = tournament_games(lake, tournament_id)
    if not config.anchors:
        config = dataclasses.replace(config, anchors=ladder_anchors(lake, tournament_id))
    table = fit(games, config)
    record_ratings(lake, table, games, config, tournament_id, tournament_id)
    get_run_logger().info("ratings of %s:\n%s", tournament_id, format_ratings(table))
    return table


@flow(name="evaluate")
def evaluate(config: TournamentConfig, home: str | None = None,
             ratings: RatingsConfig | None = None,
             skip_ratings: bool = False) -> TournamentSummary:
    """Run a tournament and record its BayesElo ratings."""
    lake = Lake(home)
    summary = tournament_task(config, str(lake.home))
    if summary.already_done + summary.played and not skip_ratings:
        ratings_task(str(lake.home), summary.tournament_id, ratings or RatingsConfig())
    return summary
