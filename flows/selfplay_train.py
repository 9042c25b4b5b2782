"""The ``selfplay-train`` composition: per round, a games step (one unit per game the round
still lacks, played on the games runner as ``selfplay``'s games are: ``workers`` local Dask
worker processes, one in this process for 1, or the ``--cluster``'s workers, which send the
game's record back to be stored here) and a training step (one unit: the round's
``policy_value`` version); both runners run the same steps. The work is ``pipelines.puct``."""
from __future__ import annotations

import contextlib
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from flows.step import Runner, UnitContext
from pipelines.puct.config import SelfplayTrainConfig
from pipelines.puct.loop import (
    RoundModel,
    RoundSummary,
    game_work,
    missing_games,
    open_pool,
    play,
    playing_model,
    round_summary,
    store_game,
    train_round,
)
from warehouse import Lake


@dataclass(frozen=True)
class RoundWork:
    config: SelfplayTrainConfig
    round: int
    model: RoundModel


@dataclass(frozen=True)
class GameUnit:
    work: RoundWork
    game: int


@dataclass(frozen=True)
class GamesPlan:
    work: RoundWork
    games: list[int]               # the games the round still lacks


class GamesStep:
    """One unit per game the round lacks; lanes = workers, each unit waits for its game on
    the pool's processes and stores it from this process."""

    name = "selfplay-games"
    retries = 1          # a retried game is played again whole; its rows are keyed

    def concurrency(self, config: RoundWork) -> int:
        return config.config.workers

    def open_pool(self, config: RoundWork) -> AbstractContextManager[Any]:
        return open_pool(config.config)

    def plan(self, config: RoundWork, lake: Lake) -> GamesPlan:
        return GamesPlan(config, missing_games(lake, config.config, config.round))

    def units(self, plan: GamesPlan) -> list[GameUnit]:
        return [GameUnit(plan.work, g) for g in plan.games]

    def describe(self, plan: GamesPlan) -> str:
        return (f"selfplay-train {plan.work.config.run_id} round {plan.work.round}: games "
                f"with {plan.work.model.model_id}")

    def run_unit(self, unit: GameUnit, context: UnitContext) -> int:
        work = unit.work
        record = play(context.pool, game_work(work.config, work.round, unit.game, work.model))
        store_game(context.lake, record)
        return len(record.samples)

    def progress(self, plan: GamesPlan, results: Sequence[int], seconds: float) -> str:
        return (f"selfplay-train round {plan.work.round}: {len(results)} games, "
                f"{sum(results)} positions, {seconds:.0f} s")

    def summarize(self, plan: GamesPlan, results: Sequence[int], seconds: float) -> int:
        return len(results)


class TrainStep:
    name = "selfplay-update"
    retries = 0

    def concurrency(self, config: RoundWork) -> int:
        return 1

    def open_pool(self, config: RoundWork) -> AbstractContextManager[Any]:
        return contextlib.nullcontext()

    def plan(self, config: RoundWork, lake: Lake) -> RoundWork:
        return config

    def units(self, plan: RoundWork) -> list[RoundWork]:
        return [plan]

    def describe(self, plan: RoundWork) -> str:
        return f"selfplay-train round {plan.round}: training"

    def run_unit(self, unit: RoundWork, context: UnitContext) -> str:
        return train_round(context.lake, unit.config, unit.round).model_id

    def progress(self, plan: RoundWork, results: Sequence[str], seconds: float) -> str:
        return f"selfplay-train round {plan.round}: {', '.join(results)} registered"

    def summarize(self, plan: RoundWork, results: Sequence[str], seconds: float) -> str:
        return results[0]


GAMES = GamesStep()
TRAIN = TrainStep()


def selfplay_train(runner: Runner, config: SelfplayTrainConfig,
                   lake: Lake) -> list[RoundSummary]:
    """Play and train every round up to ``config.rounds`` (what is stored is kept)."""
    def body() -> list[RoundSummary]:
        summaries = []
        for round_ in range(1, config.rounds + 1):
            work = RoundWork(config, round_, playing_model(lake, config.run_id, round_))
            runner.run(GAMES, work, lake)
            runner.run(TRAIN, work, lake)
            summaries.append(round_summary(lake, config, round_))
        return summaries

    return runner.compose("selfplay-train", body)


__all__ = ["GAMES", "TRAIN", "selfplay_train"]
