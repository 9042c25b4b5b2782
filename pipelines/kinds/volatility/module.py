"""Paper 003's volatility classifier as a model kind of the generic trainer: will the depth-7
evaluation differ from the depth-6 one by beta or more? Inputs: the 774 of
:mod:`engines.volatility.features`; nets: the dense 2x50 and the convolutional net of
chapter 3 (:mod:`engines.volatility.model` evaluates the export with numpy); loss: binary
cross-entropy, positive class = stable.

The export writes ``volatility.npz`` and, from the exported net's predictions on the
validation split (split by game), the warehouse's volatility_evaluations (ROC AUC next to the
always-unstable baseline), volatility_roc, volatility_gains, volatility_fpr_table (Table 4.1)
and volatility_predictions; the threshold the engines use is Table 4.1's row at
``target_fpr``.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import torch
from torch import nn

from engines.volatility.features import BOARD_INPUTS, INPUT_SETS, centipawn_columns, features
from engines.volatility.model import ARTIFACT, FORMAT, VolatilityModel, load_model
from pipelines.models import registry  # its clock, read when stamping (tests patch it)
from pipelines.train.artifacts import save_npz
from pipelines.train.dataset import (
    NO_LIMIT,
    DatasetError,
    SplitQuery,
    parameters_json,
    stream_batches,
    table_versions,
)
from pipelines.train.trainer import Export, KindData, KindModule
from warehouse import Lake, connect
from warehouse.catalog import named_query, query

from .config import VolatilityConfig
from .metrics import (
    PAPER_TABLE_4_1,
    Roc,
    at_fpr,
    fpr_table,
    gains_curve,
    no_better_than_chance,
    roc_curve,
    thin,
)

log = logging.getLogger(__name__)

QUERY = "volatility_dataset"
VIEW = "volatility_examples"
DELTA_SCALE = 0.01   # the nets read delta_value in pawns


# --- the nets ------------------------------------------------------------------------------

def scaled(x: torch.Tensor) -> torch.Tensor:
    """The inputs with delta_value (and value) in pawns (what :class:`VolatilityModel` does
    too)."""
    scale = torch.ones(x.shape[1], dtype=x.dtype, device=x.device)
    scale[centipawn_columns(x.shape[1])] = DELTA_SCALE
    return x * scale


class DenseNet(nn.Module):
    """774 (or 775) -> Dense(w, ReLU) -> Dense(w, ReLU) -> 1 logit (paper 003's final net,
    w = 50)."""

    def __init__(self, width: int, inputs: int) -> None:
        super().__init__()
        self.hidden0 = nn.Linear(inputs, width)
        self.hidden1 = nn.Linear(width, width)
        self.out = nn.Linear(width, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = torch.relu(self.hidden1(torch.relu(self.hidden0(scaled(x)))))
        return self.out(hidden).squeeze(1)


class ConvNet(nn.Module):
    """Chapter 3's convolutional net: 12x8x8 planes -> 2 x [3x3 conv(w) + batch norm + ReLU]
    -> Dense(w); the 6 (7) side inputs -> 2 x Dense(w); concatenated -> Dense(w) -> 1 logit."""

    def __init__(self, width: int, inputs: int) -> None:
        super().__init__()
        self.conv0, self.bn0 = nn.Conv2d(12, width, 3, padding=1), nn.BatchNorm2d(width)
        self.conv1, self.bn1 = nn.Conv2d(width, width, 3, padding=1), nn.BatchNorm2d(width)
        self.board_fc = nn.Linear(width * 64, width)
        self.side0, self.side1 = nn.Linear(inputs - BOARD_INPUTS, width), nn.Linear(width, width)
        self.head, self.out = nn.Linear(2 * width, width), nn.Linear(width, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = scaled(x)
        planes = x[:, :BOARD_INPUTS].reshape(len(x), 12, 8, 8)
        board = torch.relu(self.bn1(self.conv1(torch.relu(self.bn0(self.conv0(planes))))))
        board = torch.relu(self.board_fc(board.flatten(1)))
        side = torch.relu(self.side1(torch.relu(self.side0(x[:, BOARD_INPUTS:]))))
        return self.out(torch.relu(self.head(torch.cat([board, side], dim=1)))).squeeze(1)


def make_net(config: VolatilityConfig) -> nn.Module:
    return (DenseNet if config.arch == "dense" else ConvNet)(config.hidden,
                                                             INPUT_SETS[config.inputs])


def export_arrays(net: nn.Module) -> dict[str, np.ndarray]:
    """The net's weights by layer name, batch norm folded into the convolution before it."""
    state = {name: t.detach().cpu().double().numpy() for name, t in net.state_dict().items()}
    arrays = {name: value for name, value in state.items()
              if not name.startswith("bn") and not name.startswith("conv")}
    for conv, bn in (("conv0", "bn0"), ("conv1", "bn1")):
        if f"{conv}.weight" not in state:
            continue
        scale = state[f"{bn}.weight"] / np.sqrt(state[f"{bn}.running_var"] + 1e-5)
        arrays[f"{conv}.weight"] = state[f"{conv}.weight"] * scale[:, None, None, None]
        arrays[f"{conv}.bias"] = (state[f"{conv}.bias"] - state[f"{bn}.running_mean"]) * scale \
            + state[f"{bn}.bias"]
    return arrays


