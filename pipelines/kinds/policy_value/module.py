"""The policy-value net of the PUCT engine as a model kind of the generic trainer (papers 002
and 004): the ResNet of :mod:`engines.puct.network` trained on a self-play run's replay
window.

Data: ``selfplay_window`` (rounds ``round - window + 1 .. round`` of ``run_id``), every
``1000 / validation_permille``-th position held out for validation (positions, not games: a
tiny round has too few games). Training draws ``updates`` batches uniformly with replacement
from the rest (paper 004's sampling) in one epoch.

Loss: cross-entropy of the legal-move-masked policy against the visit distribution
(``policy_target=visits``, AlphaZero and 002) or the move played (``played``, 004), plus the
MSE of the value against the outcome or the material-shaped target (002), optionally
blended with the search's root Q (``search_weight``), L2 by weight decay. Each epoch's extra metrics: policy accuracy (the played move), value MSE, and the
value head's *decisive share*: the share of validation positions where |v| > 0.5, next to the
share of decisive targets, so a collapse towards draws (004's Fig. 3) shows per checkpoint.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess
import numpy as np
import torch

from engines.puct.encoding import MOVES, move_index, planes_of_fens
from engines.puct.network import ARTIFACT, Architecture, PolicyValueNet, load_network, save_network
from pipelines.train.dataset import DatasetError, table_versions
from pipelines.train.trainer import Export, KindData, KindModule
from warehouse import Lake, connect
from warehouse.catalog import named_query, query

from .config import PolicyValueConfig

log = logging.getLogger(__name__)

QUERY = "selfplay_window"
DECISIVE = 0.5     # |value| above this counts as a decisive prediction


@dataclass
class Samples:
    """Encoded samples: planes, sparse policy targets (legal indices, weights), the played
    move's index, value targets."""

    x: np.ndarray                      # (n, 21, 8, 8) float32
    legal: list[np.ndarray]            # per sample: policy indices of the legal moves
    target: list[np.ndarray]           # per sample: target probability of each legal move
    played: np.ndarray                 # (n,) index of the move played
    value: np.ndarray                  # (n,) float32

    def __len__(self) -> int:
        return len(self.played)


@dataclass
class PolicyValueBatch:
    x: torch.Tensor
    mask: torch.Tensor                 # (n, 4672) bool: legal moves
    policy: torch.Tensor               # (n, 4672) target distribution
    played: torch.Tensor               # (n,)
    value: torch.Tensor                # (n,)

    def __len__(self) -> int:
        return int(self.value.shape[0])


def encode(rows: list[dict[str, Any]], config: PolicyValueConfig) -> Samples:
    """The window's rows as training samples."""
    legal, target, played = [], [], []
    for row in rows:
        turn = chess.Board(row["fen"]).turn
        indices = np.array([move_index(chess.Move.from_uci(m), turn) for m in row["moves"]])
        move = move_index(chess.Move.from_uci(row["played"]), turn)
        if config.policy_target == "visits" and sum(row["visits"]) > 0:
            weights = np.asarray(row["visits"], dtype=np.float32)
            weights /= weights.sum()
        else:
            weights = (indices == move).astype(np.float32)
        legal.append(indices)
        target.append(weights)
        played.append(move)
    value = np.array([r[config.value_target] for r in rows], dtype=np.float32)
    if config.search_weight > 0:
        q = np.array([r["search_value"] for r in rows], dtype=np.float32)
        value = (1 - config.search_weight) * value + config.search_weight * q
    return Samples(planes_of_fens([r["fen"] for r in rows]), legal, target,
                   np.array(played, dtype=np.int64), value)


def collate(samples: Samples, rows: np.ndarray) -> PolicyValueBatch:
    n = len(rows)
    mask = torch.zeros((n, MOVES), dtype=torch.bool)
    policy = torch.zeros((n, MOVES))
    for i, row in enumerate(rows):
        legal = torch.from_numpy(samples.legal[row])
        mask[i, legal] = True
        policy[i, legal] = torch.from_numpy(samples.target[row])
    return PolicyValueBatch(torch.from_numpy(samples.x[rows]), mask, policy,
                            torch.from_numpy(samples.played[rows]),
                            torch.from_numpy(samples.value[rows]))


class UniformBatches(torch.utils.data.IterableDataset):
    """``count`` batches drawn uniformly with replacement (seeded per epoch); or, with
    ``count`` None, every sample once in order (validation)."""

    def __init__(self, samples: Samples, batch_size: int, count: int | None, seed: int) -> None:
        self.samples, self.batch_size, self.count, self.seed = samples, batch_size, count, seed
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __iter__(self) -> Iterator[PolicyValueBatch]:
        n = len(self.samples)
        if self.count is None:
            for start in range(0, n, self.batch_size):
                yield collate(self.samples, np.arange(start, min(n, start + self.batch_size)))
            return
        rng = np.random.default_rng([self.seed, self.epoch])
        for _ in range(self.count):
            yield collate(self.samples, rng.integers(0, n, self.batch_size))


