"""The NNUE training data: the warehouse's examples, snapshotted, filtered (quiet positions),
and streamed in training batches encoded in compiled code (HalfKP or the 768 features).
Split from ``pipelines.train.nnue``, which re-exports these names.
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
from pipelines.train.config import NnueConfig
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

QUERY = "nnue_dataset"

VIEW = "nnue_examples"

SNAPSHOT = "dataset.parquet"

# Labels a query of the snapshot's writer joins (about: the labels of the key range; the
# snapshot is written range by range, each range's join and sort in memory of its own).
SNAPSHOT_RANGE_ROWS = 1 << 20

# Record batches read ahead of the encoder (each read_batch rows: 4 x 65536 by default, about
# one key range of the snapshot).
READ_AHEAD = 4



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
    features are computed by ``threads`` threads (compiled, without the GIL) while the model
    trains on the previous ones; the batches and their order do not depend on ``threads``.
    ``set_epoch`` picks the epoch's shuffle."""

    def __init__(self, split: SplitQuery, batch_size: int, read_batch: int,
                 arch: str = "halfkp", threads: int = 1) -> None:
        if threads < 1:
            raise ValueError(f"threads: must be at least 1, got {threads!r}")
        self.split, self.batch_size, self.read_batch = split, batch_size, read_batch
        self.encoder = psq_column if arch == "psq768" else halfkp_column
        self.threads = threads
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __iter__(self) -> Iterator[NnueBatch]:
        return prefetched(self.batches())

    def batches(self) -> Iterator[NnueBatch]:
        """Training batches in the epoch's order, encoded by the thread pool in order
        (:func:`pooled`) as the query gives rows; :func:`prefetched` runs this in the
        background, overlapping it with training."""
        return pooled(self.encode, self.pieces(), self.threads)

    def pieces(self) -> Iterator[list[pa.RecordBatch]]:
        """The rows of each training batch, as slices of the record batches (two or more
        where a training batch spans record batches), all of batch_size but the last. The
        record batches are read ahead in a thread of their own, so the next key range's query
        runs while this one's rows are encoded."""
        carry: list[pa.RecordBatch] = []
        carried = 0
        for record_batch in prefetched(stream_batches(self.split, self.epoch, self.read_batch),
                                       READ_AHEAD):
            start = 0
            if carry:  # complete the rows left over from the last record batch
                start = self.batch_size - carried
                carry.append(record_batch.slice(0, start))
                carried += carry[-1].num_rows
                if carried < self.batch_size:
                    continue
                yield carry
                carry, carried = [], 0
            for offset in range(start, record_batch.num_rows, self.batch_size):
                rows = record_batch.slice(offset, self.batch_size)
                if rows.num_rows == self.batch_size:
                    yield [rows]
                else:
                    carry, carried = [rows], rows.num_rows
        if carry:
            yield carry

    def encode(self, pieces: list[pa.RecordBatch]) -> NnueBatch:
        """One training batch from its rows (in a pool thread)."""
        fens = pa.chunked_array([piece.column("fen") for piece in pieces])
        return NnueBatch(
            torch.from_numpy(self.encoder(fens)),
            torch.from_numpy(np.concatenate([piece.column("score_cp").to_numpy(
                zero_copy_only=False) for piece in pieces]).astype(np.float32)),
            torch.from_numpy(np.concatenate([piece.column("result").to_numpy(
                zero_copy_only=False) for piece in pieces]).astype(np.float32)))



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

