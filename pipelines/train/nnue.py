"""NNUE (paper 002, Stockfish 12's HalfKP net): the float model of the shared contract, its
data set, loss, and the quantised ``chesslab NNUE v1`` export with its cross-check.

Sizes 41024 -> 256x2 -> 32 -> 32 -> 1; the score in centipawns from the side to move's view
is ``600 * y``. The export is the integer contract the engine evaluates (see
:func:`evaluate_quantised_batch`).
"""
from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess
import numpy as np
import pyarrow as pa
import torch
from torch import nn

from engines.nnue.features import halfkp_batch, psq_batch
from engines.nnue.reference import (
    FT_SCALE,
    HALFKP_FEATURES,
    OUTPUT_CP,
    WEIGHT_SCALE,
    evaluate_quantised,
)
from pipelines.formats.fens import UNREAD, board_flags
from pipelines.train.config import NnueConfig
from pipelines.train.dataset import (
    NO_LIMIT,
    DatasetError,
    SplitQuery,
    parameters_json,
    prefetched,
    stream_batches,
    table_versions,
    write_snapshot,
)
from pipelines.train.psq import PsqNet, evaluate_psq_batch, quantise_psq
from pipelines.train.trainer import Export, KindData, KindModule
from warehouse import Lake, connect
from warehouse.catalog import named_query, query

log = logging.getLogger(__name__)

FEATURES = HALFKP_FEATURES
ACCUMULATOR = 256
HIDDEN = 32
MAX_ACTIVE = 30
PIECE_SQUARES = 641          # HalfKP feature k * 641 + p: p is the piece-square part (0 pads)
MAX_HIDDEN_WEIGHT = 127 / 64   # W1, W2 are kept within +-this so they fit int8 after * 64
META = {"format": "chesslab-nnue", "version": 1, "features": "halfkp",
        "sizes": [FEATURES, ACCUMULATOR, HIDDEN, HIDDEN, 1], "ft_scale": FT_SCALE,
        "weight_scale": WEIGHT_SCALE, "output_cp": OUTPUT_CP}
QUERY = "nnue_dataset"
VIEW = "nnue_examples"
SNAPSHOT = "dataset.parquet"


#: ``king_buckets`` -> how a perspective's oriented king square (file f, rank r from its own
#: back rank) picks its bucket: wings (files a-d, e-h), then back rank or not, then pairs of
#: files, then ranks 1, 2, 3 and beyond; 64 is every square (the real HalfKP columns again).
KING_BUCKETS = {
    1: lambda f, r: 0,
    2: lambda f, r: f // 4,
    4: lambda f, r: f // 4 + 2 * (r > 0),
    8: lambda f, r: f // 2 + 4 * (r > 0),
    16: lambda f, r: f // 2 + 4 * min(r, 3),
    64: lambda f, r: f + 8 * r,
}


