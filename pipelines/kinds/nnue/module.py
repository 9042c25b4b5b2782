"""NNUE (paper 002, Stockfish 12's HalfKP net; issue 38's perspective net 768 -> N x2 -> 1
with ``--arch psq768``): the kind ``chesslab train nnue`` runs.

The float models and the loss are in :mod:`pipelines.kinds.nnue.model` (the perspective net
in :mod:`pipelines.kinds.nnue.psq`), the data set and its stream in
:mod:`pipelines.kinds.nnue.data`, the quantised ``chesslab NNUE v1`` export with its
cross-check in :mod:`pipelines.kinds.nnue.export`; their names are re-exported here. Sizes
41024 -> 256x2 -> 32 -> 32 -> 1; the score in centipawns from the side to move's view is
``600 * y``. The export is the integer contract the engine evaluates (see
:func:`evaluate_quantised_batch`).
"""
from __future__ import annotations

import json
import logging
from pathlib import Path

import torch

from engines.nnue.reference import OUTPUT_CP
from pipelines.train.artifacts import load_npz, save_npz
from pipelines.train.dataset import (
    NO_LIMIT,
    DatasetError,
    SplitQuery,
    parameters_json,
    table_versions,
    write_snapshot,
)
from pipelines.train.trainer import Export, KindData, KindModule
from warehouse import Lake, connect
from warehouse.catalog import named_query, query

from .config import NnueConfig
from .data import (
    QUERY,
    SNAPSHOT,
    VIEW,
    NnueBatch,
    NnueStream,
    choose_label_source,
    dataset_summary,
    encode_split,
    keep_examples,
    noisy,
    remove_encoded,
    snapshot_parameters,
    snapshot_ranges,
)
from .export import (
    ExportError,
    cross_check,
    evaluate_quantised_batch,
    first_features,
    mean_layer_inputs,
    psq_reference_check,
    quantise,
    reference_check,
    saturated,
)
from .model import (
    ACCUMULATOR,
    FEATURES,
    HIDDEN,
    KING_BUCKETS,
    MAX_ACTIVE,
    MAX_HIDDEN_WEIGHT,
    META,
    PIECE_SQUARES,
    NnueNet,
    king_bucket_map,
    make_net,
    nnue_loss,
)
from .psq import PsqNet, quantise_psq

__all__ = [
    "ACCUMULATOR",
    "ExportError",
    "FEATURES",
    "HIDDEN",
    "KING_BUCKETS",
    "MAX_ACTIVE",
    "MAX_HIDDEN_WEIGHT",
    "META",
    "NnueBatch",
    "NnueNet",
    "NnueStream",
    "PIECE_SQUARES",
    "QUERY",
    "SNAPSHOT",
    "VIEW",
    "choose_label_source",
    "cross_check",
    "dataset_summary",
    "evaluate_quantised_batch",
    "first_features",
    "keep_examples",
    "king_bucket_map",
    "load_npz",
    "make_net",
    "mean_layer_inputs",
    "nnue_loss",
    "noisy",
    "psq_reference_check",
    "quantise",
    "reference_check",
    "save_npz",
    "snapshot_parameters",
    "snapshot_ranges",
]

log = logging.getLogger(__name__)



class NnueModule(KindModule):
    """Lightning module of the float model with paper 002's loss."""

    config: NnueConfig

    def __init__(self, config: NnueConfig) -> None:
        super().__init__(config)
        self.net = make_net(config)
        self.val_abs_cp = self.val_positions = 0.0

    def loss(self, batch: NnueBatch) -> torch.Tensor:
        return nnue_loss(self.net(batch.features), batch.score_cp, batch.result, self.config)

    def validation_step(self, batch: NnueBatch, batch_idx: int) -> torch.Tensor:
        y = self.net(batch.features)
        self.val_abs_cp += float(torch.abs(OUTPUT_CP * y - batch.score_cp).sum())
        self.val_positions += len(batch)
        loss = nnue_loss(y, batch.score_cp, batch.result, self.config)
        self.log("val_loss", loss, prog_bar=True, batch_size=len(batch))
        return loss

    def epoch_extra(self) -> dict[str, float]:
        """Validation mean absolute error in centipawns against the label."""
        mae = self.val_abs_cp / max(self.val_positions, 1)
        self.val_abs_cp = self.val_positions = 0.0
        return {"val_mae_cp": round(mae, 2)}

    def after_step(self) -> None:
        self.net.clip_weights()

    def transfer_batch_to_device(self, batch: NnueBatch, device: torch.device,
                                 dataloader_idx: int) -> NnueBatch:
        return NnueBatch(batch.features.to(device), batch.score_cp.to(device),
                         batch.result.to(device))



