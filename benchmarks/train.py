"""Training speed: ``chesslab train nnue`` (Lightning, data streamed from Parquet through
DuckDB, HalfKP computed per record batch) against a plain PyTorch loop over the same model,
loss and Adam on tensors already in memory. Positions per second of training, side by side in
one run: baseline, ours, baseline again (the machine's load drifts).

    .venv/bin/python benchmarks/train.py --epochs 3 --batch-size 8192

The warehouse: data/sample/games.pgn.zst ingested and labelled by Stockfish at depth 1 (about
54,000 positions, half a minute on 2 cores), kept in --home for the next run.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipelines.ingest import IngestConfig, ingest_paths  # noqa: E402
from pipelines.label import LabelConfig, label_positions  # noqa: E402
from pipelines.train import NnueConfig, train  # noqa: E402
from pipelines.train.nnue import NnueNet, nnue_loss  # noqa: E402
from warehouse import Lake, connect  # noqa: E402

SAMPLE = ROOT / "data" / "sample" / "games.pgn.zst"


def labelled_lake(home: Path) -> Lake:
    lake = Lake(home)
    if not lake.parts("labels"):
        ingest_paths(lake, [SAMPLE], IngestConfig())
        label_positions(lake, LabelConfig(depths=(1,), workers=2, batch_size=2000))
    return lake


def in_memory_tensors(lake: Lake) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Every training example as tensors (the baseline's data, outside its timing)."""
    from engines.nnue.features import halfkp_batch

    rows = connect(lake).sql("select fen, score_cp, coalesce(result, 'nan'::double) "
                             "from nnue_examples where in_check is not true").fetchall()
    features = torch.from_numpy(halfkp_batch([r[0] for r in rows]).astype(np.int64))
    return (features, torch.tensor([float(r[1]) for r in rows]),
            torch.tensor([float(r[2]) for r in rows]))


def plain_loop(data: tuple[torch.Tensor, ...], config: NnueConfig) -> float:
    """Positions/s of a bare PyTorch loop: shuffle, forward, loss, Adam, clip."""
    torch.manual_seed(config.seed)
    net = NnueNet()
    optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate)
    features, score, result = data
    started, seen = time.perf_counter(), 0
    for _ in range(config.epochs):
        order = torch.randperm(len(score))
        for i in range(0, len(order), config.batch_size):
            batch = order[i:i + config.batch_size]
            loss = nnue_loss(net(features[batch]), score[batch], result[batch], config)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            net.clip_weights()
            seen += len(batch)
    return seen / (time.perf_counter() - started)


def trainer_rate(lake: Lake, config: NnueConfig) -> float:
    """Positions/s of the trainer: the mean of its per-epoch model_metrics rates."""
    model = train(lake, "nnue", config)
    rates = connect(lake).sql("select positions_per_s from model_metrics where model_id = $m",
                              params={"m": model.model_id}).fetchall()
    return statistics.mean(r[0] for r in rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=Path(tempfile.gettempdir()) / "bench-train")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=8192)
    args = parser.parse_args()
    torch.set_num_threads(2)
    lake = labelled_lake(args.home)
    config = NnueConfig(epochs=args.epochs, batch_size=args.batch_size, accelerator="cpu",
                        progress=False, validation_percent=5.0, check_positions=1000)
    data = in_memory_tensors(lake)
    print(f"{len(data[1])} positions, batch {args.batch_size}, {args.epochs} epochs, "
          f"{torch.get_num_threads()} torch threads")
    baseline = [plain_loop(data, config)]
    ours = trainer_rate(lake, config)
    baseline.append(plain_loop(data, config))
    base = statistics.mean(baseline)
    print(f"plain PyTorch loop, in-memory tensors: {baseline[0]:,.0f} and {baseline[1]:,.0f} "
          f"positions/s")
    print(f"chesslab train nnue, from Parquet:     {ours:,.0f} positions/s "
          f"(ratio {ours / base:.2f} of the baseline's mean)")


if __name__ == "__main__":
    main()
