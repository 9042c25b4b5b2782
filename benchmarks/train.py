"""Training speed: ``chesslab train nnue`` (Lightning, data streamed from Parquet through
DuckDB, HalfKP computed per training batch in a background thread) against a plain PyTorch
loop over the same model, loss and Adam on tensors already in memory. Positions per second of
training per epoch (from the epoch's start to its last optimiser step; the trainer's figure
includes the epoch's query and encoding), side by side in one run, alternating rounds of
baseline and ours (the machine's load drifts); the best epoch of each is the least disturbed
by other processes.

    .venv/bin/python benchmarks/train.py --epochs 3 --batch-size 8192 [--king-features]
        [--arch halfkp,psq768] [--hidden 256] [--device cpu|cuda] [--loader-threads 1,2,4]

Each architecture (issue 38: ``halfkp`` 41024 -> 256x2 -> 32 -> 32 -> 1, ``psq768`` 768 -> N x2
-> 1) is measured in turn; the data loader alone (the trainer's stream: DuckDB query, FEN
encoding, batching, no model) is timed too, as positions/s, and its encoding alone (the
split's record batches in memory, the epoch's query left out), so a GPU run shows whether the
loader keeps up, with each of ``--loader-threads`` encoding threads (default 1 and the
trainer's: ``NnueConfig.loader_threads``' default, min(4, cores)). ``--device cuda`` runs the
baseline's tensors and the trainer on the GPU (targets there: HalfKP >= 0.5M positions/s,
psq768-256 >= 2M).

The warehouse: data/sample/games.pgn.zst ingested and labelled by Stockfish at depth 1 (about
54,000 positions, half a minute on 2 cores), kept in --home for the next run.
"""
from __future__ import annotations

import argparse
import dataclasses
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
from pipelines.kinds.nnue.config import NnueConfig  # noqa: E402
from pipelines.kinds.nnue.module import NnueKind, make_net, nnue_loss  # noqa: E402
from pipelines.label import LabelConfig  # noqa: E402
from pipelines.train import train  # noqa: E402
from pipelines.train.dataset import pooled, stream_batches  # noqa: E402
from warehouse import Lake, connect  # noqa: E402

SAMPLE = ROOT / "data" / "sample" / "games.pgn.zst"


def labelled_lake(home: Path) -> Lake:
    lake = Lake(home)
    if not lake.parts("labels"):
        run_step(INGEST, IngestJob((SAMPLE,), IngestConfig()), lake)
        run_step(LABEL, LabelConfig(depths=(1,), workers=2, batch_size=2000), lake)
    return lake


def in_memory_tensors(lake: Lake, arch: str,
                      device: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Every training example as tensors on ``device`` (the baseline's data, outside its
    timing)."""
    from engines.nnue.features import halfkp_batch, psq_batch

    encode = psq_batch if arch == "psq768" else halfkp_batch
    rows = connect(lake).sql("select fen, score_cp, coalesce(result, 'nan'::double) "
                             "from nnue_examples where in_check is not true").fetchall()
    features = torch.from_numpy(encode([r[0] for r in rows]).astype(np.int64))
    return (features.to(device), torch.tensor([float(r[1]) for r in rows], device=device),
            torch.tensor([float(r[2]) for r in rows], device=device))


def loader_rate(lake: Lake, config: NnueConfig, folder: Path, threads: int) -> float:
    """Positions/s of the trainer's training-split loader alone (one epoch, no model), its
    features computed by ``threads`` threads."""
    data = NnueKind().data(lake, dataclasses.replace(config, loader_threads=threads), folder)
    assert data.train.dataset.threads == threads
    started = time.perf_counter()
    positions = sum(len(batch) for batch in data.train)
    return positions / (time.perf_counter() - started)


def encode_rate(lake: Lake, config: NnueConfig, folder: Path, threads: int) -> float:
    """Positions/s of the loader's encoding alone: the training split's record batches read
    first (outside the timing), then cut into training batches (within each record batch)
    and encoded by ``threads`` threads with the stream's ``pooled(stream.encode, ...)``,
    without the epoch's query."""
    data = NnueKind().data(lake, dataclasses.replace(config, loader_threads=threads), folder)
    stream = data.train.dataset
    record_batches = list(stream_batches(stream.split, 0, config.read_batch))
    pieces = [[b.slice(i, config.batch_size)] for b in record_batches
              for i in range(0, b.num_rows, config.batch_size)]
    started = time.perf_counter()
    positions = sum(len(batch) for batch in pooled(stream.encode, iter(pieces), threads))
    return positions / (time.perf_counter() - started)


def plain_loop(data: tuple[torch.Tensor, ...], config: NnueConfig) -> list[float]:
    """Per-epoch positions/s of a bare PyTorch loop: shuffle, forward, loss, Adam, clip."""
    torch.manual_seed(config.seed)
    features, score, result = data
    net = make_net(config).to(features.device)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate)
    rates = []
    for _ in range(config.epochs):
        started = time.perf_counter()
        order = torch.randperm(len(score), device=features.device)
        for i in range(0, len(order), config.batch_size):
            batch = order[i:i + config.batch_size]
            loss = nnue_loss(net(features[batch]), score[batch], result[batch], config)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            net.clip_weights()
        if features.device.type == "cuda":
            torch.cuda.synchronize()
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
    parser.add_argument("--arch", default="halfkp,psq768", help="halfkp, psq768 (default: both)")
    parser.add_argument("--hidden", type=int, default=256, help="psq768's N")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--loader-threads", default=None,
                        help="encoding threads of the loader timed alone, comma-separated "
                             "(default: 1 and the trainer's, min(4, cores))")
    parser.add_argument("--king-features", action="store_true",
                        help="both sides train Stockfish 12's per-king HalfKP columns (default: "
                             "the piece-square net, chesslab's default)")
    args = parser.parse_args()
    if args.device == "cpu":
        torch.set_num_threads(2)
    lake = labelled_lake(args.home)
    threads = [int(t) for t in args.loader_threads.split(",")] if args.loader_threads else \
        sorted({1, NnueConfig().encode_threads})
    for arch in args.arch.split(","):
        config = NnueConfig(epochs=args.epochs, batch_size=args.batch_size,
                            accelerator="gpu" if args.device == "cuda" else "cpu",
                            progress=False, validation_percent=5.0, check_positions=10_000,
                            king_features=args.king_features, arch=arch, hidden=args.hidden)
        measure(lake, config, args.rounds, args.device, threads)


