"""The ``lmr-data`` flow: plan, one task per game to play, one per chunk of decisions to label,
the summary. The work is ``pipelines.lmr``."""
from __future__ import annotations

from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from pipelines.lmr.config import LmrDataConfig
from pipelines.lmr.run import (LmrDataPlan, LmrDataSummary, chunks, label_decisions,
                               pending_decisions, plan_lmr_data, play_logged_game, summarize)
from warehouse import Lake


@task(name="lmr-game", retries=1, retry_delay_seconds=1, cache_policy=NO_CACHE)
def play_game_task(home: str, plan: LmrDataPlan, game: int) -> int:
    return play_logged_game(Lake(home), plan, game)


@task(name="lmr-label", retries=1, retry_delay_seconds=1, cache_policy=NO_CACHE)
def label_task(home: str, plan: LmrDataPlan, decisions: list[dict[str, Any]]) -> int:
    return label_decisions(Lake(home), plan, decisions)


@flow(name="lmr-data")
def lmr_data(config: LmrDataConfig, home: str | None = None) -> LmrDataSummary:
    """Play the missing games, label the unlabelled decisions, summarise."""
    lake = Lake(home)
    plan = plan_lmr_data(lake, config)
    get_run_logger().info("lmr-data %s: %d games to play", plan.data_run, len(plan.games))
    logged = sum(play_game_task(str(lake.home), plan, game) for game in plan.games)
    pending = pending_decisions(lake, plan)
    labelled = sum(label_task(str(lake.home), plan, chunk)
                   for chunk in chunks(pending, config.label_chunk))
    summary = summarize(lake, plan, len(plan.games), logged, labelled)
    get_run_logger().info("%s", summary)
    return summary
