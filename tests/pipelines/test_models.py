"""Issue 34 §1: a model kind is one registered object, and one resolver turns a model name
into the engine options that deploy it.

``volatility@best``, ``volatility@latest`` and ``lmr@best`` work wherever ``nnue@best`` does
(``chesslab engine``, tournament players, ``bench``), through the same registry and hash
check; engines are given files and values only. A fifth kind declared only inside a test (a
folder in a temporary directory, nothing else) trains, registers, resolves and deploys.
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import chess
import chess.engine
import numpy as np
import pytest

import pipelines.kinds
from engines.nnue.netfile import random_arrays, save_arrays
from engines.registry import check_player, own_identity, parse_engine
from engines.volatility.features import INPUTS
from engines.volatility.model import FORMAT
from flows.cli import main
from pipelines.models.deploy import (
    engine_options,
    resolve_player,
    resolve_settings,
    settings_of,
)
from pipelines.models.kinds import kind_names, load_kind
from pipelines.models.names import ModelError, ModelNotFoundError
from pipelines.models.registry import record_event, record_model
from warehouse import Lake, connect

ROOT = Path(__file__).resolve().parents[2]
OPENINGS = str(ROOT / "tests" / "fixtures" / "openings" / "two_positions.epd")


def volatility_net(path: Path, bias: float) -> Path:
    """A dense volatility net (numpy arrays in the engines' format) whose answer ignores
    its inputs: sigmoid(bias)."""
    width = 4
    arrays = {"hidden0.weight": np.zeros((width, INPUTS)), "hidden0.bias": np.zeros(width),
              "hidden1.weight": np.zeros((width, width)), "hidden1.bias": np.zeros(width),
              "out.weight": np.zeros((1, width)), "out.bias": np.full(1, bias)}
    meta = {"format": FORMAT, "version": 1, "arch": "dense", "width": width, "inputs": INPUTS,
            "delta_scale": 0.01, "beta": 18.0, "target_fpr": 0.005, "threshold": 0.5}
    with open(path, "wb") as handle:
        np.savez(handle, meta=np.array(json.dumps(meta)), **arrays)
    return path


def register(lake: Lake, kind: str, version: int, write: object, name: str,
             config: dict[str, object] | None = None) -> Path:
    """Write a version's artifact under the home (``write(path)``) and register it."""
    folder = lake.home / "models" / kind / str(version)
    folder.mkdir(parents=True)
    path = folder / name
    write(path)  # type: ignore[operator]
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    record_model(lake, kind, version, f"{kind}-test", json.dumps(config or {}), path, digest)
    return path


@pytest.fixture
def registry(home: Path) -> dict[str, Path]:
    """Two versions each of nnue, volatility and lmr; version 1 of each is promoted (best),
    version 2 is the latest."""
    lake = Lake(home)
    files = {}
    for version in (1, 2):
        files[f"nnue@{version}"] = register(
            lake, "nnue", version, lambda p, v=version: save_arrays(p, random_arrays(v)),
            "nnue.npz")
        files[f"volatility@{version}"] = register(
            lake, "volatility", version,
            lambda p, v=version: volatility_net(p, 10.0 if v == 1 else -10.0), "volatility.npz")
        files[f"lmr@{version}"] = register(
            lake, "lmr", version, lambda p, v=version: p.write_text(json.dumps(
                {"formula": f"logd*logm={0.4 + v / 10}"})), "lmr.json",
            {"deploy": "logd*logm", "eval": "hce"})
    for kind in ("nnue", "volatility", "lmr"):
        record_event(lake, f"{kind}@1", "promoted", {})
    return files


def test_best_and_latest_of_every_kind_resolve_to_engine_options(
        home: Path, registry: dict[str, Path]) -> None:
    """One resolver for every kind: the concrete version in the option that names it, its
    file (or, for lmr, its formula) in the option that loads it."""
    lake = Lake(home)
    assert engine_options(lake, "nnue@best") == {"model": "nnue@1",
                                                 "nnue": str(registry["nnue@1"])}
    assert engine_options(lake, "volatility@best") == {
        "volatility": "volatility@1", "volatility_file": str(registry["volatility@1"])}
    assert engine_options(lake, "volatility@latest") == {
        "volatility": "volatility@2", "volatility_file": str(registry["volatility@2"])}
    assert engine_options(lake, "lmr@best") == {"lmr": "lmr@1", "lmr_formula": "logd*logm=0.5"}
    assert engine_options(lake, "lmr@latest")["lmr_formula"] == "logd*logm=0.6"
    with pytest.raises(ModelNotFoundError, match="no model 'volatility@7'"):
        engine_options(lake, "volatility@7")
    registry["volatility@2"].write_bytes(b"another file")
    with pytest.raises(ModelError, match=r"volatility@2: artifact .* has sha256"):
        engine_options(lake, "volatility@latest")


def test_players_name_models_by_best_and_latest(home: Path, registry: dict[str, Path]) -> None:
    """A tournament (or self-play) player's settings are resolved before any game: the
    identity records the versions, the command gives the engine the files and the formula,
    and the files load (check_player)."""
    lake = Lake(home)
    player = resolve_player(lake, parse_engine(
        "alphabeta:eval=nnue,hash=1,volatility=volatility@best,lmr=lmr@best,model=nnue@best"))
    settings = settings_of(player.command[4:])
    assert settings == {"eval": "nnue", "hash": "1", "volatility": "volatility@1",
                        "volatility_file": str(registry["volatility@1"]), "lmr": "lmr@1",
                        "lmr_formula": "logd*logm=0.5", "model": "nnue@1",
                        "nnue": str(registry["nnue@1"])}
    check_player(player)
    identity = own_identity(player)
    assert (identity.options["Volatility"], identity.options["LMR"], identity.model) == (
        "volatility@1", "lmr@1", "nnue@1")
    assert not {"VolatilityFile", "EvalFile", "LMRFormula"} & set(identity.options)
    stockfish = resolve_player(lake, parse_engine("stockfish-volatility:volatility="
                                                  "volatility@latest"))
    assert settings_of(stockfish.command[4:])["volatility_file"] == str(
        registry["volatility@2"])


def test_a_name_in_the_wrong_option_or_program_is_one_line(
        home: Path, registry: dict[str, Path]) -> None:
    lake = Lake(home)
    with pytest.raises(ModelError, match="'volatility@1' is a volatility model: alphabeta "
                                         "takes it as volatility=volatility@1"):
        resolve_settings(lake, "alphabeta", {"model": "volatility@1"})
    with pytest.raises(ModelError, match="'nnue@best': puct has no option 'nnue'"):
        resolve_settings(lake, "puct", {"model": "nnue@best"})
    with pytest.raises(ModelNotFoundError, match="engine 'alphabeta:model=foo@1': no model "
                                                 "'foo@1'"):
        resolve_player(lake, parse_engine("alphabeta:model=foo@1"))


def uci(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flows.cli", "--home", str(home), "engine", "alphabeta", *args],
        input="uci\nisready\nposition startpos\ngo depth 3\n", text=True,
        capture_output=True, timeout=120, cwd=ROOT)


def test_engine_command_takes_volatility_and_lmr_by_best_and_latest(
        home: Path, registry: dict[str, Path]) -> None:
    """``chesslab engine alphabeta --volatility volatility@latest --lmr lmr@best``: the
    engine gets the version's file and formula as its options' defaults and plays."""
    done = uci(home, "--hash", "1", "--volatility", "volatility@latest", "--lmr", "lmr@best")
    assert done.returncode == 0, done.stderr
    assert "option name Volatility type string default volatility@2" in done.stdout
    assert (f"option name VolatilityFile type string default {registry['volatility@2']}"
            in done.stdout)
    assert "option name LMRFormula type string default logd*logm=0.5" in done.stdout
    assert "bestmove " in done.stdout
    bad = uci(home, "--volatility", "volatility@best", "--model", "volatility@2")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "'volatility@2' is a volatility model" in bad.stderr


def test_bench_takes_lmr_best(home: Path, registry: dict[str, Path],
                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--home", str(home), "bench", "--depth", "3", "--positions", "2",
                 "--hash-mb", "1", "--lmr", "lmr@best"]) == 0
    assert "lmr: lmr@1" in capsys.readouterr().out


