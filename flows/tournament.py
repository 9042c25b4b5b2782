"""The ``tournament`` step: one unit, the tournament, whose workers play its games
concurrently (``config.concurrency``) and report a line per finished game."""
from __future__ import annotations

import contextlib
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from flows.step import UnitContext, no_progress
from pipelines.tournament import TournamentConfig, TournamentSummary, run_tournament
from warehouse import Lake


@dataclass(frozen=True)
class TournamentPlan:
    units: list[TournamentConfig]


class TournamentStep:
    name = "tournament"
    retries = 0      # a rerun resumes anyway: finished games are in the warehouse

    def concurrency(self, config: TournamentConfig) -> int:
        return 1

    def open_pool(self, config: TournamentConfig) -> AbstractContextManager[Any]:
        return contextlib.nullcontext()   # each worker of the tournament owns its engines

    def plan(self, config: TournamentConfig, lake: Lake) -> TournamentPlan:
        return TournamentPlan([config])

    def units(self, plan: TournamentPlan) -> list[TournamentConfig]:
        return plan.units

    def describe(self, plan: TournamentPlan) -> None:
        return None

    def run_unit(self, unit: TournamentConfig, context: UnitContext) -> TournamentSummary:
        progress = context.progress if unit.progress else no_progress
        return run_tournament(unit, context.lake, progress=progress)

    def progress(self, plan: TournamentPlan, results: Sequence[TournamentSummary],
                 seconds: float) -> None:
        return None

    def summarize(self, plan: TournamentPlan, results: Sequence[TournamentSummary],
                  seconds: float) -> TournamentSummary:
        return results[0]


TOURNAMENT = TournamentStep()
