"""Operations without Prefect (issue 11): the schedules file, when a kind is due for
retraining, which versions wait for an evaluation and whom they play, the per-job lock, and
two refreshes of one folder at once leaving exact row counts."""
from __future__ import annotations

import datetime as dt
import json
import shutil
import threading
import time
from pathlib import Path

import pytest

from flows.refresh import refresh
from flows.step import LocalRunner
from pipelines.ingest import IngestConfig
from pipelines.label import LabelConfig
from pipelines.models.registry import record_event
from pipelines.ops import (
    OpsConfigError,
    baseline_for,
    job_lock,
    load_schedules,
    retrain_decision,
    unevaluated_models,
)
from warehouse import Lake, connect

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "label_engines"
UTC = dt.UTC


def test_the_repository_schedules_file_is_the_defaults(tmp_path: Path) -> None:
    """data/schedules.toml documents the defaults: loading it or nothing gives the same jobs."""
    shipped = load_schedules(ROOT / "data" / "schedules.toml")
    defaults = load_schedules(None)
    assert shipped.runs == defaults.runs and shipped.retrain == defaults.retrain
    assert shipped.refresh.cron == defaults.refresh.cron == "0 2 * * *"
    assert shipped.refresh.folders == (str(ROOT / "data" / "incoming"),)
    assert shipped.refresh.label_config().depths == (5, 6, 7)
    config = shipped.evaluate.evaluate_config("nnue@2")
    assert (config.model, config.nodes, config.ladder) == ("nnue@2", 20000, "1800-2600/200")
    assert shipped.make_net.make_net_config() == defaults.make_net.make_net_config()
    assert shipped.make_net.cron == "" and shipped.make_net.enabled


@pytest.mark.parametrize(("text", "message"), [
    ("[refresh]\ncron = 'nightly'", "refresh.cron: want 5 fields"),
    ("[refresh]\ndepths = [0]", "refresh: depths: 0 is not between"),
    ("[refresh]\ncolour = 'red'", "refresh: unknown option 'colour'"),
    ("[retrain]\nkinds = ['lmr']", "retrain.kinds: unknown kind 'lmr'"),
    ("[retrain]\nmin_new = 3", "unexpected keyword argument 'min_new'"),
    ("[evaluate]\nsprt = [10, 0]", "evaluate: evaluate: --sprt wants elo0,elo1"),
    ("[nightly]", r"unknown section \[nightly\]"),
    ("[make-net]\nhours = -1", r"make-net: make-net: --hours must be in \(0, 720\], got -1"),
    ("[make-net]\nhourz = 4", "make-net: unknown option 'hourz'"),
    ("[make-net]\ncron = 'weekly'", "make-net.cron: want 5 fields"),
    ("[runs\n", "not valid TOML"),
])
def test_a_bad_schedules_file_is_one_line_naming_it(tmp_path: Path, text: str,
                                                    message: str) -> None:
    path = tmp_path / "schedules.toml"
    path.write_text(text)
    with pytest.raises(OpsConfigError, match=message) as error:
        load_schedules(path)
    assert str(error.value).startswith(f"{path}: ")


def register(lake: Lake, version: int, taken: dt.datetime, engine: str = "sf-a") -> str:
    """A finished nnue version (models and model_datasets rows, as the trainer writes them)."""
    model_id = f"nnue@{version}"
    lake.write("models", [{
        "model_id": model_id, "kind": "nnue", "name": "nnue-tiny", "version": version,
        "config": json.dumps({"name": "nnue-tiny", "epochs": 1}), "artifact_path": "x.npz",
        "artifact_sha256": "0" * 64, "created_at": taken}])
    lake.write("model_datasets", [{
        "model_id": model_id, "view": "nnue_examples", "query": "nnue_dataset",
        "parameters": "{}", "label_engine_id": engine, "label_depths": [4],
        "table_versions": "{}", "train_rows": 10, "validation_rows": 2,
        "position_keys_hash": "00", "recorded_at": taken}])
    return model_id


def labels(lake: Lake, keys: range, at: dt.datetime, engine: str = "sf-a",
           depth: int = 4) -> None:
    lake.write("labels", [{"position_key": k, "engine_id": engine, "depth": depth,
                           "score_cp": 1, "labelled_at": at} for k in keys])