def king_bucket_map(buckets: int) -> np.ndarray:
    """Bucket of each oriented king square 0..63 (int64), for ``king_buckets``."""
    if buckets not in KING_BUCKETS:
        raise ValueError(f"king_buckets: one of {sorted(KING_BUCKETS)}, got {buckets!r}")
    return np.array([KING_BUCKETS[buckets](sq % 8, sq // 8) for sq in range(64)], dtype=np.int64)


class ExportError(ValueError):
    """The net cannot be written in the integer format: names the layer and the value."""


class NnueNet(nn.Module):
    """The float model of the contract: shared feature transformer for both perspectives,
    clipped ReLUs in [0, 1], output ``y`` with ``600 * y`` centipawns (side to move).

    ``factorize`` adds nnue-pytorch's virtual features: each HalfKP feature ``k * 641 + p``
    also activates column ``p`` of a 641-column table shared by all king squares, so what a
    piece on a square is worth whatever the king's square is learnt from every position.
    The shared table then starts random and the real columns at zero: they learn what the
    king's square adds, and a king square the data rarely shows keeps the shared values, not
    noise. Without ``king_features`` the real columns stay zero (a piece-square net: 641
    columns to learn, not 41024). ``king_buckets`` > 1 adds a table of 641 columns per
    bucket of the own king's square (:func:`king_bucket_map`), starting at zero: what a piece
    on a square is worth with the king on that wing or off its back rank, learnt from every
    position with the king there, where 41024 real columns would need each king square's
    own. :meth:`ft_weight` folds the tables into the real columns: the exported net has the
    same form (and the engine, seeing the same columns under every king square of a bucket,
    rebuilds only when the king changes bucket)."""

    def __init__(self, factorize: bool = False, king_features: bool = True,
                 king_buckets: int = 1) -> None:
        super().__init__()
        if not (factorize or king_features):
            raise ValueError("an NNUE without king features needs the factoriser")
        self.ft = nn.EmbeddingBag(FEATURES, ACCUMULATOR, mode="sum", padding_idx=0)
        self.factor = nn.EmbeddingBag(PIECE_SQUARES, ACCUMULATOR, mode="sum", padding_idx=0) \
            if factorize else None
        self.bucket_of_king: torch.Tensor
        self.register_buffer("bucket_of_king", torch.from_numpy(king_bucket_map(king_buckets)),
                             persistent=False)
        self.buckets = nn.EmbeddingBag(king_buckets * PIECE_SQUARES, ACCUMULATOR, mode="sum",
                                       padding_idx=0) if king_buckets > 1 else None
        self.ft_bias = nn.Parameter(torch.full((ACCUMULATOR,), 0.5))
        self.l1 = nn.Linear(2 * ACCUMULATOR, HIDDEN)
        self.l2 = nn.Linear(HIDDEN, HIDDEN)
        self.out = nn.Linear(HIDDEN, 1)
        with torch.no_grad():  # accumulators start inside (0, 1): no dead units at step 0
            self.ft.weight.uniform_(-0.05, 0.05)
            if self.factor is not None:
                self.factor.weight.copy_(self.ft.weight[:PIECE_SQUARES])
                self.factor.weight[0].zero_()
                self.ft.weight.zero_()
            self.ft.weight[0].zero_()
            if self.buckets is not None:
                self.buckets.weight.zero_()
        self.ft.weight.requires_grad_(king_features)

    @classmethod
    def from_config(cls, config: NnueConfig) -> NnueNet:
        return cls(config.factorize, config.king_features, config.king_buckets)

    def bucket_index(self, features: torch.Tensor) -> torch.Tensor:
        """HalfKP indices ``k * 641 + p`` -> bucket-table rows ``bucket(k) * 641 + p`` (0
        pads)."""
        p = features % PIECE_SQUARES
        rows = self.bucket_of_king[features // PIECE_SQUARES] * PIECE_SQUARES + p
        return torch.where(p == 0, torch.zeros_like(rows), rows)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """``features`` (n, 2, 30) indices -> y (n,)."""
        return self.out(self.layer_inputs(features)[-1]).squeeze(1)

    def layer_inputs(self, features: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """The inputs of l1, l2 and out (each in [0, 1]) for ``features`` (n, 2, 30)."""
        n = features.shape[0]
        flat = features.reshape(n * 2, MAX_ACTIVE)
        acc = self.ft(flat)
        if self.factor is not None:
            acc = acc + self.factor(flat % PIECE_SQUARES)
        if self.buckets is not None:
            acc = acc + self.buckets(self.bucket_index(flat))
        acc = acc.reshape(n, 2, ACCUMULATOR)
        x0 = torch.clamp(acc + self.ft_bias, 0, 1).reshape(n, 2 * ACCUMULATOR)
        x1 = torch.clamp(self.l1(x0), 0, 1)
        x2 = torch.clamp(self.l2(x1), 0, 1)
        return x0, x1, x2

    def ft_weight(self) -> torch.Tensor:
        """The feature transformer's 41024 columns with the factoriser and the king buckets'
        tables folded in."""
        if self.factor is None and self.buckets is None:
            return self.ft.weight
        every = torch.arange(FEATURES, device=self.ft.weight.device)
        folded = self.ft.weight
        if self.factor is not None:
            folded = folded + self.factor.weight[every % PIECE_SQUARES]
        if self.buckets is not None:
            folded = folded + self.buckets.weight[self.bucket_index(every)]
        folded[::PIECE_SQUARES] = 0  # k * 641 is never active (row 0 pads)
        return folded

    def clip_weights(self) -> None:
        """Keep W1, W2 within +-127/64 (after each optimiser step) so they fit int8."""
        with torch.no_grad():
            self.l1.weight.clamp_(-MAX_HIDDEN_WEIGHT, MAX_HIDDEN_WEIGHT)
            self.l2.weight.clamp_(-MAX_HIDDEN_WEIGHT, MAX_HIDDEN_WEIGHT)

    def centipawns(self, features: torch.Tensor) -> torch.Tensor:
        return OUTPUT_CP * self(features)


def nnue_loss(y: torch.Tensor, score_cp: torch.Tensor, result: torch.Tensor,
              config: NnueConfig) -> torch.Tensor:
    """Paper 002's MSE of sigmoid(cp / 410) between prediction and label; with ``eval_lambda``
    < 1, nnue-pytorch's blend of the label's win probability with the game result (positions
    without a known result keep the pure label)."""
    predicted = torch.sigmoid(OUTPUT_CP * y / config.score_scale)
    target = torch.sigmoid(score_cp / config.score_scale)
    if config.eval_lambda < 1:
        blended = config.eval_lambda * target + (1 - config.eval_lambda) * result
        target = torch.where(torch.isnan(result), target, blended)
    return torch.mean((predicted - target) ** 2)


@dataclass
class NnueBatch:
    """One training batch: HalfKP indices, label scores (cp, side to move), game results."""

    features: torch.Tensor   # (n, 2, 30) int64
    score_cp: torch.Tensor   # (n,) float32
    result: torch.Tensor     # (n,) float32, nan when unknown

    def __len__(self) -> int:
        return int(self.score_cp.shape[0])

    def slice(self, start: int, stop: int) -> NnueBatch:
        return NnueBatch(self.features[start:stop], self.score_cp[start:stop],
                         self.result[start:stop])


class NnueStream(torch.utils.data.IterableDataset):
    """One split streamed from DuckDB in record batches, cut into training batches whose
    HalfKP indices are computed in a background thread while the model trains on the previous
    ones. ``set_epoch`` picks the epoch's shuffle."""

    def __init__(self, split: SplitQuery, batch_size: int, read_batch: int,
                 arch: str = "halfkp") -> None:
        self.split, self.batch_size, self.read_batch = split, batch_size, read_batch
        self.encoder = psq_batch if arch == "psq768" else halfkp_batch
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __iter__(self) -> Iterator[NnueBatch]:
        return prefetched(self.batches())

    def batches(self) -> Iterator[NnueBatch]:
        """Training batches in the epoch's order. Each is encoded on its own (a record batch
        is cut into training-batch slices first), so the first is ready as soon as the query
        gives rows and :func:`prefetched` overlaps the encoding of the rest with training."""
        carry: NnueBatch | None = None
        for record_batch in stream_batches(self.split, self.epoch, self.read_batch):
            start = 0
            if carry is not None:  # complete the rows left over from the last record batch
                start = self.batch_size - len(carry)
                carry = concat(carry, self.encode(record_batch.slice(0, start)))
                if len(carry) < self.batch_size:
                    continue
                yield carry
                carry = None
            for offset in range(start, record_batch.num_rows, self.batch_size):
                rows = self.encode(record_batch.slice(offset, self.batch_size))
                if len(rows) == self.batch_size:
                    yield rows
                else:
                    carry = rows
        if carry is not None:
            yield carry

    def encode(self, record_batch: pa.RecordBatch) -> NnueBatch:
        fens = record_batch.column("fen").to_pylist()
        return NnueBatch(
            torch.from_numpy(self.encoder(fens).astype(np.int64)),
            torch.from_numpy(record_batch.column("score_cp").to_numpy(zero_copy_only=False)
                             .astype(np.float32)),
            torch.from_numpy(record_batch.column("result").to_numpy(zero_copy_only=False)
                             .astype(np.float32)))


def keep_examples(quiet_only: bool) -> Callable[[pa.RecordBatch], pa.RecordBatch]:
    """The snapshot's row filter: positions in check among those whose check status the view
    could not tell go; with ``quiet_only``, so do positions whose label's best move is a
    capture or a promotion (the engine evaluates quiet positions, after quiescence). Both are
    read from the boards in compiled code, a record batch at a time (python-chess reads the
    rare FEN the core cannot: a Chess960 castling field)."""
    def keep(record_batch: pa.RecordBatch) -> pa.RecordBatch:
        fens = record_batch.column("fen")
        moves = record_batch.column("best_move") if quiet_only else None
        in_check, captures = board_flags(fens, moves)
        for row in np.flatnonzero(in_check == UNREAD).tolist():
            board = chess.Board(fens[row].as_py())
            move: str = (moves[row].as_py() or "") if moves is not None else ""
            in_check[row] = board.is_check()
            captures[row] = bool(move) and (len(move) == 5 or board.is_capture(
                chess.Move.from_uci(move)))
        unknown = record_batch.column("in_check").is_null().to_numpy(zero_copy_only=False)
        drop = (unknown & in_check.astype(bool)) | captures.astype(bool)
        return record_batch.filter(pa.array(~drop)) if drop.any() else record_batch
    return keep


def noisy(fen: str, uci: str) -> bool:
    """Whether UCI move ``uci`` captures (en passant included) or promotes in ``fen`` (one
    position; :func:`keep_examples` reads a whole batch with ``board_flags``)."""
    _, flags = board_flags(pa.array([fen]), pa.array([uci]))
    return bool(flags[0])


def concat(first: NnueBatch, second: NnueBatch) -> NnueBatch:
    return NnueBatch(*(torch.cat([getattr(first, f), getattr(second, f)])
                       for f in ("features", "score_cp", "result")))


def snapshot_parameters(config: NnueConfig, engine_ids: tuple[str, ...],
                        depth: int) -> dict[str, Any]:
    return {"engine_ids": list(engine_ids), "depth": depth,
            "validation_permille": config.validation_permille}


def choose_label_source(sources: list[dict[str, Any]],
                        config: NnueConfig) -> tuple[tuple[str, ...], int]:
    """The label engines and depth to train on: the config's engines (all of them must have
    labels at the depth: the config's, else the deepest they share), else the engine with the
    most examples at its deepest depth. DatasetError naming what is missing otherwise."""
    if config.engine_id is None:
        if config.depth is not None:
            sources = [s for s in sources if s["depth"] == config.depth]
        if not sources:
            raise DatasetError(
                f"no {VIEW} rows for engine any at depth {config.depth or 'any'}: label "
                f"positions first (chesslab label)")
        return (str(sources[0]["engine_id"]),), int(sources[0]["depth"])
    depths = [{int(s["depth"]) for s in sources if s["engine_id"] == engine}
              for engine in config.engine_id]
    for engine, found in zip(config.engine_id, depths, strict=True):
        if not found or (config.depth is not None and config.depth not in found):
            raise DatasetError(
                f"no {VIEW} rows for engine {engine} at depth {config.depth or 'any'}: label "
                f"positions first (chesslab label)")
    shared = set.intersection(*depths)
    if not shared:
        raise DatasetError(f"{VIEW}: engines {', '.join(config.engine_id)} share no label "
                           f"depth (give --depth)")
    return config.engine_id, config.depth if config.depth is not None else max(shared)


# --- export ---------------------------------------------------------------------------------

def quantise(net: NnueNet, calibration: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The arrays of ``chesslab NNUE v1`` from the float model (rounded, range-checked).

    With ``calibration`` (HalfKP features (n, 2, 30) of training positions) each dense
    layer's bias also absorbs its weights' rounding error at the layer's mean input (bias
    correction, Nagel et al. 2019) and half a step, so the contract's floor divisions round
    to nearest. Rounding W1 to 1/64 alone moves a net's scores by about 30 cp on average:
    its weights are mostly below 0.05, a few steps of 1/64; this leaves about 10."""
    def q(tensor: torch.Tensor | np.ndarray, scale: float, dtype: Any, name: str) -> np.ndarray:
        values = tensor.detach().cpu().double().numpy() if isinstance(tensor, torch.Tensor) \
            else tensor
        values = np.round(values * scale)
        info = np.iinfo(dtype)
        if values.size and (values.min() < info.min or values.max() > info.max):
            raise ExportError(f"{name}: values {values.min():.0f}..{values.max():.0f} do not "
                              f"fit {np.dtype(dtype).name}")
        return values.astype(dtype)

    ft_weight = q(net.ft_weight(), FT_SCALE, np.int16, "ft_weight")
    ft_weight[0] = 0  # the padding index is never active
    both = FT_SCALE * WEIGHT_SCALE
    weights = {layer: q(getattr(net, layer).weight, WEIGHT_SCALE,
                        np.int16 if layer == "out" else np.int8, f"{layer}_weight")
               for layer in ("l1", "l2", "out")}
    biases = {layer: getattr(net, layer).bias.detach().cpu().double().numpy()
              for layer in ("l1", "l2", "out")}
    if calibration is not None and len(calibration):
        inputs = mean_layer_inputs(net, calibration)   # in the contract's 0..127 units
        for layer in ("l1", "l2", "out"):
            float_weight = getattr(net, layer).weight.detach().cpu().double().numpy()
            error = weights[layer] / WEIGHT_SCALE - float_weight     # per weight, in units
            # floor(x / 64) then rounds to nearest; the output's floor(out * 600 / both) too.
            half = 0.5 / OUTPUT_CP if layer == "out" else 0.5 / FT_SCALE
            biases[layer] = biases[layer] - error @ inputs[layer] / FT_SCALE + half
    return {
        "meta": np.array(json.dumps(META)),
        "ft_weight": ft_weight,
        "ft_bias": q(net.ft_bias, FT_SCALE, np.int16, "ft_bias"),
        "l1_weight": weights["l1"],
        "l1_bias": q(biases["l1"], both, np.int32, "l1_bias"),
        "l2_weight": weights["l2"],
        "l2_bias": q(biases["l2"], both, np.int32, "l2_bias"),
        "out_weight": weights["out"],
        "out_bias": q(biases["out"], both, np.int32, "out_bias"),
    }


def mean_layer_inputs(net: NnueNet, features: np.ndarray) -> dict[str, np.ndarray]:
    """The float model's mean input of each dense layer over ``features``, in 0..127."""
    layers = ("l1", "l2", "out")
    sums: dict[str, np.ndarray] = {}
    with torch.no_grad():
        for start in range(0, len(features), 4096):
            chunk = torch.from_numpy(features[start:start + 4096].astype(np.int64))
            for layer, x in zip(layers, net.layer_inputs(chunk), strict=True):
                sums[layer] = sums.get(layer, 0) + x.double().sum(dim=0).cpu().numpy()
    return {layer: FT_SCALE * total / len(features) for layer, total in sums.items()}


def save_npz(arrays: dict[str, np.ndarray], path: Path) -> Path:
    """Write the arrays under a temporary name and rename: never a half-written net."""
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as handle:
        np.savez(handle, **arrays)  # type: ignore[arg-type]
    tmp.replace(path)
    return path


def load_npz(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return {name: data[name] for name in data.files}


def evaluate_quantised_batch(net: dict[str, np.ndarray], features: np.ndarray,
                             chunk: int = 1024) -> np.ndarray:
    """The contract's exact integer evaluation of many positions at once (numpy, int64):
    centipawns from the side to move's view. ``features`` (n, 2, 30), padding 0."""
    return np.concatenate([_evaluate_chunk(net, features[i:i + chunk])
                           for i in range(0, len(features), chunk)] or [np.zeros(0, np.int64)])


def _evaluate_chunk(net: dict[str, np.ndarray], features: np.ndarray) -> np.ndarray:
    ft = net["ft_weight"].astype(np.int64)
    active = (features != 0)[..., None]
    acc = (ft[features] * active).sum(axis=2) + net["ft_bias"].astype(np.int64)
    q0 = np.clip(acc.reshape(len(features), 2 * ACCUMULATOR), 0, 127)
    q1 = np.clip(_affine(net, "l1", q0) // WEIGHT_SCALE, 0, 127)
    q2 = np.clip(_affine(net, "l2", q1) // WEIGHT_SCALE, 0, 127)
    out = _affine(net, "out", q2)[:, 0]
    return (out * OUTPUT_CP) // (FT_SCALE * WEIGHT_SCALE)


def _affine(net: dict[str, np.ndarray], layer: str, x: np.ndarray) -> np.ndarray:
    return x @ net[f"{layer}_weight"].astype(np.int64).T + net[f"{layer}_bias"].astype(np.int64)


# --- the kind: what the generic trainer needs ----------------------------------------------

def make_net(config: NnueConfig) -> NnueNet | PsqNet:
    """The float model of the config's architecture."""
    if config.arch == "psq768":
        return PsqNet(config.hidden, config.activation)
    return NnueNet.from_config(config)


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

    name = "nnue"
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
                           keep_examples(config.quiet_only), config.read_batch)
        summary = dataset_summary(connect(lake, readable=[snapshot]), snapshot)
        if not summary.get(False) or not summary.get(True):
            raise DatasetError(
                f"{QUERY}: engine {engine_id} depth {depth} gives {summary.get(False, (0,))[0]} "
                f"training and {summary.get(True, (0,))[0]} validation positions; both splits "
                f"need positions (label more games or raise --validation-percent)")
        epoch_parameters = {"snapshot": str(snapshot),
                            "max_positions": config.max_positions or NO_LIMIT}
        streams = [NnueStream(SplitQuery(str(lake.home), QUERY, epoch_parameters, validation),
                              config.batch_size, config.read_batch, config.arch)
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
        return Export(path, {"format": "chesslab NNUE v1", "arch": config.arch,
                             "cross_check": cross_check(
                                 module.net, load_npz(path),
                                 [data.validation.dataset, data.train.dataset],
                                 config.check_positions)})


def dataset_summary(con: Any, snapshot: Path) -> dict[bool, tuple[int, int]]:
    """{validation: (positions, keys hash)} of a run's snapshot (before max_positions)."""
    rows = query(con, named_query("nnue_dataset_summary"), {"snapshot": str(snapshot)}
                 ).to_pylist()
    return {bool(r["validation"]): (int(r["positions"]), int(r["keys_hash"])) for r in rows}


def cross_check(net: NnueNet | PsqNet, arrays: dict[str, np.ndarray],
                streams: list[NnueStream], positions: int) -> dict[str, Any]:
    """Float model vs the exported integer net on up to ``positions`` warehouse positions
    (validation first, then training), mean and max |cp| gaps; the batch evaluation vs the
    engine side's one-position reference on the first of them."""
    features = first_features(streams, positions)
    with torch.no_grad():
        net_cpu = net.to("cpu").eval()
        float_cp = net_cpu.centipawns(torch.from_numpy(features.astype(np.int64))).double()
    psq = isinstance(net, PsqNet)
    quantised = evaluate_psq_batch(arrays, features) if psq \
        else evaluate_quantised_batch(arrays, features)
    gaps = np.abs(float_cp.numpy() - quantised)
    report = {"positions": int(len(features)), "float_vs_quantised_mean_cp": float(gaps.mean()),
              "float_vs_quantised_max_cp": float(gaps.max())}
    return report | (psq_reference_check(arrays, features, quantised) if psq
                     else reference_check(arrays, features, quantised))


def first_features(streams: list[NnueStream], positions: int) -> np.ndarray:
    taken: list[np.ndarray] = []
    for batch in itertools.chain.from_iterable(streams):
        taken.append(batch.features.numpy())
        if sum(map(len, taken)) >= positions:
            break
    return np.concatenate(taken)[:positions].astype(np.int32)


def reference_check(arrays: dict[str, np.ndarray], features: np.ndarray,
                    quantised: np.ndarray, positions: int = 100) -> dict[str, Any]:
    """Max gap between the batch evaluation and ``engines.nnue.reference.evaluate_quantised``
    (the engine side's one-position reference, ~20 ms each) on the first positions."""
    reference = np.array([
        evaluate_quantised(arrays, [i for i in row[0] if i], [i for i in row[1] if i])
        for row in features[:positions]])
    return {"reference_positions": int(len(reference)),
            "quantised_vs_reference_max_cp": float(np.abs(reference - quantised[:positions]).max())}


def psq_reference_check(arrays: dict[str, np.ndarray], features: np.ndarray,
                        quantised: np.ndarray, positions: int = 100) -> dict[str, Any]:
    """Max gap between the batch evaluation and the engine side's one-position reference
    (``engines.nnue.reference.evaluate_psq_quantised``) on the first positions."""
    from engines.nnue.reference import evaluate_psq_quantised

    activation = json.loads(str(arrays["meta"]))["activation"]
    reference = np.array([
        evaluate_psq_quantised(arrays, activation, [i for i in row[0] if i != 768],
                               [i for i in row[1] if i != 768])
        for row in features[:positions]])
    return {"reference_positions": int(len(reference)),
            "quantised_vs_reference_max_cp": float(np.abs(reference - quantised[:positions]).max())}
