"""The perspective net of issue 38: 768 -> N x2 -> 1 (bullet's first net), its float model,
the quantised ``psq768`` export and its exact integer evaluation in numpy.

Inputs are :func:`engines.nnue.features.psq_batch` rows (n, 2, 32): the side to move's view,
then the other side's, 768 padding. ``y = b + w_stm . act(a_stm) + w_other . act(a_other)``
with ``a = ft_bias + sum of the active rows`` and act the clipped ReLU ``clip(a, 0, 1)`` or
its square (screlu); centipawns ``600 * y`` as HalfKP's. The file's integer contract is in
:mod:`engines.nnue.netfile`.
"""
from __future__ import annotations

import json
from typing import Any

import numpy as np
import torch
from torch import nn

from engines.nnue.netfile import PSQ_FEATURES, PSQ_SCALE, psq_meta
from engines.nnue.reference import OUTPUT_CP, WEIGHT_SCALE

from . import sparse

PAD = PSQ_FEATURES
MAX_OUT_WEIGHT = 127 / WEIGHT_SCALE       # out_weight fits +-127 after * 64
#: Feature transformer weights and biases stay within this, so the bias plus any 32 active
#: rows stays inside int16 after * 255 (33 * 3.8 * 255 < 32,767).
MAX_FT_WEIGHT = 3.8


class ExportError(ValueError):
    """The net cannot be written in the integer format: names the layer and the value."""


class PsqNet(nn.Module):
    """The float model of the psq768 contract."""

    def __init__(self, hidden: int = 256, activation: str = "screlu",
                 sparse: bool = True) -> None:
        super().__init__()
        if activation not in ("crelu", "screlu"):
            raise ValueError(f"activation: crelu or screlu, got {activation!r}")
        self.hidden, self.activation, self.sparse = hidden, activation, sparse
        self.ft = nn.EmbeddingBag(PSQ_FEATURES + 1, hidden, mode="sum", padding_idx=PAD)
        self.ft_bias = nn.Parameter(torch.full((hidden,), 0.3))
        self.out = nn.Linear(2 * hidden, 1)
        with torch.no_grad():
            self.ft.weight.uniform_(-0.05, 0.05)
            self.ft.weight[PAD].zero_()
            self.out.weight.uniform_(-0.1, 0.1)
            self.out.bias.zero_()

    def hidden_layer(self, features: torch.Tensor) -> torch.Tensor:
        """The activations (n, 2 * hidden) of ``features`` (n, 2, 32), side to move first."""
        n = features.shape[0]
        acc = self.ft(features.reshape(n * 2, -1).long()).reshape(n, 2 * self.hidden)
        v = torch.clamp(acc + self.ft_bias.repeat(2), 0, 1)
        return v * v if self.activation == "screlu" else v

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """y (n,) of ``features`` (n, 2, 32): on the CPU with ``sparse`` the fused kernel of
        :func:`pipelines.kinds.nnue.sparse.perspective_net` (the active rows only), else
        PyTorch's dense ops (a GPU's path): the same function."""
        if self.sparse and sparse.usable(self.ft.weight, features):
            return sparse.perspective_net(features, self.ft.weight, self.ft_bias,
                                          self.out.weight, PAD, self.activation == "screlu"
                                          ) + self.out.bias
        return self.out(self.hidden_layer(features)).squeeze(1)

    def clip_weights(self) -> None:
        """Keep every weight inside what the integer format holds (after each step)."""
        with torch.no_grad():
            self.ft.weight.clamp_(-MAX_FT_WEIGHT, MAX_FT_WEIGHT)
            self.ft_bias.clamp_(-MAX_FT_WEIGHT, MAX_FT_WEIGHT)
            self.out.weight.clamp_(-MAX_OUT_WEIGHT, MAX_OUT_WEIGHT)

    def centipawns(self, features: torch.Tensor) -> torch.Tensor:
        return OUTPUT_CP * self(features)


def quantise_psq(net: PsqNet, calibration: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The arrays of a psq768 file (with ``meta``), rounded and range-checked. With
    ``calibration`` (feature rows of training positions) the output bias absorbs the output
    weights' rounding error at the mean activation, and half a step so the contract's final
    floor rounds to nearest (as HalfKP's export does)."""
    def q(values: np.ndarray, scale: float, dtype: Any, name: str, limit: int) -> np.ndarray:
        scaled = np.round(values * scale)
        if scaled.size and np.abs(scaled).max() > limit:
            raise ExportError(f"{name}: values up to {np.abs(scaled).max():.0f} do not fit "
                              f"+-{limit}")
        return scaled.astype(dtype)

    def numpy(t: torch.Tensor) -> np.ndarray:
        return t.detach().cpu().double().numpy()

    ft = q(numpy(net.ft.weight)[:PSQ_FEATURES], PSQ_SCALE, np.int16, "ft_weight", 32767)
    out = q(numpy(net.out.weight), WEIGHT_SCALE, np.int16, "out_weight", 127)
    bias = float(numpy(net.out.bias)[0]) + 0.5 / OUTPUT_CP
    if calibration is not None and len(calibration):
        mean = mean_activation(net, calibration)
        bias -= float((out[0] / WEIGHT_SCALE - numpy(net.out.weight)[0]) @ mean)
    arrays = {"ft_weight": ft,
              "ft_bias": q(numpy(net.ft_bias), PSQ_SCALE, np.int16, "ft_bias", 32767),
              "out_weight": out,
              "out_bias": q(np.array([bias]), PSQ_SCALE * WEIGHT_SCALE, np.int32, "out_bias",
                            2**31 - 1)}
    return {"meta": np.array(json.dumps(psq_meta(net.hidden, net.activation))), **arrays}


def mean_activation(net: PsqNet, features: np.ndarray) -> np.ndarray:
    total = np.zeros(2 * net.hidden)
    with torch.no_grad():
        for start in range(0, len(features), 4096):
            chunk = torch.from_numpy(features[start:start + 4096].astype(np.int64))
            total += net.hidden_layer(chunk).double().sum(dim=0).cpu().numpy()
    return total / len(features)


def evaluate_psq_batch(net: dict[str, np.ndarray], features: np.ndarray,
                       chunk: int = 1024) -> np.ndarray:
    """The contract's exact integer evaluation of many positions (numpy int64), centipawns
    for the side to move; ``features`` (n, 2, 32) padded with 768; the activation is the
    file's ``meta``'s."""
    activation = json.loads(str(net["meta"]))["activation"]
    rows = np.concatenate([net["ft_weight"].astype(np.int64),
                           np.zeros((1, net["ft_weight"].shape[1]), np.int64)])
    weights = net["out_weight"].astype(np.int64)[0]
    parts = []
    for start in range(0, len(features), chunk):
        f = features[start:start + chunk]
        acc = rows[f].sum(axis=2) + net["ft_bias"].astype(np.int64)    # (m, 2, hidden)
        v = np.clip(acc, 0, PSQ_SCALE).reshape(len(f), -1)
        total = (v * v if activation == "screlu" else v) @ weights
        if activation == "screlu":
            total = total // PSQ_SCALE
        parts.append((total + int(net["out_bias"][0])) * OUTPUT_CP
                     // (PSQ_SCALE * WEIGHT_SCALE))
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)
