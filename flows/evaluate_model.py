"""The ``evaluate-model`` flow: plan, the SPRT match and the ladder gauntlet as tournament
tasks, then the summary and the model events. The work is ``pipelines.evaluate``."""
from __future__ import annotations

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from flows.evaluate import tournament_task
from pipelines.evaluate import (
    EvaluateConfig, Evaluation, EvaluationPlan, plan_evaluation, record_evaluation, summarize,
)
from pipelines.tournament import TournamentSummary
from warehouse import Lake


@task(name="evaluation-summary", cache_policy=NO_CACHE)
def summary_task(home: str, plan: EvaluationPlan, match: TournamentSummary,
                 gauntlet: TournamentSummary | None) -> Evaluation:
    lake = Lake(home)
    evaluation = summarize(lake, plan, match, gauntlet)
    events = record_evaluation(lake, plan, evaluation)
    get_run_logger().info("%s; events: %s", evaluation, ", ".join(events) or "none")
    return evaluation


@flow(name="evaluate-model")
def evaluate_model_flow(config: EvaluateConfig, home: str | None = None) -> Evaluation:
    """SPRT against the baseline, gauntlet on the ladder, then the model's events."""
    lake = Lake(home)
    plan = plan_evaluation(lake, config)
    match = tournament_task.submit(plan.match, str(lake.home))
    gauntlet = tournament_task.submit(plan.gauntlet, str(lake.home)) if plan.gauntlet else None
    return summary_task(str(lake.home), plan, match.result(),
                        gauntlet.result() if gauntlet else None)
