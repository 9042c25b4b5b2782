"""The ``lmr-data`` composition: a step that plays the missing logged games (one unit per
game), then a step that labels the unlabelled decisions (one unit per chunk), then the
summary. The work is ``pipelines.lmr``; both runners run the same steps."""
from __future__ import annotations

import contextlib
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from flows.step import Runner, UnitContext
from pipelines.games import GamesOptions
from pipelines.games.cluster import open_cluster
from pipelines.lmr.config import LmrDataConfig
from pipelines.lmr.run import (
    LmrDataPlan,
    LmrDataSummary,
    chunks,
    label_decisions,
    pending_decisions,
    plan_lmr_data,
    play_logged,
    store_logged_game,
    summarize,
)
from warehouse import Lake

CLUSTER_LANES = 64     # games waited for at once on a cluster (the scheduler queues the rest)


@dataclass(frozen=True)
class LmrWork:
    """The run's plan: what both steps share; where its games are played."""

    plan: LmrDataPlan
    runner: GamesOptions = field(default_factory=GamesOptions)


@dataclass(frozen=True)
class GameUnit:
    work: LmrWork
    game: int


@dataclass(frozen=True)
class LabelUnit:
    work: LmrWork
    decisions: list[dict[str, Any]]


@dataclass(frozen=True)
class LabelsPlan:
    work: LmrWork
    pending: list[dict[str, Any]]       # the logged decisions still to label


class LmrStep:
    """What the games step and the labels step share: one lane (each unit runs a searcher
    on this process's core), no pool, one retry."""

    retries = 1

    def concurrency(self, config: LmrWork) -> int:
        return 1

    def open_pool(self, config: LmrWork) -> AbstractContextManager[Any]:
        return contextlib.nullcontext()

    def summarize(self, plan: Any, results: Sequence[int], seconds: float) -> int:
        return sum(results)


class GamesStep(LmrStep):
    """One unit per missing game, played on the games runner (one worker in this process,
    ``--workers N`` local processes or the ``--cluster``'s workers: lanes wait for them) and
    stored here."""

    name = "lmr-games"

    def concurrency(self, config: LmrWork) -> int:
        runner = config.runner
        if runner.cluster:
            return CLUSTER_LANES
        return runner.workers * runner.local_games_per_worker() if runner.workers else 1

    def open_pool(self, config: LmrWork) -> AbstractContextManager[Any]:
        return open_cluster(config.runner, 1)

    def plan(self, config: LmrWork, lake: Lake) -> LmrWork:
        return config

    def units(self, plan: LmrWork) -> list[GameUnit]:
        return [GameUnit(plan, game) for game in plan.plan.games]

    def describe(self, plan: LmrWork) -> str:
        return f"lmr-data {plan.plan.data_run}: {len(plan.plan.games)} games to play"

    def run_unit(self, unit: GameUnit, context: UnitContext) -> int:
        plan = unit.work.plan
        rows = context.pool.submit(play_logged, plan, unit.game, pure=False).result()
        return store_logged_game(context.lake, plan, unit.game, rows)

    def progress(self, plan: LmrWork, results: Sequence[int], seconds: float) -> str:
        return (f"lmr-data: {len(results)}/{len(plan.plan.games)} games played, "
                f"{sum(results)} decisions logged")


class LabelsStep(LmrStep):
    name = "lmr-labels"

    def plan(self, config: LmrWork, lake: Lake) -> LabelsPlan:
        return LabelsPlan(config, pending_decisions(lake, config.plan))

    def units(self, plan: LabelsPlan) -> list[LabelUnit]:
        return [LabelUnit(plan.work, chunk)
                for chunk in chunks(plan.pending, plan.work.plan.config.label_chunk)]

    def describe(self, plan: LabelsPlan) -> str:
        return f"lmr-data {plan.work.plan.data_run}: labelling the unlabelled decisions"

    def run_unit(self, unit: LabelUnit, context: UnitContext) -> int:
        return label_decisions(context.lake, unit.work.plan, unit.decisions)

    def progress(self, plan: LabelsPlan, results: Sequence[int], seconds: float) -> str:
        return f"lmr-data: {sum(results)} decisions labelled"


GAMES = GamesStep()
LABELS = LabelsStep()


def lmr_data(runner: Runner, config: LmrDataConfig, lake: Lake,
             games: GamesOptions | None = None) -> LmrDataSummary:
    """Play the run's missing games (on the games runner ``games``), label its unlabelled
    decisions, summarise."""
    def body() -> LmrDataSummary:
        work = LmrWork(plan_lmr_data(lake, config), games or GamesOptions())
        logged = runner.run(GAMES, work, lake)
        labelled = runner.run(LABELS, work, lake)
        return summarize(lake, work.plan, len(work.plan.games), logged, labelled)

    return runner.compose("lmr-data", body)
