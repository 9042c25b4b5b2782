"""The ``evaluate-model`` composition: the SPRT match and the ladder gauntlet as ``tournament``
steps, then the summary and the model events. The work is ``pipelines.evaluate``."""
from __future__ import annotations

import logging

from flows.step import Runner
from flows.tournament import TOURNAMENT
from pipelines.evaluate import (
    EvaluateConfig,
    Evaluation,
    plan_evaluation,
    record_evaluation,
    summarize,
)
from warehouse import Lake

log = logging.getLogger(__name__)


def evaluate_model(runner: Runner, config: EvaluateConfig, lake: Lake) -> Evaluation:
    """SPRT against the baseline, gauntlet on the ladder, then the model's events."""
    def body() -> Evaluation:
        plan = plan_evaluation(lake, config)
        match = runner.run(TOURNAMENT, plan.match, lake)
        gauntlet = runner.run(TOURNAMENT, plan.gauntlet, lake) \
            if plan.gauntlet else None
        evaluation = summarize(lake, plan, match, gauntlet)
        events = record_evaluation(lake, plan, evaluation)
        log.debug("%s; events: %s", evaluation, ", ".join(events) or "none")
        return evaluation

    return runner.compose("evaluate-model", body)
