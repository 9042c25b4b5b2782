"""The NNUE training data: the warehouse's examples, snapshotted, filtered (quiet positions),
and streamed in training batches encoded in compiled code (HalfKP or the 768 features).
Split from ``pipelines.kinds.nnue.module``, which re-exports these names.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from engines.nnue.features import halfkp_column, psq_column
from pipelines.formats.fens import UNREAD, board_flags
from pipelines.train.dataset import (
    WHOLE,
    DatasetError,
    SplitQuery,
    key_ranges,
    pooled,
    prefetched,
    stream_batches,
)
from warehouse import Lake
from warehouse.catalog import named_query, query
from warehouse.datafiles import file_index

from .config import NnueConfig

QUERY = "nnue_dataset"

VIEW = "nnue_examples"

SNAPSHOT = "dataset.parquet"

# Labels a query of the snapshot's writer joins (about: the labels of the key range; the
# snapshot is written range by range, each range's join and sort in memory of its own).
SNAPSHOT_RANGE_ROWS = 1 << 20




@dataclass
class NnueBatch:
    """One training batch: feature indices, label scores (cp, side to move), game results."""

    features: torch.Tensor   # (n, 2, 30) HalfKP int32 or (n, 2, 32) psq768 int16
    score_cp: torch.Tensor   # (n,) float32
    result: torch.Tensor     # (n,) float32, nan when unknown

    def __len__(self) -> int:
        return int(self.score_cp.shape[0])

    def slice(self, start: int, stop: int) -> NnueBatch:
        return NnueBatch(self.features[start:stop], self.score_cp[start:stop],
                         self.result[start:stop])


#: The arrays of an encoded split: name -> (dtype, shape after n) of each architecture.
Shape = dict[str, tuple[type, tuple[int, ...]]]
ENCODED: dict[str, Shape] = {"halfkp": {"features": (np.int32, (2, 30))},
                             "psq768": {"features": (np.int16, (2, 32))}}
COLUMNS: Shape = {"position_key": (np.uint64, ()), "score_cp": (np.float32, ()),
                  "result": (np.float32, ())}


@dataclass(frozen=True)
class EncodedSplit:
    """One split of a run's snapshot with its features computed once: ``features`` (n, 2, k)
    feature indices (int16 for psq768, int32 for HalfKP), ``score_cp``, ``result`` (nan:
    unknown) and ``position_key`` in the order the encoding read them. Arrays of
    ``.npy`` files in the run's folder, memory-mapped: an epoch takes its rows from the page
    cache, not from a query and a FEN parser, so the CPU trains instead of reading."""

    features: np.ndarray
    score_cp: np.ndarray
    result: np.ndarray
    position_key: np.ndarray

    def __len__(self) -> int:
        return int(self.score_cp.shape[0])

    def batch(self, rows: np.ndarray) -> NnueBatch:
        """The batch of ``rows`` (indices), in that order."""
        return NnueBatch(torch.from_numpy(self.features[rows]),
                         torch.from_numpy(self.score_cp[rows]),
                         torch.from_numpy(self.result[rows]))


def encoded_paths(folder: Path, validation: bool, arch: str) -> dict[str, Path]:
    split = "validation" if validation else "train"
    return {name: folder / f"encoded-{arch}-{split}-{name}.npy"
            for name in (*ENCODED[arch], *COLUMNS)}


def encode_split(split: SplitQuery, arch: str, folder: Path, rows: int, read_batch: int,
                 threads: int) -> EncodedSplit:
    """The split's ``rows`` encoded arrays in ``folder``, computed on first use: the
    snapshot's rows (epoch 0's order) streamed once, each record batch's FENs encoded by
    ``threads`` threads in compiled code (:func:`pooled`: the same arrays for any number) and
    written into memory-mapped files under temporary names, renamed when whole (a killed run
    leaves none half-written; a resumed run reads them). Memory: a few record batches."""
    paths = encoded_paths(folder, split.validation, arch)
    if not all(path.is_file() for path in paths.values()):
        write_encoded(split, arch, paths, rows, read_batch, threads)
    return EncodedSplit(**{name: np.load(path, mmap_mode="r") for name, path in paths.items()})


def write_encoded(split: SplitQuery, arch: str, paths: dict[str, Path], rows: int,
                  read_batch: int, threads: int) -> None:
    if threads < 1:
        raise ValueError(f"threads: must be at least 1, got {threads!r}")
    encoder = psq_column if arch == "psq768" else halfkp_column
    shapes = {**ENCODED[arch], **COLUMNS}
    tmp = {name: path.with_name(f".{path.name}.tmp") for name, path in paths.items()}
    out = {name: np.lib.format.open_memmap(tmp[name], mode="w+", dtype=dtype,
                                           shape=(rows, *shape))
           for name, (dtype, shape) in shapes.items()}

    def encode(batch: pa.RecordBatch) -> dict[str, np.ndarray]:
        return {"features": encoder(batch.column("fen")),
                **{name: batch.column(name).to_numpy(zero_copy_only=False)
                   for name in COLUMNS}}

    try:
        written = 0
        for arrays in pooled(encode, stream_batches(split, 0, read_batch), threads):
            size = len(arrays["score_cp"])
            if written + size > rows:
                raise DatasetError(f"{split.query}: the snapshot's split has more than the "
                                   f"{rows} rows its summary counted")
            for name, array in arrays.items():
                out[name][written:written + size] = array
            written += size
        if written != rows:
            raise DatasetError(f"{split.query}: the snapshot's split has {written} rows, its "
                               f"summary counted {rows}")
        for name, array in out.items():
            array.flush()
            tmp[name].replace(paths[name])
    finally:
        out.clear()
        for path in tmp.values():
            path.unlink(missing_ok=True)


def remove_encoded(folder: Path) -> None:
    """The encoded arrays of a finished run (its snapshot stays: ``chesslab export`` reads
    it)."""
    for path in folder.glob("encoded-*.npy"):
        path.unlink(missing_ok=True)


class NnueStream(torch.utils.data.IterableDataset):
    """One encoded split as training batches of ``batch_size`` (all but the last), in an order
    drawn per epoch (``set_epoch``) from ``seed``, at most ``max_positions`` of them an epoch;
    the next batches are gathered in a background thread while the model trains."""

    def __init__(self, encoded: EncodedSplit, batch_size: int,
                 max_positions: int | None = None, seed: int = 0) -> None:
        self.encoded, self.batch_size = encoded, batch_size
        self.max_positions, self.seed = max_positions, seed
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def order(self) -> np.ndarray:
        """This epoch's rows, in its order."""
        rng = np.random.default_rng([self.seed, self.epoch])
        return rng.permutation(len(self.encoded))[:self.max_positions]

    def __iter__(self) -> Iterator[NnueBatch]:
        return prefetched(self.batches())

    def batches(self) -> Iterator[NnueBatch]:
        rows = self.order()
        for start in range(0, len(rows), self.batch_size):
            yield self.encoded.batch(rows[start:start + self.batch_size])


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