class NnueKind:
    """``chesslab train nnue``: data from the nnue_dataset query, the HalfKP net, the
    quantised export cross-checked against the float model."""

    config_cls = NnueConfig

    def data(self, lake: Lake, config: NnueConfig, folder: Path) -> KindData:
        """The run's snapshot of the data set (written once into ``folder``), both splits
        streamed from it, and what model_datasets records."""
        con = connect(lake)
        sources = query(con, named_query("nnue_label_sources")).to_pylist()
        engine_ids, depth = choose_label_source(sources, config)
        engine_id = ";".join(engine_ids)
        parameters = snapshot_parameters(config, engine_ids, depth)
        snapshot = folder / SNAPSHOT
        if not snapshot.is_file():
            write_snapshot(lake, "nnue_snapshot", parameters, snapshot,
                           keep_examples(config.quiet_only), config.read_batch,
                           snapshot_ranges(lake, engine_ids, depth))
        summary = dataset_summary(connect(lake, readable=[snapshot]), snapshot)
        if not summary.get(False) or not summary.get(True):
            raise DatasetError(
                f"{QUERY}: engine {engine_id} depth {depth} gives {summary.get(False, (0,))[0]} "
                f"training and {summary.get(True, (0,))[0]} validation positions; both splits "
                f"need positions (label more games or raise --validation-percent)")
        whole = {"snapshot": str(snapshot), "max_positions": NO_LIMIT}
        streams = [NnueStream(encode_split(SplitQuery(str(lake.home), QUERY, whole, validation),
                                           config.arch, folder, summary[validation][0],
                                           config.read_batch, config.encode_threads),
                              config.batch_size, config.max_positions, config.seed)
                   for validation in (False, True)]
        loaders = [torch.utils.data.DataLoader(s, batch_size=None) for s in streams]
        keys_hash = summary[False][1] ^ summary[True][1]  # xor over both (disjoint) splits
        return KindData(loaders[0], loaders[1], {
            "view": VIEW, "query": QUERY,
            "parameters": parameters_json({**parameters, "quiet_only": config.quiet_only}),
            "label_engine_id": engine_id, "label_depths": [depth],
            "table_versions": json.dumps(table_versions(lake)),
            "train_rows": summary[False][0], "validation_rows": summary[True][0],
            "position_keys_hash": f"{keys_hash:016x}"})

    def module(self, config: NnueConfig) -> NnueModule:
        return NnueModule(config)

    def export(self, module: NnueModule, folder: Path, data: KindData,
               config: NnueConfig) -> Export:
        # Bias correction from training positions; the cross-check reads validation first.
        calibration = first_features([data.train.dataset], config.check_positions)
        net = module.net
        arrays = quantise_psq(net, calibration) if isinstance(net, PsqNet) \
            else quantise(net, calibration)
        path = save_npz(arrays, folder / "nnue.npz")
        check = cross_check(module.net, load_npz(path),
                            [data.validation.dataset, data.train.dataset], config.check_positions)
        if (problem := saturated(check)) is not None:
            log.warning("%s: %s", folder, problem)
        remove_encoded(folder)
        return Export(path, {"format": "chesslab NNUE v1", "arch": config.arch,
                             "cross_check": check})