def test_retraining_is_due_after_enough_new_labels_of_the_model_engine_and_depth(
        home: Path) -> None:
    """Only positions the dataset's engine labelled at its depths after the dataset was taken
    count; labels of another engine or depth, or older ones, do not."""
    lake = Lake(home)
    assert not retrain_decision(lake, "nnue", 1).due          # no model yet
    taken = dt.datetime(2026, 1, 1, tzinfo=UTC)
    register(lake, 1, taken)
    labels(lake, range(0, 50), taken - dt.timedelta(hours=1))   # in the dataset
    labels(lake, range(50, 60), taken + dt.timedelta(hours=1))  # 10 new
    labels(lake, range(60, 90), taken + dt.timedelta(hours=1), engine="sf-b")
    labels(lake, range(90, 99), taken + dt.timedelta(hours=1), depth=5)
    decision = retrain_decision(lake, "nnue", 10)
    assert (decision.due, decision.model_id, decision.new_positions) == (True, "nnue@1", 10)
    assert decision.config == {"name": "nnue-tiny", "epochs": 1}
    assert decision.reason.startswith("10 new labels, 10 needed (positions labelled by sf-a")
    waiting = retrain_decision(lake, "nnue", 10_000)
    assert not waiting.due
    assert waiting.reason.startswith("10 of 10,000 new labels (positions labelled by sf-a at "
                                     "depths 4 since nnue@1's dataset")
    assert not retrain_decision(lake, "nnue", 11).due
    register(lake, 2, taken + dt.timedelta(hours=2))          # the retrained version
    assert retrain_decision(lake, "nnue", 1).new_positions == 0


def test_new_versions_wait_for_evaluation_against_the_best(home: Path) -> None:
    """Versions without an 'evaluated' event, oldest first; they play KIND@best, and the first
    model of a kind (or the best itself) plays the configured baseline."""
    lake = Lake(home)
    start = dt.datetime(2026, 1, 1, tzinfo=UTC)
    for version in (1, 2, 3):
        register(lake, version, start + dt.timedelta(hours=version))
    assert unevaluated_models(lake) == ["nnue@1", "nnue@2", "nnue@3"]
    assert baseline_for(lake, "nnue@1", "alphabeta:eval=hce") == "alphabeta:eval=hce"
    record_event(lake, "nnue@1", "evaluated", {"elo": 30})
    record_event(lake, "nnue@1", "promoted", {})
    assert unevaluated_models(lake) == ["nnue@2", "nnue@3"]
    assert baseline_for(lake, "nnue@2", "hce") == "alphabeta:eval=nnue,model=nnue@1"
    assert baseline_for(lake, "nnue@1", "hce") == "hce"


def test_a_second_run_of_a_job_waits_for_the_first(home: Path) -> None:
    """The job lock serialises two runs of one job; other jobs do not wait."""
    order: list[str] = []
    entered, other_done = threading.Event(), threading.Event()

    def first() -> None:
        with job_lock(home, "refresh"):
            entered.set()
            other_done.wait(60)   # the other job ran while this one held its lock
            time.sleep(0.2)       # give "second" a chance to overtake, which the lock forbids
            order.append("first done")

    thread = threading.Thread(target=first)
    thread.start()
    entered.wait()
    with job_lock(home, "evaluate"):
        order.append("other job")
    other_done.set()
    with job_lock(home, "refresh"):
        order.append("second")
    thread.join()
    assert order == ["other job", "first done", "second"]


def test_two_refreshes_at_once_store_each_fact_once(home: Path, tmp_path: Path,
                                                    stockfish_path: str) -> None:
    """A scheduled refresh firing while someone refreshes the same folder by hand (no lock
    between them): the keyed writes store the Opera game's 34 positions and their 34 depth-2
    labels once, as one refresh alone does."""
    folder = tmp_path / "incoming"
    folder.mkdir()
    shutil.copy(FIXTURES / "opera.pgn", folder / "opera.pgn")
    shutil.copy(FIXTURES / "terminal.epd", folder / "terminal.epd")
    config = LabelConfig.tiny(depths=(2,), limit=None, workers=1, batch_size=8)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            refresh(LocalRunner(show_progress=False), str(folder), config, Lake(home),
                    IngestConfig.tiny())
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    con = connect(Lake(home))
    counts = con.execute("""
        select (select count(*) from sources), (select count(*) from games),
               (select count(*) from positions), (select count(*) from labels),
               (select count(distinct position_key) from labels)""").fetchone()
    assert counts == (2, 1, 38, 38, 38)


@pytest.mark.parametrize("kind", ["nnue", "volatility"])
def test_a_retrained_version_gets_the_recorded_config_back(kind: str) -> None:
    """The retrain job rebuilds the training config from the models row's JSON (lists back to
    tuples): the same run identity, so the trainer treats it as the same config."""
    from pipelines.models.kinds import load_kind
    from pipelines.ops.config import step_config
    from pipelines.train import preset

    config = preset(load_kind(kind).config, "tiny", name=f"{kind}-tiny")
    again = step_config(load_kind(kind).config, {**json.loads(config.to_json()), "progress": False},
                        "retrain")
    assert again.run_identity() == config.run_identity()
