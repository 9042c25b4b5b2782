"""The NNUE trainer's sparse kernels (issue 47): the feature transformer on the active features
only, forward and backward, checked against PyTorch's own dense ops (``EmbeddingBag``, the
perspective net's clamp, square and linear layer), which compute the same function over every
input: values and gradients of every parameter, with padding, output buckets, both
activations, hidden sizes that exercise the kernels' 64-column and 16-column paths, and one
or two threads. Then the trainer: on the same data and seed, the sparse trainer's validation
loss per epoch is the dense one's within 1%."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from flows.ingest import INGEST, IngestJob
from flows.label import LABEL
from flows.step import run_step
from pipelines.ingest import IngestConfig
from pipelines.kinds.nnue import sparse
from pipelines.kinds.nnue.config import NnueConfig
from pipelines.kinds.nnue.model import NnueNet
from pipelines.kinds.nnue.psq import PAD, PsqNet
from pipelines.label import LabelConfig
from pipelines.train import preset, train
from warehouse import Lake, connect

GAMES = Path(__file__).resolve().parent.parent / "fixtures" / "label_engines" / "selfplay.pgn"


@pytest.fixture(scope="module")
def nnue_lake(tmp_path_factory: pytest.TempPathFactory, stockfish_path: str) -> Lake:
    """selfplay.pgn ingested and every position labelled by Stockfish at depth 4."""
    lake = Lake(tmp_path_factory.mktemp("sparse") / "home")
    run_step(INGEST, IngestJob((GAMES,), IngestConfig.tiny()), lake)
    summary = run_step(LABEL, LabelConfig.tiny(depths=(4,), limit=None, batch_size=200,
                                                workers=2), lake)
    assert summary.errors == 0 and summary.labels > 800
    return lake


def random_features(n: int, rows: int, width: int, pad: int, seed: int) -> torch.Tensor:
    """(n, 2, width) indices below ``rows``, a random number of each row's slots ``pad``."""
    generator = torch.Generator().manual_seed(seed)
    features = torch.randint(0, rows, (n, 2, width), generator=generator)
    used = torch.randint(0, width + 1, (n, 2, 1), generator=generator)
    return torch.where(torch.arange(width) < used, features, torch.full_like(features, pad))


