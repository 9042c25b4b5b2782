"""Issue 50: the tracking tools users already run. TensorBoard's run is named after the model
(the browser test reads its event files); MLflow is optional: asked for without MLflow
installed, training stops with a message that says how to get it; a file store asked for is
used (MLflow 3.7+ refuses it by default). The MLflow run itself is read back in
tests/dashboards/test_browser.py (``served_home`` logs nnue@2 to a file store)."""
from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

from pipelines.train.config import TrainConfig, TrainConfigError
from pipelines.train.tracking import (
    ALLOW_FILE_STORE,
    allow_file_store,
    check_loggers,
    hyper_parameters,
    loggers,
    run_name,
)
from warehouse import Lake


def test_a_run_is_named_after_the_model_and_its_name() -> None:
    assert run_name("nnue@1", "nnue-demo") == "nnue@1 (nnue-demo)"


def test_where_mlflow_logs_is_not_part_of_the_run() -> None:
    """Logging to MLflow or not trains the same net: a run resumes across it, and the HParams
    tab does not list it."""
    plain, logged = TrainConfig(epochs=2), TrainConfig(epochs=2, mlflow="sqlite:///m.db")
    assert plain.run_identity() == logged.run_identity()
    assert "mlflow" not in json.loads(logged.run_identity())
    found = hyper_parameters(logged)
    assert "mlflow" not in found and "progress" not in found and found["epochs"] == 2


def test_mlflow_without_mlflow_installed_says_how_to_get_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Asked for without MLflow importable (as Python sees a missing package: the test extra
    installs mlflow-skinny), training stops before it opens a run with the command to run."""
    monkeypatch.setitem(sys.modules, "mlflow", None)
    assert importlib.util.find_spec("mlflow") is None
    lake = Lake(tmp_path / "home")
    asked = TrainConfig(mlflow=f"file:{tmp_path / 'mlruns'}")
    with pytest.raises(TrainConfigError, match="pip install mlflow-skinny"):
        check_loggers(asked)
    with pytest.raises(TrainConfigError, match="pip install mlflow-skinny"):
        loggers(lake, "nnue@1", asked)
    assert not (tmp_path / "mlruns").exists()
    plain = loggers(lake, "nnue@1", TrainConfig(name="nnue-demo"))
    assert [type(x).__name__ for x in plain] == ["TensorBoardLogger"]
    assert (tmp_path / "home" / "tensorboard" / "nnue@1 (nnue-demo)").is_dir()


@pytest.mark.parametrize(("uri", "before", "after"), [
    ("file:///tmp/mlruns", None, "true"),
    ("file:./mlruns", None, "true"),
    ("mlruns", None, "true"),
    ("file:./mlruns", "false", "false"),      # the user's own setting stays
    ("sqlite:///mlflow.db", None, None),      # a database needs no opt-in
    ("http://localhost:5000", None, None),
])
def test_a_file_store_asked_for_is_allowed(uri: str, before: str | None, after: str | None,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """MLflow 3.7+ refuses its file store unless MLFLOW_ALLOW_FILE_STORE is true: asked for
    by ``--mlflow``, chesslab sets it for its process, unless the user set it."""
    if before is None:
        monkeypatch.delenv(ALLOW_FILE_STORE, raising=False)
    else:
        monkeypatch.setenv(ALLOW_FILE_STORE, before)
    allow_file_store(uri)
    assert os.environ.get(ALLOW_FILE_STORE) == after
