"""Models end to end on both runners (issue 9): the selfplay, train and evaluate steps run the
same units with the same progress lines on the local and the Prefect runner; a trained net is
deployed by name (``chesslab engine ... --model nnue@latest``, tournament specs
``alphabeta:eval=nnue,model=nnue@1``), its player row joins the registry, and the lineage
query walks from its rating back to the labels and source files it was trained on.

The warehouse: tests/fixtures/label_engines/selfplay.pgn (Stockfish self-play and Morphy's
Opera game) ingested and labelled by real Stockfish at depth 4; the tiny NNUE preset.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from flows.cli import main
from flows.evaluate_model import evaluate_model
from flows.ingest import INGEST, IngestJob
from flows.label import LABEL
from flows.selfplay import SELFPLAY
from flows.step import LocalRunner, run_step
from flows.train import TRAIN, TrainJob
from pipelines.evaluate import EvaluateConfig
from pipelines.ingest import IngestConfig
from pipelines.kinds.nnue.config import NnueConfig
from pipelines.label import LabelConfig
from pipelines.models.deploy import resolve_settings
from pipelines.models.registry import resolve_model
from pipelines.selfplay import SelfplayConfig
from pipelines.train.config import preset
from tests.flows.conftest import progress_lines
from warehouse import Lake, connect

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
GAMES = FIXTURES / "label_engines" / "selfplay.pgn"
OPENINGS = str(FIXTURES / "openings" / "two_positions.epd")
DEPTH = 4


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory, stockfish_path: str) -> Lake:
    """selfplay.pgn ingested and every position labelled by Stockfish at depth 4."""
    lake = Lake(tmp_path_factory.mktemp("models") / "home")
    run_step(INGEST, IngestJob((GAMES,), IngestConfig.tiny()), lake)
    run_step(LABEL, LabelConfig.tiny(depths=(DEPTH,), limit=None, batch_size=200,
                                           workers=2), lake)
    return lake


@pytest.fixture(scope="module")
def trained(labelled: Lake, tmp_path_factory: pytest.TempPathFactory) -> Lake:
    """The labelled warehouse with nnue@1 trained by the tiny preset (local runner)."""
    lake = Lake(tmp_path_factory.mktemp("trained") / "home")
    shutil.copytree(labelled.home, lake.home)
    config = preset(NnueConfig, "tiny", name="nnue-tiny")
    LocalRunner(show_progress=False).run(TRAIN, TrainJob("nnue", config),
                                         lake)
    return lake


def copy_of(lake: Lake, home: Path) -> Lake:
    shutil.copytree(lake.home, home)
    return Lake(home)


def test_train_step_on_both_runners(labelled: Lake, home: Path, runner: Any,
                                    capfd: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """One unit trains, exports and registers nnue@1; both runners print the same lines."""
    import pipelines.train.trainer as trainer

    monkeypatch.setattr(trainer, "EVERY_S", 0)    # a line within the epoch after every step
    lake = copy_of(labelled, home)
    config = preset(NnueConfig, "tiny", name="nnue-tiny", epochs=2)
    model = runner.run(TRAIN, TrainJob("nnue", config), Lake(home))
    assert (model.model_id, model.name, model.config["epochs"]) == ("nnue@1", "nnue-tiny", 2)
    assert model.artifact_path.is_file() and model.artifact_path.is_relative_to(home)
    assert resolve_model(lake, "nnue@latest") == model
    err = capfd.readouterr().err
    lines = progress_lines(err, "train:")
    assert lines[0] == "train: nnue nnue-tiny"
    assert lines[1].startswith(f"train: nnue@1 exported to {model.artifact_path} in ")
    epochs = connect(lake).execute("select count(*) from model_metrics").fetchone()
    assert epochs == (2,)
    # Issue 49 §3: each epoch's line in the one progress style, positions (the training
    # split's rows of model_datasets per epoch) with their rate and the time left.
    rows = connect(lake).execute("select train_rows from model_datasets").fetchone()
    assert rows is not None
    per_epoch = rows[0]
    ends = [line for line in progress_lines(err, "train nnue@1: ") if ", train loss " in line]
    rate, loss = r"[\d.,]+ positions/(s|min)", r"train loss [\d.]+, validation loss [\d.]+"
    assert len(ends) == 2, err
    assert re.fullmatch(rf"train nnue@1: {per_epoch:,}/{2 * per_epoch:,} positions \(50%\), "
                        rf"{rate}, ETA \d+ (s|min \d\d s); epoch 1/2, {loss}", ends[0]), ends
    assert re.fullmatch(rf"train nnue@1: {2 * per_epoch:,}/{2 * per_epoch:,} positions "
                        rf"\(100%\), {rate}; epoch 2/2, {loss}", ends[1]), ends
    steps = [line for line in progress_lines(err, "train nnue@1: ") if line not in ends]
    assert steps and all(re.fullmatch(
        rf"train nnue@1: [\d,]+(/[\d,]+ positions \(\d+%\)| positions), {rate}"
        rf"(, ETA \d+ (s|min \d\d s))?; epoch [12]/2", line) for line in steps), steps
    assert steps[-1].endswith("; epoch 2/2") and f"/{2 * per_epoch:,} positions" in steps[-1]


def test_selfplay_step_on_both_runners(home: Path, runner: Any,
                                       capfd: pytest.CaptureFixture[str]) -> None:
    """The tiny run (4 games at 200 nodes, batches of 2) on a pool of two processes: the games
    and plies of the plain pipeline's test; a second run plays nothing."""
    config = SelfplayConfig.tiny(workers=2)
    summary = runner.run(SELFPLAY, config, Lake(home))
    assert (summary.games, summary.plies, summary.batches_ingested) == (4, 577, 2)
    assert summary.new_positions == 573
    lines = progress_lines(capfd.readouterr().err, "selfplay")
    assert lines[0] == f"selfplay run {summary.run_id}: 0 games done, 4 to play in 2 batches"
    assert re.fullmatch(r"selfplay: 4/4 games \(100%\), [\d.,]+ games/(s|min); 577 plies, "
                        r"2/2 batches ingested", lines[-1]), lines
    again = runner.run(SELFPLAY, config, Lake(home))
    assert (again.games, again.games_in_run, again.new_positions) == (0, 4, 0)