# --- data ----------------------------------------------------------------------------------

@dataclass
class VolatilityBatch:
    """Inputs (n, 774 or 775) float32, labels (n,) float32 (1 = stable) and the position
    keys."""

    x: torch.Tensor
    stable: torch.Tensor
    keys: np.ndarray

    def __len__(self) -> int:
        return int(self.stable.shape[0])


def encode(record_batch: pa.RecordBatch, with_value: bool = False) -> VolatilityBatch:
    columns = record_batch.to_pydict()
    x = features(columns["fen"], columns["delta_value"], columns["pv_change"],
                 columns["v6"] if with_value else None)
    return VolatilityBatch(torch.from_numpy(x),
                           torch.tensor(columns["stable"], dtype=torch.float32),
                           np.asarray(columns["position_key"], dtype=np.uint64))


class VolatilityStream(torch.utils.data.IterableDataset):
    """One split streamed from DuckDB, encoded per record batch, cut into training batches."""

    def __init__(self, split: SplitQuery, batch_size: int, read_batch: int,
                 with_value: bool = False) -> None:
        self.split, self.batch_size, self.read_batch = split, batch_size, read_batch
        self.with_value = with_value
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __iter__(self) -> Iterator[VolatilityBatch]:
        for record_batch in stream_batches(self.split, self.epoch, self.read_batch):
            batch = encode(record_batch, self.with_value)
            for start in range(0, len(batch), self.batch_size):
                end = start + self.batch_size
                yield VolatilityBatch(batch.x[start:end], batch.stable[start:end],
                                      batch.keys[start:end])


def choose_engine(lake: Lake, config: VolatilityConfig) -> str:
    sources = query(connect(lake), named_query("volatility_label_sources")).to_pylist()
    engines = [s["engine_id"] for s in sources
               if config.engine_id is None or s["engine_id"] == config.engine_id]
    if not engines:
        raise DatasetError(f"no {VIEW} rows for engine {config.engine_id or 'any'}: label "
                           "positions at depths 5, 6 and 7 first (chesslab label --depths 5,6,7)")
    return str(engines[0])


def dataset_summary(lake: Lake, parameters: dict[str, Any]) -> dict[bool, dict[str, Any]]:
    params = {k: parameters[k] for k in ("engine_id", "beta", "validation_permille")}
    rows = query(connect(lake), named_query("volatility_dataset_summary"), params).to_pylist()
    return {bool(r["validation"]): r for r in rows}


# --- the module and the kind ---------------------------------------------------------------

class VolatilityModule(KindModule):
    """Binary cross-entropy on the logit; counts correct answers (probability > 0.5) per
    split for the epoch's accuracy."""

    def __init__(self, config: VolatilityConfig) -> None:
        super().__init__(config)
        self.net = make_net(config)
        self.counts = {True: [0, 0], False: [0, 0]}   # training? -> [correct, seen]

    def loss(self, batch: VolatilityBatch) -> torch.Tensor:
        logits = self.net(batch.x)
        counts = self.counts[self.training]
        counts[0] += int(((logits > 0).float() == batch.stable).sum())
        counts[1] += len(batch)
        return nn.functional.binary_cross_entropy_with_logits(logits, batch.stable)

    def on_train_epoch_start(self) -> None:
        self.counts = {True: [0, 0], False: [0, 0]}

    def epoch_extra(self) -> dict[str, float | None]:
        """The epoch's accuracies, for model_metrics.extra."""
        return {f"{name}_accuracy": (c[0] / c[1] if c[1] else None)
                for name, c in (("train", self.counts[True]), ("val", self.counts[False]))}

    def transfer_batch_to_device(self, batch: VolatilityBatch, device: torch.device,
                                 dataloader_idx: int) -> VolatilityBatch:
        return VolatilityBatch(batch.x.to(device), batch.stable.to(device), batch.keys)


