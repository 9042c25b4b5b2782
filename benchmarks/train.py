"""Training speed: ``chesslab train nnue`` (Lightning, data streamed from Parquet through
DuckDB, HalfKP computed per training batch in a background thread) against a plain PyTorch
loop over the same model, loss and Adam on tensors already in memory. Positions per second of
training per epoch (from the epoch's start to its last optimiser step; the trainer's figure
includes the epoch's query and encoding), side by side in one run, alternating rounds of
baseline and ours (the machine's load drifts); the best epoch of each is the least disturbed
by other processes.

    .venv/bin/python benchmarks/train.py --epochs 3 --batch-size 8192 [--king-features]

The warehouse: data/sample/games.pgn.zst ingested and labelled by Stockfish at depth 1 (about
54,000 positions, half a minute on 2 cores), kept in --home for the next run.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from flows.ingest import INGEST, IngestJob  # noqa: E402
from flows.label import LABEL  # noqa: E402
from flows.step import run_step  # noqa: E402
from pipelines.ingest import IngestConfig  # noqa: E402
from pipelines.label import LabelConfig  # noqa: E402
from pipelines.train import NnueConfig, train  # noqa: E402
from pipelines.train.nnue import NnueNet, nnue_loss  # noqa: E402
from warehouse import Lake, connect  # noqa: E402

SAMPLE = ROOT / "data" / "sample" / "games.pgn.zst"


def labelled_lake(home: Path) -> Lake:
    lake = Lake(home)
    if not lake.parts("labels"):
        run_step(INGEST, IngestJob((SAMPLE,), IngestConfig()), lake)
        run_step(LABEL, LabelConfig(depths=(1,), workers=2, batch_size=2000), lake)
    return lake


def in_memory_tensors(lake: Lake) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Every training example as tensors (the baseline's data, outside its timing)."""
    from engines.nnue.features import halfkp_batch

    rows = connect(lake).sql("select fen, score_cp, coalesce(result, 'nan'::double) "
                             "from nnue_examples where in_check is not true").fetchall()
    features = torch.from_numpy(halfkp_batch([r[0] for r in rows]).astype(np.int64))
    return (features, torch.tensor([float(r[1]) for r in rows]),
            torch.tensor([float(r[2]) for r in rows]))


def plain_loop(data: tuple[torch.Tensor, ...], config: NnueConfig) -> list[float]:
    """Per-epoch positions/s of a bare PyTorch loop: shuffle, forward, loss, Adam, clip."""
    torch.manual_seed(config.seed)
    net = NnueNet.from_config(config)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate)
    features, score, result = data
    rates = []
    for _ in range(config.epochs):
        started = time.perf_counter()
        order = torch.randperm(len(score))
        for i in range(0, len(order), config.batch_size):
            batch = order[i:i + config.batch_size]
            loss = nnue_loss(net(features[batch]), score[batch], result[batch], config)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            net.clip_weights()
        rates.append(len(order) / (time.perf_counter() - started))
    return rates


def trainer_rates(lake: Lake, config: NnueConfig) -> tuple[list[float], dict[str, float]]:
    """Per-epoch positions/s of the trainer (model_metrics: data streamed from Parquet, HalfKP
    per record batch, Lightning) and the export's float-vs-quantised cross-check."""
    model = train(lake, "nnue", config)
    con = connect(lake)
    rates = con.sql("select positions_per_s from model_metrics where model_id = $m "
                    "order by epoch", params={"m": model.model_id}).fetchall()
    payload = con.sql("select payload from model_events where model_id = $m and "
                      "event = 'exported'", params={"m": model.model_id}).fetchall()[0][0]
    return [r[0] for r in rates], json.loads(payload)["cross_check"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=Path(tempfile.gettempdir()) / "bench-train")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=8192)
    parser.add_argument("--king-features", action="store_true",
                        help="both sides train Stockfish 12's per-king HalfKP columns (default: "
                             "the piece-square net, chesslab's default)")
    args = parser.parse_args()
    torch.set_num_threads(2)
    lake = labelled_lake(args.home)
    config = NnueConfig(epochs=args.epochs, batch_size=args.batch_size, accelerator="cpu",
                        progress=False, validation_percent=5.0, check_positions=10_000,
                        king_features=args.king_features)
    data = in_memory_tensors(lake)
    print(f"{len(data[1])} positions, batch {args.batch_size}, {args.epochs} epochs x "
          f"{args.rounds} rounds, {torch.get_num_threads()} torch threads")
    baseline: list[float] = []
    ours: list[float] = []
    for _ in range(args.rounds):  # alternate: the machine's load drifts
        baseline += plain_loop(data, config)
        rates, check = trainer_rates(lake, config)
        ours += rates
    for name, rates in (("plain PyTorch loop, in-memory tensors", baseline),
                        ("chesslab train nnue, from Parquet", ours)):
        print(f"{name:38s} best epoch {max(rates):8,.0f}  median {statistics.median(rates):8,.0f}"
              f"  positions/s")
    print(f"ratio ours / baseline: best {max(ours) / max(baseline):.2f}, median "
          f"{statistics.median(ours) / statistics.median(baseline):.2f}")
    print(f"export cross-check on {check['positions']} positions: float vs quantised mean "
          f"{check['float_vs_quantised_mean_cp']:.2f} cp, max "
          f"{check['float_vs_quantised_max_cp']:.1f} cp; batch vs reference max "
          f"{check['quantised_vs_reference_max_cp']:.0f} cp")


if __name__ == "__main__":
    main()
