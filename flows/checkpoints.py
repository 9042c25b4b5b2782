"""The ``checkpoints`` composition: the round robin of a self-play run's versions as the
``evaluate`` composition runs any tournament (a ``tournament`` step, then its BayesElo
ratings recorded), then the report with the value heads' figures. The work is
``pipelines.puct.checkpoints``."""
from __future__ import annotations

from flows.evaluate import evaluate
from flows.step import Runner
from pipelines.puct.checkpoints import (
    CheckpointsConfig,
    CheckpointsReport,
    chosen,
    run_checkpoints,
    tournament_config,
)
from warehouse import Lake


def checkpoints(runner: Runner, config: CheckpointsConfig, lake: Lake) -> CheckpointsReport:
    """Play (or resume) the run's round robin, rate it, report it."""
    def body() -> CheckpointsReport:
        versions = chosen(run_checkpoints(lake, config.run_id), config.every)
        tournament = tournament_config(lake, config, versions)
        result = evaluate(runner, tournament, lake)
        summary = result.tournament
        return CheckpointsReport(config.run_id, summary.tournament_id,
                                 summary.already_done + summary.played, versions,
                                 result.ratings)

    return runner.compose("checkpoints", body)


__all__ = ["checkpoints"]