def snapshot_parameters(config: NnueConfig, engine_ids: tuple[str, ...],
                        depth: int) -> dict[str, Any]:
    return {"engine_ids": list(engine_ids), "depth": depth,
            "validation_permille": config.validation_permille,
            "train_permille": round(config.train_percent * 10)}



def snapshot_ranges(lake: Lake, engine_ids: tuple[str, ...], depth: int) -> list[tuple[int, int]]:
    """The key ranges the snapshot is written in: about SNAPSHOT_RANGE_ROWS labels of the
    engines at the depth each (counted from the Delta log's statistics; one range for
    annotations, which have no labels)."""
    delta = lake.delta("labels")
    if delta is None:
        return list(WHOLE)
    files = file_index(delta)
    mine = pc.and_(pc.is_in(files.column("partition.engine_id"), pa.array(list(engine_ids))),
                   pc.equal(files.column("partition.depth"), depth))
    return key_ranges(int(pc.sum(files.filter(mine).column("num_records")).as_py() or 0),
                      SNAPSHOT_RANGE_ROWS)



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



def dataset_summary(con: Any, snapshot: Path) -> dict[bool, tuple[int, int]]:
    """{validation: (positions, keys hash)} of a run's snapshot (before max_positions)."""
    rows = query(con, named_query("nnue_dataset_summary"), {"snapshot": str(snapshot)}
                 ).to_pylist()
    return {bool(r["validation"]): (int(r["positions"]), int(r["keys_hash"])) for r in rows}

