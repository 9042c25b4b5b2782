"""The self-play training loop's pieces, as plain functions over the warehouse.

A run (``SelfplayTrainConfig.run_id``) goes round by round. Round r plays ``games`` games with
the net of round r - 1 (round 1: an untrained net seeded by the config), storing each game's
samples and then its ``selfplay_games`` row; then it trains ``policy_value`` on the window of
rounds r - window + 1 .. r, starting from round r - 1's weights, through the generic trainer,
which registers ``policy_value@N`` with ``run_id`` and ``round`` in its config. Everything is
found again in the warehouse, so a rerun after a kill plays only the games a round lacks,
trains only the rounds without a version (the trainer resumes a killed training) and goes on.
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from engines.stamps import utc_now
from pipelines.kinds.policy_value.config import PolicyValueConfig
from pipelines.models.registry import ModelVersion
from pipelines.puct.config import SelfplayTrainConfig
from pipelines.puct.selfplay import RANDOM_MODEL, GameRecord, play_game
from warehouse import Lake, connect
from warehouse.catalog import named_query, query

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RoundModel:
    """The net that plays a round: a registered version, or the untrained start."""

    model_id: str
    artifact: str | None


@dataclass(frozen=True)
class RoundSummary:
    round: int
    games: int
    samples: int
    decisive: int
    model: str            # the version trained after the round


def run_models(lake: Lake, run_id: str) -> dict[int, dict[str, Any]]:
    """The run's registered versions by round."""
    rows = query(connect(lake), named_query("selfplay_run_models"), {"run_id": run_id})
    return {int(r["round"]): r for r in rows.to_pylist()}


def playing_model(lake: Lake, run_id: str, round_: int) -> RoundModel:
    """The previous round's version and the net it deploys (its file checked against the
    registry's hash)."""
    from pipelines.models.deploy import engine_options

    previous = run_models(lake, run_id).get(round_ - 1)
    if previous is None:
        return RoundModel(RANDOM_MODEL, None)
    options = engine_options(lake, previous["model_id"])
    return RoundModel(options["model"], options["net"])


def stored_games(lake: Lake, run_id: str, round_: int) -> list[dict[str, Any]]:
    params = {"run_id": run_id, "round": round_}
    return query(connect(lake), named_query("selfplay_round_games"), params).to_pylist()


def missing_games(lake: Lake, config: SelfplayTrainConfig, round_: int) -> list[int]:
    done = {r["game"] for r in stored_games(lake, config.run_id, round_)}
    return [g for g in range(config.games) if g not in done]


def store_game(lake: Lake, record: GameRecord) -> None:
    """Samples first, then the game row that marks the game complete."""
    if record.samples:
        lake.write("selfplay_samples", [{**s, "recorded_at": utc_now()} for s in record.samples])
    lake.write("selfplay_games", [{**record.game, "recorded_at": utc_now()}])


def train_config(config: SelfplayTrainConfig, round_: int,
                 init_from: str | None) -> PolicyValueConfig:
    return PolicyValueConfig(
        name=f"selfplay-{config.run_id}-r{round_}", epochs=1, batch_size=config.batch_size,
        learning_rate=config.learning_rate, seed=config.seed + round_,
        validation_percent=10.0, progress=config.progress, accelerator="cpu",
        run_id=config.run_id, round=round_, window=config.window, updates=config.updates,
        blocks=config.blocks, channels=config.channels, value_hidden=config.value_hidden,
        policy_target=config.policy_target, value_target=config.value_target,
        search_weight=config.search_weight,
        init_from=init_from or "")


def train_round(lake: Lake, config: SelfplayTrainConfig, round_: int) -> ModelVersion:
    """The round's version (trained now unless registered already)."""
    from pipelines.models.registry import resolve_model
    from pipelines.train import train

    done = run_models(lake, config.run_id).get(round_)
    if done is not None:
        return resolve_model(lake, done["model_id"])
    start = playing_model(lake, config.run_id, round_)
    return train(lake, "policy_value", train_config(config, round_, start.artifact))


def round_summary(lake: Lake, config: SelfplayTrainConfig, round_: int) -> RoundSummary:
    games = stored_games(lake, config.run_id, round_)
    model = run_models(lake, config.run_id).get(round_)
    return RoundSummary(round_, len(games), sum(g["samples"] for g in games),
                        sum(g["result"] != "1/2-1/2" for g in games),
                        model["model_id"] if model else "")


# -- the games runner -----------------------------------------------------------------------

@contextlib.contextmanager
def open_pool(config: SelfplayTrainConfig) -> Iterator[Any]:
    """The games runner (``pipelines.games``), as ``selfplay``'s: a local Dask cluster of
    ``workers`` spawned processes of one game each (deltalake and torch threads do not
    survive a fork of this process), one worker in this process for 1, or the ``--cluster``."""
    from pipelines.games.cluster import open_cluster

    with open_cluster(config.games_options(), 1) as client:
        yield client


@dataclass(frozen=True)
class GameWork:
    """A game for a worker of the games runner, with the build the client runs."""

    config: SelfplayTrainConfig
    round: int
    game: int
    model: RoundModel
    build: str


def game_work(config: SelfplayTrainConfig, round_: int, game: int,
              model: RoundModel) -> GameWork:
    from engines.registry import own_version

    return GameWork(config, round_, game, model, own_version())


def check_game_worker(work: GameWork) -> str:
    """This worker runs the client's build and has the net and the tablebases the game
    needs (WorkerRefused naming the worker and what differs or is missing); its name."""
    from engines.registry import own_version
    from pipelines.games.batch import WorkerRefused, worker_name

    here = worker_name()
    build = own_version()
    if build != work.build:
        raise WorkerRefused(f"worker {here} refuses: selfplay-train's PUCT engine is {build!r} "
                            f"here, the client runs {work.build!r}")
    artifact = work.model.artifact
    if artifact and not os.path.isfile(artifact):
        raise WorkerRefused(f"worker {here} refuses: {work.model.model_id}: no model file "
                            f"{artifact}")
    for folder in filter(None, (work.config.tablebase_folders() or "").split(os.pathsep)):
        if not os.path.isdir(folder):
            raise WorkerRefused(f"worker {here} refuses: no tablebase folder {folder}")
    return here


def play_work(work: GameWork) -> GameRecord:
    """A game on a games runner's worker: checked, played, its record sent back."""
    check_game_worker(work)
    config = work.config
    return play_game(config, config.run_id, work.round, work.game, work.model.artifact,
                     work.model.model_id)


def play(pool: Any, work: GameWork) -> GameRecord:
    """One game on the games runner ``pool`` (a Dask client; None: in this thread)."""
    if pool is None:
        return play_work(work)
    return pool.submit(play_work, work, pure=False).result()


def with_rounds(config: SelfplayTrainConfig, rounds: int) -> SelfplayTrainConfig:
    return dataclasses.replace(config, rounds=rounds)


__all__ = ["GameWork", "RoundModel", "RoundSummary", "game_work", "missing_games", "open_pool",
           "play",
           "playing_model", "round_summary", "store_game", "train_round"]