class VolatilityKind:
    """``chesslab train volatility``: see the module."""

    config_cls = VolatilityConfig

    def __init__(self) -> None:
        self.lake: Lake | None = None

    def data(self, lake: Lake, config: VolatilityConfig, folder: Path) -> KindData:
        """Both splits streamed from the views (``folder``, the version folder, holds no
        snapshot for this kind), and what model_datasets records."""
        self.lake = lake
        engine_id = choose_engine(lake, config)
        parameters = {"engine_id": engine_id, "beta": config.beta,
                      "validation_permille": config.validation_permille,
                      "max_positions": config.max_positions or NO_LIMIT}
        summary = dataset_summary(lake, parameters)
        sizes = {v: int(summary[v]["positions"]) if v in summary else 0 for v in (False, True)}
        if not all(sizes.values()):
            raise DatasetError(
                f"{QUERY}: engine {engine_id} gives {sizes[False]} training and {sizes[True]} "
                "validation positions; both splits need positions (label more games or raise "
                "--validation-percent)")
        streams = [VolatilityStream(SplitQuery(str(lake.home), QUERY, parameters, validation),
                                    config.batch_size, config.read_batch,
                                    config.inputs == "value")
                   for validation in (False, True)]
        loaders = [torch.utils.data.DataLoader(s, batch_size=None) for s in streams]
        keys_hash = int(summary[False]["keys_hash"]) ^ int(summary[True]["keys_hash"])
        return KindData(loaders[0], loaders[1], {
            "view": VIEW, "query": QUERY, "parameters": parameters_json(parameters),
            "label_engine_id": engine_id, "label_depths": [5, 6, 7],
            "table_versions": json.dumps(table_versions(lake)),
            "train_rows": sizes[False], "validation_rows": sizes[True],
            "position_keys_hash": f"{keys_hash:016x}"})

    def module(self, config: VolatilityConfig) -> VolatilityModule:
        return VolatilityModule(config)

    def export(self, module: VolatilityModule, folder: Path, data: KindData,
               config: VolatilityConfig) -> Export:
        """Write the net, evaluate the written net on the validation split, store the figures
        and write the net again with its chosen threshold."""
        assert self.lake is not None, "data() runs before export()"
        net = module.net.to("cpu").eval()
        meta = {"format": FORMAT, "version": 1, "arch": config.arch, "width": config.hidden,
                "inputs": INPUT_SETS[config.inputs], "input_set": config.inputs,
                "delta_scale": DELTA_SCALE, "beta": config.beta,
                "target_fpr": config.target_fpr, "threshold": 0.5}
        arrays = export_arrays(net)
        path = folder / ARTIFACT
        save_npz({"meta": np.array(json.dumps(meta)), **arrays}, path)
        batches = list(data.validation.dataset)
        x = torch.cat([b.x for b in batches])
        stable = torch.cat([b.stable for b in batches]).numpy().astype(bool)
        keys = np.concatenate([b.keys for b in batches])
        probability = load_model(str(path)).predict(x.numpy())
        with torch.no_grad():
            gap = float(np.abs(torch.sigmoid(net(x)).double().numpy() - probability).max())
        roc = roc_curve(probability, stable)
        chosen = at_fpr(roc, config.target_fpr)
        meta["threshold"] = chosen.threshold
        save_npz({"meta": np.array(json.dumps(meta)), **arrays}, path)
        model = f"{folder.parent.name}@{folder.name}"   # models/<kind>/<version>
        summary = record_evaluation(self.lake, model, probability, stable, keys, roc, config)
        if (problem := no_better_than_chance(roc.auc, len(stable))) is not None:
            log.warning("%s: %s", model, problem)     # as train nnue warns of a saturated net
        return Export(path, {"format": f"{FORMAT} v1", "torch_vs_numpy_max_gap": gap,
                             **summary})


def record_evaluation(lake: Lake, model: str, probability: np.ndarray, stable: np.ndarray,
                      keys: np.ndarray, roc: Roc, config: VolatilityConfig) -> dict[str, Any]:
    """The volatility_* tables of ``model`` from its validation predictions."""
    recorded = registry.now()
    chosen = at_fpr(roc, config.target_fpr)
    stable_share = float(stable.mean())
    summary = {"positions": len(stable), "stable_share": stable_share,
               "baseline_accuracy": 1 - stable_share,
               "accuracy": float(((probability > 0.5) == stable).mean()),
               "roc_auc": roc.auc, "beta": config.beta, "target_fpr": config.target_fpr,
               "threshold": chosen.threshold, "flagged_share": chosen.flagged_share}
    lake.write("volatility_evaluations", [{"model_id": model, **summary,
                                           "recorded_at": recorded}])
    lake.write("volatility_roc", [
        {"model_id": model, "point": i, "threshold": float(roc.thresholds[j]),
         "fpr": float(roc.fpr[j]), "tpr": float(roc.tpr[j]), "recorded_at": recorded}
        for i, j in enumerate(thin(roc))])
    gains = gains_curve(probability, stable)
    lake.write("volatility_gains", [
        {"model_id": model, "percent": p, "stable_found": float(gains[p]), "random": p / 100,
         "perfect": min(1.0, p / 100 / stable_share), "recorded_at": recorded}
        for p in range(101)])
    lake.write("volatility_fpr_table", [
        {"model_id": model, **vars(row), "paper_tpr": paper_tpr, "paper_threshold": paper_t,
         "recorded_at": recorded}
        for row, (_, paper_tpr, paper_t) in zip(fpr_table(roc), PAPER_TABLE_4_1, strict=True)])
    lake.write("volatility_predictions", pa.table({
        "model_id": [model] * len(keys), "position_key": pa.array(keys, pa.uint64()),
        "probability": probability, "stable": stable, "recorded_at": [recorded] * len(keys)}))
    return summary


__all__ = ["ConvNet", "DenseNet", "VolatilityKind", "VolatilityModel", "VolatilityModule"]
