"""The ``make-net`` composition (issue 47 §3): data rounds (the ``datagen`` step, each round's
batches merged into a shard and ingested by the ``ingest`` step), the ``train`` step, then the
``evaluate-model`` composition, which promotes the net when its SPRT accepts. The decisions
(how long a round, how many epochs, which files) are ``pipelines.makenet``'s; this module only
runs the steps in order and prints where the run stands with an ETA."""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flows.datagen import DATAGEN
from flows.evaluate_model import evaluate_model
from flows.ingest import INGEST, IngestJob
from flows.step import Runner, print_progress
from flows.train import TRAIN, TrainJob
from pipelines import makenet as mn
from pipelines.datagen.run import DatagenConfig, label_source
from pipelines.evaluate import EvaluateConfig, Evaluation
from pipelines.ingest import IngestConfig
from warehouse import Lake


@dataclass(frozen=True)
class MakeNetResult:
    run: str
    positions: int
    model: str | None
    evaluation: Evaluation | None
    spent_s: float


def make_net(runner: Runner, config: mn.MakeNetConfig, lake: Lake,
             progress: mn.Progress = print_progress) -> MakeNetResult:
    """Make (or resume) the run of ``config``: data, ingest, training, evaluation."""
    def body() -> MakeNetResult:
        run = mn.run_id(config)
        folder = lake.home / mn.RUN_FOLDER / run
        state = mn.load_state(lake.home, run)
        mn.settle_open_stage(state, folder)
        mn.record(lake, run, "run", "resumed" if state.spent else "started",
                  {"config": config.identity(), "hours": config.hours,
                   "spent_s": state.spent_s})
        train_rate = mn.calibrate_trainer(config)
        progress(f"make-net {run}: {mn.clock(config.budget_s - state.spent_s)} of "
                 f"{mn.clock(config.budget_s)} left; the trainer here: "
                 f"{train_rate:,.0f} positions/s")
        make_data(runner, config, lake, run, folder, state, train_rate, progress)
        if state.model is None:
            train(runner, config, lake, run, folder, state, train_rate, progress)
        evaluation = None
        if config.eval_games and state.model is not None and not state.evaluated:
            evaluation = evaluate(runner, config, lake, run, state, progress)
        mn.record(lake, run, "run", "finished", {"model": state.model,
                                                 "positions": state.positions},
                  state.spent_s)
        return MakeNetResult(run, state.positions, state.model, evaluation, state.spent_s)

    return runner.compose("make-net", body)


def make_data(runner: Runner, config: mn.MakeNetConfig, lake: Lake, run: str, folder: Path,
              state: mn.RunState, train_rate: float, progress: mn.Progress) -> None:
    """Data rounds until what is left of the budget trains what was made."""
    batches, shards = folder / "datagen", folder / "shards"
    if not state.engine_id:
        state.engine_id, state.label_depth = label_source(datagen_config(config, batches, 60, 1))
    while not state.data_done:
        data_rate = state.positions / state.spent["datagen"] if state.spent.get("datagen") \
            else mn.FIRST_DATA_RATE
        seconds = mn.next_round_seconds(config, state, data_rate, train_rate)
        if seconds < min(60.0, 30.0 * config.round_minutes):
            if not state.shards and not mn.unmerged(batches, state):
                raise mn.MakeNetError(
                    f"make-net: --hours {config.hours:g} leaves no time for data: training "
                    f"alone is estimated at {mn.clock(mn.training_seconds(0, 1, train_rate))}; "
                    f"give more hours")
            state.data_done = True
        else:
            progress(mn.round_line(config, state, seconds, data_rate, train_rate))
            mn.open_stage(lake.home, run, state, "datagen")
            started = time.monotonic()
            games = mn.round_games(config, batches, seconds, data_rate)
            summary = runner.run(DATAGEN, datagen_config(config, batches, seconds, games), lake)
            mn.close_stage(lake.home, run, state, "datagen", time.monotonic() - started)
            mn.record(lake, run, "datagen", "finished", {
                "games": summary.played_games, "positions": summary.positions,
                "batches": summary.planned - summary.already_done, "out": summary.out},
                time.monotonic() - started)
        ingest(runner, lake, run, batches, shards, state)
        mn.save_state(lake.home, run, state)