class PolicyValueModule(KindModule):
    def __init__(self, config: PolicyValueConfig) -> None:
        super().__init__(config)
        self.net = PolicyValueNet(Architecture(config.blocks, config.channels,
                                               config.value_hidden))
        if config.init_from:
            self.net.load_state_dict(load_network(config.init_from).state_dict())
        self.reset_counts()

    def reset_counts(self) -> None:
        self.counts = {"n": 0.0, "correct": 0.0, "decisive": 0.0, "decisive_target": 0.0,
                       "value_se": 0.0, "policy_ce": 0.0}

    def loss(self, batch: PolicyValueBatch) -> torch.Tensor:
        logits, value = self.net(batch.x)
        log_p = torch.log_softmax(logits.masked_fill(~batch.mask, -1e9), dim=1)
        policy_loss = -(batch.policy * log_p).sum(1).mean()
        value_loss = ((value - batch.value) ** 2).mean()
        if not self.training:
            c = self.counts
            c["n"] += len(batch)
            c["correct"] += float((log_p.argmax(1) == batch.played).sum())
            c["decisive"] += float((value.abs() > DECISIVE).sum())
            c["decisive_target"] += float((batch.value.abs() > DECISIVE).sum())
            c["value_se"] += float(((value - batch.value) ** 2).sum())
            c["policy_ce"] += float(policy_loss) * len(batch)
        return policy_loss + value_loss

    def on_validation_start(self) -> None:
        self.reset_counts()

    def epoch_extra(self) -> dict[str, float | None]:
        c, n = self.counts, max(self.counts["n"], 1.0)
        return {"policy_accuracy": c["correct"] / n, "value_mse": c["value_se"] / n,
                "policy_ce": c["policy_ce"] / n, "decisive_share": c["decisive"] / n,
                "decisive_target_share": c["decisive_target"] / n}

    def optimizer(self) -> torch.optim.Optimizer:
        config = self.config
        assert isinstance(config, PolicyValueConfig)
        if config.optimizer == "sgd":
            return torch.optim.SGD(self.parameters(), lr=config.learning_rate, momentum=0.9,
                                   weight_decay=config.weight_decay)
        return torch.optim.AdamW(self.parameters(), lr=config.learning_rate,
                                 weight_decay=config.weight_decay)

    def transfer_batch_to_device(self, batch: PolicyValueBatch, device: torch.device,
                                 dataloader_idx: int) -> PolicyValueBatch:
        return PolicyValueBatch(*(t.to(device) for t in (batch.x, batch.mask, batch.policy,
                                                          batch.played, batch.value)))


def window_rows(lake: Lake, config: PolicyValueConfig) -> list[dict[str, Any]]:
    params = {"run_id": config.run_id, "first_round": max(1, config.round - config.window + 1),
              "last_round": config.round}
    return query(connect(lake), named_query(QUERY), params).to_pylist()


class PolicyValueKind:
    """``policy_value``: see the module."""

    config_cls = PolicyValueConfig

    def __init__(self) -> None:
        self.extra: dict[str, float | None] = {}

    def data(self, lake: Lake, config: PolicyValueConfig, folder: Path) -> KindData:
        rows = window_rows(lake, config)
        every = max(2, round(1000 / config.validation_permille))
        validation = [r for i, r in enumerate(rows) if i % every == every - 1]
        train = [r for i, r in enumerate(rows) if i % every != every - 1]
        if not train or not validation:
            raise DatasetError(f"{QUERY}: run {config.run_id!r} rounds up to {config.round} "
                               f"give {len(rows)} positions; play more self-play games")
        loaders = [torch.utils.data.DataLoader(
            UniformBatches(encode(part, config), config.batch_size, count, config.seed),
            batch_size=None) for part, count in ((train, config.updates), (validation, None))]
        return KindData(loaders[0], loaders[1], {
            "view": "selfplay_samples", "query": QUERY,
            "parameters": json.dumps({"run_id": config.run_id, "round": config.round,
                                      "window": config.window,
                                      "policy_target": config.policy_target,
                                      "value_target": config.value_target,
                                      "search_weight": config.search_weight}, sort_keys=True),
            "label_engine_id": None, "label_depths": [],
            "table_versions": json.dumps(table_versions(lake)),
            "train_rows": len(train), "validation_rows": len(validation),
            "position_keys_hash": None})

    def module(self, config: PolicyValueConfig) -> PolicyValueModule:
        return PolicyValueModule(config)

    def export(self, module: PolicyValueModule, folder: Path, data: KindData,
               config: PolicyValueConfig) -> Export:
        path = save_network(module.net.to("cpu").eval(), folder / ARTIFACT)
        reloaded = load_network(path)
        batch = next(iter(data.validation.dataset))
        with torch.no_grad():
            a, b = module.net(batch.x), reloaded(batch.x)
        gap = max(float((a[0] - b[0]).abs().max()), float((a[1] - b[1]).abs().max()))
        return Export(path, {"format": "chesslab policy_value v1", "reload_max_gap": gap,
                             **module.epoch_extra()})


__all__ = ["PolicyValueKind", "PolicyValueModule", "encode"]