def measure(lake: Lake, config: NnueConfig, rounds: int, device: str,
            threads: list[int]) -> None:
    """Baseline, trainer and loader (with each of ``threads``) of one architecture,
    alternating rounds, printed."""
    data = in_memory_tensors(lake, config.arch, device)
    name = config.arch if config.arch == "halfkp" else f"psq768-{config.hidden}"
    print(f"{name}: {len(data[1])} positions, batch {config.batch_size}, {config.epochs} "
          f"epochs x {rounds} rounds, device {device}, {torch.get_num_threads()} torch threads, "
          f"the trainer's loader {config.encode_threads} threads")
    baseline: list[float] = []
    ours: list[float] = []
    loader: dict[int, list[float]] = {n: [] for n in threads}
    encoding: dict[int, list[float]] = {n: [] for n in threads}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(rounds):  # alternate: the machine's load drifts
            baseline += plain_loop(data, config)
            rates, check = trainer_rates(lake, config)
            ours += rates
            for n in threads:
                loader[n].append(loader_rate(lake, config, Path(folder), n))
                for _ in range(3):
                    encoding[n].append(encode_rate(lake, config, Path(folder), n))
    for label, values in (("plain PyTorch loop, in-memory tensors", baseline),
                          ("chesslab train nnue, from Parquet", ours),
                          *((f"its data loader alone, {n} thread{'s' * (n > 1)}", loader[n])
                            for n in threads),
                          *((f"  its encoding alone (no query), {n}", encoding[n])
                            for n in threads)):
        print(f"  {label:38s} best epoch {max(values):10,.0f}  median "
              f"{statistics.median(values):10,.0f}  positions/s")
    print(f"  ratio ours / baseline: best {max(ours) / max(baseline):.2f}, median "
          f"{statistics.median(ours) / statistics.median(baseline):.2f}; loader / ours "
          + ", ".join(f"{statistics.median(loader[n]) / statistics.median(ours):.1f} ({n})"
                      for n in threads)
          + f"; n threads / {threads[0]}: loader " + ", ".join(
              f"{statistics.median(loader[n]) / statistics.median(loader[threads[0]]):.2f} "
              f"({n})" for n in threads[1:]) + ", encoding " + ", ".join(
              f"{statistics.median(encoding[n]) / statistics.median(encoding[threads[0]]):.2f} "
              f"({n})" for n in threads[1:]))
    print(f"  export cross-check on {check['positions']} positions: float vs quantised mean "
          f"{check['float_vs_quantised_mean_cp']:.2f} cp, max "
          f"{check['float_vs_quantised_max_cp']:.1f} cp; batch vs reference max "
          f"{check['quantised_vs_reference_max_cp']:.0f} cp")


if __name__ == "__main__":
    main()