# --------------------------------------------------------------------------------------------
# A fifth kind: one folder, declared only here
# --------------------------------------------------------------------------------------------

TOY_KIND = '''
"""``toy``: one learned scale of log d * log m, fitted by the Lightning trainer to made-up
targets, deployed as the alpha-beta engine's learned reduction formula."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pipelines.models.kinds import ModelKind
from pipelines.train.config import TrainConfig, preset


@dataclass(frozen=True)
class ToyConfig(TrainConfig):
    """A toy reduction: log d * log m times one learned scale."""

    target: float = field(default=0.5, metadata={"help": "the scale the made-up data has"})


def make_config(name: str, given: Any) -> ToyConfig:
    return preset(ToyConfig, name, **{"name": f"toy-{name}", **given})


def lightning() -> Any:
    import torch

    from pipelines.train.trainer import Export, KindData, KindModule

    class Module(KindModule):
        def __init__(self, config: ToyConfig) -> None:
            super().__init__(config)
            self.scale = torch.nn.Parameter(torch.zeros(1))

        def loss(self, batch: Any) -> Any:
            x, y = batch
            return ((self.scale * x - y) ** 2).mean()

    class Toy:
        name = "toy"

        def data(self, lake: Any, config: ToyConfig, folder: Any) -> KindData:
            x = torch.linspace(0.5, 2.0, 64)
            pairs = torch.utils.data.TensorDataset(x, config.target * x)
            loader = torch.utils.data.DataLoader(pairs, batch_size=16)
            return KindData(loader, loader, {
                "view": "none", "query": "made-up", "parameters": "{}",
                "label_engine_id": None, "label_depths": [], "table_versions": "{}",
                "train_rows": 64, "validation_rows": 64, "position_keys_hash": None})

        def module(self, config: ToyConfig) -> Module:
            return Module(config)

        def export(self, module: Module, folder: Any, data: KindData,
                   config: ToyConfig) -> Export:
            path = folder / "toy.json"
            path.write_text(json.dumps({"scale": float(module.scale.detach())}))
            return Export(path, {})

    return Toy()


def deploy(model: Any) -> dict[str, str]:
    scale = json.loads(model.artifact_path.read_text())["scale"]
    return {"lmr": model.model_id, "lmr_formula": f"logd*logm={scale:.4f}"}


KIND = ModelKind(name="toy", config=ToyConfig, make_config=make_config, lightning=lightning,
                 deploy=deploy, engine="alphabeta:hash=1,lmr={model}")
'''


