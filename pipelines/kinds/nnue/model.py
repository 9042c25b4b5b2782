"""The NNUE models (paper 002's HalfKP net, and issue 38's perspective net by
:func:`make_net`) and paper 002's loss. Split from ``pipelines.kinds.nnue.module``, which re-exports
these names.
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

from engines.nnue.reference import (
    FT_SCALE,
    HALFKP_FEATURES,
    OUTPUT_CP,
    WEIGHT_SCALE,
)

from . import sparse
from .config import NnueConfig
from .psq import PsqNet

FEATURES = HALFKP_FEATURES

ACCUMULATOR = 256

HIDDEN = 32

MAX_ACTIVE = 30

PIECE_SQUARES = 641          # HalfKP feature k * 641 + p: p is the piece-square part (0 pads)

MAX_HIDDEN_WEIGHT = 127 / 64   # W1, W2 are kept within +-this so they fit int8 after * 64

META = {"format": "chesslab-nnue", "version": 1, "features": "halfkp",
        "sizes": [FEATURES, ACCUMULATOR, HIDDEN, HIDDEN, 1], "ft_scale": FT_SCALE,
        "weight_scale": WEIGHT_SCALE, "output_cp": OUTPUT_CP}

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
                 king_buckets: int = 1, sparse: bool = True) -> None:
        super().__init__()
        self.sparse = sparse
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
        return cls(config.factorize, config.king_features, config.king_buckets, config.sparse)

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
        flat = features.reshape(n * 2, MAX_ACTIVE).long()
        acc = self.table(self.ft, flat)
        if self.factor is not None:
            acc = acc + self.table(self.factor, flat % PIECE_SQUARES)
        if self.buckets is not None:
            acc = acc + self.table(self.buckets, self.bucket_index(flat))
        acc = acc.reshape(n, 2, ACCUMULATOR)
        x0 = torch.clamp(acc + self.ft_bias, 0, 1).reshape(n, 2 * ACCUMULATOR)
        x1 = torch.clamp(self.l1(x0), 0, 1)
        x2 = torch.clamp(self.l2(x1), 0, 1)
        return x0, x1, x2

    def table(self, bag: nn.EmbeddingBag, rows: torch.Tensor) -> torch.Tensor:
        """The sums of ``bag``'s rows (m, 30) (0 pads): on the CPU with ``sparse`` the
        compiled kernel over the active rows only (:func:`sparse.feature_sums`), else the
        bag itself (a GPU's path)."""
        if self.sparse and sparse.usable(bag.weight, rows):
            return sparse.feature_sums(rows, bag.weight, 0)
        return bag(rows)

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



def make_net(config: NnueConfig) -> NnueNet | PsqNet:
    """The float model of the config's architecture."""
    if config.arch == "psq768":
        return PsqNet(config.hidden, config.activation, config.sparse)
    return NnueNet.from_config(config)

