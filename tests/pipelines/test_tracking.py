"""Issue 50: the tracking tools users already run. TensorBoard's run is named after the model
(the browser test reads its event files); MLflow is optional: asked for without MLflow
installed, training stops with a message that says how to get it."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from pipelines.train.config import TrainConfig, TrainConfigError
from pipelines.train.tracking import check_loggers, hyper_parameters, loggers, run_name
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


@pytest.mark.skipif(importlib.util.find_spec("mlflow") is not None,
                    reason="MLflow is installed here")
def test_mlflow_without_mlflow_installed_says_how_to_get_it(tmp_path: Path) -> None:
    lake = Lake(tmp_path / "home")
    asked = TrainConfig(mlflow=f"file:{tmp_path / 'mlruns'}")
    with pytest.raises(TrainConfigError, match="pip install mlflow"):
        check_loggers(asked)
    with pytest.raises(TrainConfigError, match="pip install mlflow"):
        loggers(lake, "nnue@1", asked)
    plain = loggers(lake, "nnue@1", TrainConfig(name="nnue-demo"))
    assert [type(x).__name__ for x in plain] == ["TensorBoardLogger"]
    assert (tmp_path / "home" / "tensorboard" / "nnue@1 (nnue-demo)").is_dir()