@pytest.mark.parametrize("hidden", [16, 80, 256])
@pytest.mark.parametrize("threads", [1, 2])
def test_feature_sums_are_the_embedding_bags(hidden: int, threads: int,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """``feature_sums`` of (m, 30) indices with pad 0 is ``EmbeddingBag(padding_idx=0)``: the
    same sums, and the same table gradient (the pad row's stays 0)."""
    monkeypatch.setattr(sparse, "kernel_threads", lambda: threads)
    torch.manual_seed(hidden)
    bag = torch.nn.EmbeddingBag(700, hidden, mode="sum", padding_idx=0)
    rows = random_features(301, 700, 30, 0, hidden).reshape(602, 30)
    weight = bag.weight.detach().clone().requires_grad_(True)
    ours = sparse.feature_sums(rows, weight, 0)
    theirs = bag(rows)
    assert torch.allclose(ours, theirs, atol=1e-5)
    upstream = torch.randn_like(theirs)
    (ours * upstream).sum().backward()
    (theirs * upstream).sum().backward()
    assert weight.grad is not None and bag.weight.grad is not None
    assert torch.allclose(weight.grad, bag.weight.grad, atol=1e-4)
    assert float(weight.grad[0].abs().sum()) == 0.0


@pytest.mark.parametrize("activation", ["screlu", "crelu"])
@pytest.mark.parametrize("hidden", [16, 80, 256])
@pytest.mark.parametrize("threads", [1, 2])
def test_perspective_net_is_the_dense_net(activation: str, hidden: int, threads: int,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The fused kernel's output and gradients of all four parameters are the dense PsqNet's
    (PyTorch's EmbeddingBag, clamp, square and Linear) on the same weights, biases set so
    that accumulators fall below 0, inside (0, 1) and above 1."""
    monkeypatch.setattr(sparse, "kernel_threads", lambda: threads)
    torch.manual_seed(hidden + threads)
    dense = PsqNet(hidden, activation, sparse=False)
    fused = PsqNet(hidden, activation, sparse=True)
    with torch.no_grad():
        dense.ft.weight.uniform_(-0.3, 0.3)
        dense.ft.weight[PAD].zero_()
        dense.ft_bias.uniform_(-0.5, 1.5)
    fused.load_state_dict(dense.state_dict())
    features = random_features(257, 768, 32, PAD, hidden).to(torch.int16)
    y_dense, y_fused = dense(features), fused(features)
    acc = dense.ft(features.reshape(-1, 32).long()) + dense.ft_bias
    assert float((acc < 0).float().mean()) > 0.05 and float((acc > 1).float().mean()) > 0.05
    assert torch.allclose(y_fused, y_dense, atol=1e-4)
    upstream = torch.randn_like(y_dense)
    (y_dense * upstream).sum().backward()
    (y_fused * upstream).sum().backward()
    for (name, a), b in zip(dense.named_parameters(), fused.parameters(), strict=True):
        assert a.grad is not None and b.grad is not None
        assert torch.allclose(a.grad, b.grad, atol=1e-3, rtol=1e-4), name


def test_perspective_net_buckets_pick_each_positions_output_row() -> None:
    """With output buckets each position is scored by its bucket's row of the output weights
    and only that row gets its gradient: position by position against a one-row net."""
    torch.manual_seed(1)
    weight = (torch.rand(769, 32) * 0.4 - 0.2).requires_grad_(True)
    bias = torch.full((32,), 0.4)
    out = (torch.rand(3, 64) - 0.5).requires_grad_(True)
    features = random_features(40, 768, 32, PAD, 1)
    bucket = torch.arange(40) % 3
    y = sparse.perspective_net(features, weight, bias, out, PAD, True, bucket)
    for i in (0, 1, 2, 17):
        one = sparse.perspective_net(features[i:i + 1], weight, bias, out[bucket[i]][None],
                                     PAD, True)
        assert torch.allclose(y[i:i + 1], one, atol=1e-5)
    y[:3].sum().backward()
    assert out.grad is not None
    assert all(float(out.grad[b].abs().sum()) > 0 for b in range(3))
    out.grad = None
    y2 = sparse.perspective_net(features, weight, bias, out, PAD, True, bucket)
    y2[0].backward()
    assert out.grad is not None and float(out.grad[1:].abs().sum()) == 0.0


def test_halfkp_net_is_the_same_with_the_kernels() -> None:
    """The HalfKP net with factoriser and king buckets gives the same outputs and gradients
    through the kernels as through its EmbeddingBags."""
    torch.manual_seed(4)
    dense = NnueNet(factorize=True, king_features=True, king_buckets=4, sparse=False)
    fused = NnueNet(factorize=True, king_features=True, king_buckets=4, sparse=True)
    with torch.no_grad():
        for table in (dense.ft, dense.factor, dense.buckets):
            assert table is not None
            table.weight.uniform_(-0.05, 0.05)
            table.weight[0].zero_()
    fused.load_state_dict(dense.state_dict())
    features = random_features(64, 41024, 30, 0, 4).to(torch.int32)
    y_dense, y_fused = dense(features), fused(features)
    assert torch.allclose(y_fused, y_dense, atol=1e-5)
    y_dense.sum().backward()
    y_fused.sum().backward()
    for (name, a), b in zip(dense.named_parameters(), fused.parameters(), strict=True):
        if a.requires_grad:
            assert a.grad is not None and b.grad is not None
            assert torch.allclose(a.grad, b.grad, atol=1e-4), name


@pytest.mark.parametrize("arch", ["psq768", pytest.param("halfkp", marks=pytest.mark.slow)])
def test_the_sparse_trainer_learns_what_the_dense_one_does(
        nnue_lake: Lake, tmp_path: Path, arch: str) -> None:
    """Issue 47: on the same data and seed, ``train nnue --preset tiny`` with the kernels and
    with ``--no-sparse`` give validation losses within 1% of each other at every epoch."""
    losses = {}
    for flag in (True, False):
        home = tmp_path / str(flag)
        shutil.copytree(nnue_lake.home, home)
        lake = Lake(home)
        model = train(lake, "nnue", preset(NnueConfig, "tiny", arch=arch, sparse=flag,
                                           hidden=32))
        losses[flag] = [v for (v,) in connect(lake).execute(
            "select val_loss from model_metrics where model_id = ? order by epoch",
            [model.model_id]).fetchall()]
    assert len(losses[True]) == 4
    for ours, theirs in zip(losses[True], losses[False], strict=True):
        assert ours == pytest.approx(theirs, rel=0.01)