def test_evaluate_on_both_runners(home: Path, runner: Any, stockfish_path: str) -> None:
    """The evaluate composition: the weak spec's SPRT match against Stockfish ends in H0 with
    no win, on either runner (no ladder)."""
    config = EvaluateConfig.tiny(spec="alphabeta:eval=hce-simple,hash=1",
                                 against="stockfish?Threads=1&Hash=16#sf", openings=OPENINGS,
                                 ladder="")
    evaluation = evaluate_model(runner, config, Lake(home))
    assert (evaluation.sprt_decision, evaluation.wins) == ("H0", 0)
    assert evaluation.games == evaluation.losses + evaluation.draws >= 2
    assert evaluation.model_id is None and evaluation.against == "sf"


def test_model_names_resolve_to_the_version_and_its_file(trained: Lake) -> None:
    model = resolve_model(trained, "nnue@1")
    settings = {"eval": "nnue", "model": "nnue@latest", "hash": "4"}
    assert resolve_settings(trained, "alphabeta", settings) == {
        "eval": "nnue", "model": "nnue@1", "nnue": str(model.artifact_path), "hash": "4"}
    with pytest.raises(LookupError, match="no model 'nnue@9'"):
        resolve_settings(trained, "alphabeta", {"model": "nnue@9"})


def test_an_evaluation_without_a_ladder_has_a_lineage(
        trained: Lake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`chesslab evaluate nnue@1 --ladder ''` plays only the SPRT match; its rating table (the
    baseline anchored at 0) is what the lineage query starts from, so `models --lineage`
    reaches the data set from that match (it used to say "no ratings yet")."""
    lake = copy_of(trained, tmp_path / "home")
    assert main(["--home", str(lake.home), "evaluate", "nnue@latest", "--against",
                 "alphabeta:eval=hce,hash=4", "--nodes", "300", "--max-games", "2",
                 "--ladder", "", "--openings", OPENINGS, "--no-prefect"]) == 0
    capsys.readouterr()
    assert main(["--home", str(lake.home), "models", "--lineage", "nnue@1",
                 "--format", "jsonl"]) == 0
    lineage = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    match = connect(lake).execute("select tournament_id from tournaments").fetchall()
    assert len(lineage) == 1 and len(match) == 1, lineage
    row = lineage[0]
    assert (row["rating_source"], row["model_id"], row["games"]) == (match[0][0], "nnue@1", 2)
    assert row["label_engine_id"].startswith("stockfish-") and row["positions"] > 0


def uci_session(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flows.cli", "--home", str(home), "engine", "alphabeta", *args],
        input="uci\nisready\nposition startpos moves e2e4\ngo nodes 300\n", text=True,
        capture_output=True, timeout=120, cwd=ROOT)


def test_engine_command_loads_a_model_by_name(trained: Lake) -> None:
    """`chesslab engine alphabeta --eval nnue --model nnue@latest` plays with nnue@1's file
    and says so in its options; an unknown model is a one-line error naming it."""
    model = resolve_model(trained, "nnue@1")
    done = uci_session(trained.home, "--eval", "nnue", "--model", "nnue@latest", "--hash", "4")
    assert done.returncode == 0, done.stderr
    assert "option name Model type string default nnue@1" in done.stdout
    assert f"option name EvalFile type string default {model.artifact_path}" in done.stdout
    assert "bestmove " in done.stdout
    bad = uci_session(trained.home, "--eval", "nnue", "--model", "nnue@9")
    assert bad.returncode == 2 and "no model 'nnue@9'" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_tournament_with_a_model_joins_ratings_to_models_and_lineage(
        trained: Lake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Two games of nnue@1 (named nnue@latest) against the HCE at 300 nodes: the player's
    engines row carries nnue@1, the rating joins the models row, and the lineage query goes
    from that rating to the data set (label engine, depth, rows) and the source file."""
    lake = copy_of(trained, tmp_path / "home")
    monkeypatch.setenv("CHESSLAB_HOME", str(lake.home))
    net = "alphabeta:eval=nnue,hash=4,model=nnue@latest"
    assert main(["tournament", net, "alphabeta:eval=hce,hash=4", "--nodes", "300",
                 "--rounds", "1", "--openings", OPENINGS, "--no-prefect"]) == 0
    con = connect(lake)
    rows = con.sql(
        "select r.player, r.games, e.model, m.kind, m.version, m.artifact_sha256 "
        "from latest_ratings r join tournament_players p using (tournament_id, player) "
        "join (select distinct engine_id, model from engines) e using (engine_id) "
        "join models m on m.model_id = e.model").fetchall()
    model = resolve_model(lake, "nnue@1")
    assert rows == [(net, 2, "nnue@1", "nnue", 1, model.artifact_sha256)]
    capsys.readouterr()

    assert main(["models", "--lineage", "nnue@latest"]) == 0
    tree = capsys.readouterr().out.splitlines()     # issue 49 §4: a 522-character table
    assert tree[0].startswith("nnue@1  nnue-tiny  sha256 ") and len(tree) == 4, tree
    assert tree[2].startswith("    from ") and tree[3].startswith(f"  rated: {net} in ")
    assert max(map(len, tree)) < 150, tree
    assert main(["models", "--lineage", "nnue@latest", "--format", "json"]) == 0
    lineage = json.loads(capsys.readouterr().out)
    dataset = con.sql("select * from model_datasets").to_arrow_table().to_pylist()[0]
    labelled = con.execute(f"select count(distinct position_key) from labels where depth = {DEPTH}"
                       " and score_mate is null").fetchone()[0]
    assert len(lineage) == 1, lineage      # one rating, one source file
    row = lineage[0]
    assert (row["player"], row["games"], row["model_id"], row["model_name"]) == (
        net, 2, "nnue@1", "nnue-tiny")
    assert (row["label_engine_id"], row["label_depths"]) == (dataset["label_engine_id"],
                                                             [DEPTH])
    assert row["label_engine_id"].startswith("stockfish-")
    assert json.loads(row["parameters"])["depth"] == DEPTH
    assert (row["train_rows"], row["validation_rows"]) == (dataset["train_rows"],
                                                           dataset["validation_rows"])
    assert (row["source_path"], row["source_format"]) == (str(GAMES), "pgn")
    assert row["positions"] == labelled >= row["train_rows"] + row["validation_rows"]