def ingest(runner: Runner, lake: Lake, run: str, batches: Path, shards: Path,
           state: mn.RunState) -> None:
    """The batches made since the last shard, as one shard, and every shard not ingested."""
    new = mn.unmerged(batches, state)
    if new:
        shards.mkdir(parents=True, exist_ok=True)
        shard = mn.merge_batches(new, shards / f"shard-{len(state.shards):04d}.binpack")
        state.merged += [p.name for p in new]
        state.shards.append(str(shard))
        mn.save_state(lake.home, run, state)
    for shard_name in [s for s in state.shards if s not in state.ingested]:
        started = time.monotonic()
        reading = IngestConfig(workers=1, engine_id=state.engine_id, depth=state.label_depth)
        summaries = runner.run(INGEST, IngestJob((Path(shard_name),), reading), lake)
        records = sum(s.records for s in summaries)
        state.positions += sum(s.labels for s in summaries)     # new labels, not repeats
        state.ingested.append(shard_name)
        state.add("ingest", time.monotonic() - started)
        mn.record(lake, run, "ingest", "finished", {"shard": shard_name, "records": records},
                  time.monotonic() - started)
        mn.save_state(lake.home, run, state)


def train(runner: Runner, config: mn.MakeNetConfig, lake: Lake, run: str, folder: Path,
          state: mn.RunState, train_rate: float, progress: mn.Progress) -> None:
    if state.epochs is None:
        state.epochs = mn.fitted_epochs(config, state, train_rate)
        mn.save_state(lake.home, run, state)
    nnue = mn.train_config(config, state.engine_id, state.label_depth, state.epochs)
    estimate = mn.training_seconds(state.positions, state.epochs, train_rate)
    progress(f"make-net {run}: training {config.arch}-{config.hidden} on {state.positions:,} "
             f"positions, {state.epochs} epochs: about {mn.clock(estimate)}")
    mn.open_stage(lake.home, run, state, "train")
    started = time.monotonic()
    model = runner.run(TRAIN, TrainJob("nnue", nnue), lake)
    state.model = model.model_id
    mn.close_stage(lake.home, run, state, "train", time.monotonic() - started)
    mn.record(lake, run, "train", "finished", {"model": model.model_id,
                                               "epochs": state.epochs},
              time.monotonic() - started)
    progress(f"make-net {run}: {model.model_id} made in {mn.clock(state.spent_s)} of "
             f"{mn.clock(config.budget_s)}")


def evaluate(runner: Runner, config: mn.MakeNetConfig, lake: Lake, run: str,
             state: mn.RunState, progress: mn.Progress) -> Evaluation:
    assert state.model is not None
    progress(f"make-net {run}: evaluating {state.model} against {config.against} at "
             f"{config.tc}, SPRT({config.sprt[0]:g},{config.sprt[1]:g}), at most "
             f"{config.eval_games} games")
    started = time.monotonic()
    evaluation = evaluate_model(runner, EvaluateConfig(
        model=state.model, against=config.against, sprt=config.sprt,
        max_games=config.eval_games, ladder="", tc=config.tc, openings=config.opening_file,
        sprt_stop=config.eval_stop, runner=config.runner), lake)
    state.evaluated = True
    mn.save_state(lake.home, run, state)
    mn.record(lake, run, "evaluate", "finished", {"model": state.model,
                                                  "summary": str(evaluation)},
              time.monotonic() - started)
    return evaluation


def datagen_config(config: mn.MakeNetConfig, out: Path, seconds: float,
                   games: int) -> DatagenConfig:
    extra: dict[str, Any] = {"depth": config.depth} if config.nodes is None \
        else {"nodes": config.nodes}
    return DatagenConfig(engine=config.engine, games=games, minutes=seconds / 60,
                         batch_games=config.batch_games, seed=config.seed, out=str(out),
                         ingest=False, runner=config.runner, **extra)
