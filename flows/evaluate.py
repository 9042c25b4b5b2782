"""The ``evaluate`` composition: play a tournament, then rate it (anchored on the Stockfish
ladder when it has rungs)."""
from __future__ import annotations

from dataclasses import dataclass

from flows.step import Runner
from flows.tournament import TOURNAMENT
from pipelines.ratings import RatingsConfig, RatingTable
from pipelines.ratings.report import rate_tournament
from pipelines.tournament import TournamentConfig, TournamentSummary
from warehouse import Lake


@dataclass(frozen=True)
class Evaluation:
    tournament: TournamentSummary
    ratings: RatingTable | None       # None when not asked for or no game finished


def evaluate(runner: Runner, config: TournamentConfig, lake: Lake,
             ratings: RatingsConfig | None = None, skip_ratings: bool = False) -> Evaluation:
    """Run a tournament and record its BayesElo ratings."""
    def body() -> Evaluation:
        summary = runner.run(TOURNAMENT, config, lake)
        table = None
        if summary.already_done + summary.played and not skip_ratings:
            table = rate_tournament(lake, summary.tournament_id, ratings)
        return Evaluation(summary, table)

    return runner.compose("evaluate", body)