@pytest.fixture
def toy_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``toy/kind.py`` in a folder of its own, added to the places kinds are found."""
    folder = tmp_path / "kinds"
    (folder / "toy").mkdir(parents=True)
    (folder / "toy" / "kind.py").write_text(textwrap.dedent(TOY_KIND))
    monkeypatch.setattr(pipelines.kinds, "__path__", [*pipelines.kinds.__path__, str(folder)])
    yield
    for module in ("pipelines.kinds.toy.kind", "pipelines.kinds.toy"):
        sys.modules.pop(module, None)


def test_a_fifth_kind_is_one_folder(home: Path, toy_kind: None,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The toy kind, declared only in its folder: ``chesslab train toy`` trains it with the
    Lightning trainer and registers ``toy@1``; the resolver deploys it into the alpha-beta
    engine (whose process knows nothing of the kind: it gets the formula); ``chesslab
    evaluate toy@1`` plays the engine its declaration names."""
    assert "toy" in kind_names() and load_kind("toy").trainer == "lightning"
    lake = Lake(home)
    lake.root.mkdir(parents=True)
    assert main(["--home", str(home), "train", "toy", "--preset", "tiny", "--epochs", "30",
                 "--learning-rate", "0.05", "--no-prefect"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("toy@1 (toy-tiny): ") and "toy@1: train loss " in out
    options = engine_options(lake, "toy@latest")
    assert options["lmr"] == "toy@1"
    scale = float(options["lmr_formula"].split("=")[1])
    assert scale == pytest.approx(0.5, abs=0.02)     # the made-up data's scale, learned

    player = resolve_player(lake, parse_engine("alphabeta:hash=1,lmr=toy@latest"))
    assert settings_of(player.command[4:])["lmr_formula"] == options["lmr_formula"]
    engine = chess.engine.SimpleEngine.popen_uci(list(player.command))
    try:
        assert engine.options["LMRFormula"].default == options["lmr_formula"]
        assert engine.play(chess.Board(), chess.engine.Limit(depth=3)).move is not None
    finally:
        engine.quit()

    assert main(["--home", str(home), "evaluate", "toy@1", "--against", "alphabeta:hash=1",
                 "--nodes", "100", "--max-games", "2", "--ladder", "", "--openings", OPENINGS,
                 "--no-prefect"]) == 0
    lmrs = {json.loads(o).get("LMR") for (o,) in connect(lake).execute(
        "select options from engines").fetchall()}
    assert lmrs == {"toy@1", "standard"}
