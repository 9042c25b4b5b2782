"""Training speed (issue 47): ``chesslab train nnue`` (Lightning, its data encoded once from
the run's Parquet snapshot, the feature transformer in the compiled sparse kernels) beside a
plain PyTorch loop over the same model, loss and Adam on tensors already in memory, with the
dense ops (``--no-sparse``: EmbeddingBag, clamp, Linear) and with the same kernels. Positions
per second of training per epoch (from the epoch's start to its last optimiser step), side by
side in one run, alternating rounds of each (the machine's load drifts); the best epoch of
each is the least disturbed by other processes.

    .venv/bin/python benchmarks/train.py --epochs 3 --batch-size 16384 [--king-features]
        [--arch halfkp,psq768] [--hidden 256] [--device cpu|cuda] [--loader-threads 1,2]

Ratios: the kernel loop over the dense loop (the kernels' gain), the trainer over the kernel
loop (what Lightning and the loader cost; target at least 0.9). The data loader alone (an
epoch of the encoded split, no model) and the encoding pass alone (the snapshot's FENs to
features, once per run, with each of ``--loader-threads``) are timed too. Targets on a
2-core CPU: psq768-256 at least 200k positions/s, HalfKP at least 100k.

The warehouse: data/sample/games.pgn.zst ingested and labelled by Stockfish at depth 1 (about
54,000 positions, half a minute on 2 cores), kept in --home for the next run; or any labelled
home given with --home (the engine with the most labels).
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
from pipelines.kinds.nnue.data import QUERY, SNAPSHOT, dataset_summary, encode_split  # noqa: E402
from pipelines.kinds.nnue.module import NnueKind, make_net, nnue_loss  # noqa: E402
from pipelines.label import LabelConfig  # noqa: E402
from pipelines.train import train  # noqa: E402
from pipelines.train.dataset import NO_LIMIT, SplitQuery  # noqa: E402
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
    timing), features in the trainer's types (psq768 int16, HalfKP int32)."""
    from engines.nnue.features import halfkp_batch, psq_batch

    encode = psq_batch if arch == "psq768" else halfkp_batch
    rows = connect(lake).sql("select fen, score_cp, coalesce(result, 'nan'::double) "
                             "from nnue_examples where in_check is not true").fetchall()
    features = torch.from_numpy(encode([r[0] for r in rows]).astype(
        np.int16 if arch == "psq768" else np.int32))
    return (features.to(device), torch.tensor([float(r[1]) for r in rows], device=device),
            torch.tensor([float(r[2]) for r in rows], device=device))


def loader_rate(lake: Lake, config: NnueConfig, folder: Path) -> float:
    """Positions/s of the trainer's training-split loader alone (one epoch of the encoded
    split, no model)."""
    data = NnueKind().data(lake, config, folder)
    started = time.perf_counter()
    positions = sum(len(batch) for batch in data.train)
    return positions / (time.perf_counter() - started)


def encode_rate(lake: Lake, config: NnueConfig, folder: Path, threads: int) -> float:
    """Positions/s of the encoding pass alone: the training split's rows read from the
    snapshot and their FENs encoded by ``threads`` threads into the run's arrays (done once
    per run)."""
    NnueKind().data(lake, config, folder)            # the snapshot, outside the timing
    whole = {"snapshot": str(folder / SNAPSHOT), "max_positions": NO_LIMIT}
    rows = dataset_summary(connect(lake, readable=[folder / SNAPSHOT]), folder / SNAPSHOT)
    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        encoded = encode_split(SplitQuery(str(lake.home), QUERY, whole, False), config.arch,
                               Path(scratch), rows[False][0], config.read_batch, threads)
        return len(encoded) / (time.perf_counter() - started)


def plain_loop(data: tuple[torch.Tensor, ...], config: NnueConfig) -> list[float]:
    """Per-epoch positions/s of a bare PyTorch loop: shuffle, forward, loss, Adam, clip (the
    config's ``sparse`` picks the dense ops or the kernels)."""
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
    """Per-epoch positions/s of the trainer (model_metrics) and the export's
    float-vs-quantised cross-check."""
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
    parser.add_argument("--batch-size", type=int, default=16384)
    parser.add_argument("--arch", default="halfkp,psq768", help="halfkp, psq768 (default: both)")
    parser.add_argument("--hidden", type=int, default=256, help="psq768's N")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--loader-threads", default=None,
                        help="threads of the encoding pass timed alone, comma-separated "
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
    """The dense loop, the kernel loop, the trainer, the loader and the encoding (with each of
    ``threads``) of one architecture, alternating rounds, printed with their ratios."""
    data = in_memory_tensors(lake, config.arch, device)
    name = config.arch if config.arch == "halfkp" else f"psq768-{config.hidden}"
    print(f"{name}: {len(data[1])} positions, batch {config.batch_size}, {config.epochs} "
          f"epochs x {rounds} rounds, device {device}, {torch.get_num_threads()} torch threads")
    rates: dict[str, list[float]] = {k: [] for k in ("dense", "kernel", "trainer", "loader")}
    encoding: dict[int, list[float]] = {n: [] for n in threads}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(rounds):  # alternate: the machine's load drifts
            rates["dense"] += plain_loop(data, dataclasses.replace(config, sparse=False))
            rates["kernel"] += plain_loop(data, config)
            epochs, check = trainer_rates(lake, config)
            rates["trainer"] += epochs
            rates["loader"].append(loader_rate(lake, config, Path(folder)))
            for n in threads:
                encoding[n].append(encode_rate(lake, config, Path(folder), n))
    for label, values in (("plain PyTorch loop, dense ops", rates["dense"]),
                          ("plain PyTorch loop, sparse kernels", rates["kernel"]),
                          ("chesslab train nnue", rates["trainer"]),
                          ("its data loader alone", rates["loader"]),
                          *((f"its encoding pass, {n} thread{'s' * (n > 1)}", encoding[n])
                            for n in threads)):
        print(f"  {label:38s} best epoch {max(values):10,.0f}  median "
              f"{statistics.median(values):10,.0f}  positions/s")

    def ratio(a: str, b: str) -> str:
        return (f"best {max(rates[a]) / max(rates[b]):.2f}, median "
                f"{statistics.median(rates[a]) / statistics.median(rates[b]):.2f}")

    print(f"  ratios: kernels / dense {ratio('kernel', 'dense')}; trainer / kernel loop "
          f"{ratio('trainer', 'kernel')}; trainer / dense {ratio('trainer', 'dense')}; "
          f"loader / trainer {ratio('loader', 'trainer')}")
    print(f"  export cross-check on {check['positions']} positions: float vs quantised mean "
          f"{check['float_vs_quantised_mean_cp']:.2f} cp, max "
          f"{check['float_vs_quantised_max_cp']:.1f} cp; batch vs reference max "
          f"{check['quantised_vs_reference_max_cp']:.0f} cp")


if __name__ == "__main__":
    main()
