"""Labelling: engine processes search pending positions and write label parts.

Each position gets one search after ``ucinewgame``; every completed iteration becomes the
label of its depth. A batch is worked by one engine process (a thread drives it: the work is
in the subprocess) and written as its own Parquet parts, at least every ``flush_seconds``, so
a killed run loses only unflushed positions and the next run labels exactly those again.
The engines are kept warm between batches by an :class:`EnginePool`, which the ``label`` step
opens and closes (``flows/label.py``); a batch run without one starts its own engine.
"""
from __future__ import annotations

import logging
import math
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pipelines.label.config import LabelConfig
from pipelines.label.identity import EngineIdentity, register_engine
from pipelines.label.info import InfoIteration, completed_depths, terminal_result
from pipelines.label.pending import PendingPosition, pending_positions
from pipelines.label.uci import EngineError, SearchOutput, UciClient
from warehouse import Lake

log = logging.getLogger(__name__)

Row = dict[str, Any]
MIN_BATCH = 32  # smallest batch worth a task of its own (a task costs Prefect ~50 ms of CPU)
LOOKAHEAD = 2   # searches queued per engine: the running one and the next


class EnginePool:
    """Idle engine processes kept between the batches of one step, by path and options; a
    context manager that quits them when the step ends.

    Starting Stockfish (loading its network) takes 0.1-0.3 s here, as long as 50 searches
    to depth 5, so batches borrow a warm process instead of starting their own.
    """

    def __init__(self) -> None:
        self._idle: dict[tuple[str, tuple[tuple[str, str], ...]], list[UciClient]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _key(path: str, options: dict[str, str]) -> tuple[str, tuple[tuple[str, str], ...]]:
        return path, tuple(sorted(options.items()))

    def take(self, path: str, options: dict[str, str]) -> UciClient:
        with self._lock:
            idle = self._idle.get(self._key(path, options), [])
            while idle:
                engine = idle.pop()
                if engine.alive:
                    return engine
        return UciClient(path, options)

    def give(self, engine: UciClient) -> None:
        if not engine.alive:
            return
        with self._lock:
            self._idle.setdefault(self._key(engine.path, engine.options), []).append(engine)

    def close(self) -> None:
        """Quit every idle engine."""
        with self._lock:
            engines = [e for idle in self._idle.values() for e in idle]
            self._idle.clear()
        for engine in engines:
            engine.quit()

    def __enter__(self) -> EnginePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class EngineSlot:
    """The one engine a batch uses: taken from the pool lazily (started, without one),
    replaced after a failure.

    ``start`` queues a search and returns at once, ``finish`` collects the oldest, so a batch
    keeps ``LOOKAHEAD`` searches in flight: the engine never waits for Python (parsing,
    writing, or a busy interpreter lock). Any failure kills the engine and loses every search
    in flight; ``finish`` raises it once, then the caller re-sends.
    """

    def __init__(self, config: LabelConfig, pool: EnginePool | None = None) -> None:
        self.config = config
        self.pool = pool
        self._engine: UciClient | None = None
        self._failure: EngineError | None = None
        self.in_flight = 0
        self.restarts = 0

    def start(self, fen: str, go: str) -> None:
        """Queue a search; after a failure nothing is sent until ``finish`` has reported it."""
        if self._failure is not None:
            return
        try:
            if self._engine is None:
                self._engine = self.pool.take(self.config.engine, self.config.uci_options) \
                    if self.pool is not None else UciClient(self.config.engine,
                                                            self.config.uci_options)
            self._engine.start_search(fen, go)
            self.in_flight += 1
        except EngineError as exc:
            self._failure = exc
            self._drop()

    def finish(self) -> SearchOutput:
        """The oldest queued search's output; EngineError if the engine failed."""
        if self._failure is not None or self._engine is None or not self.in_flight:
            failure, self._failure = self._failure, None
            self.in_flight = 0
            raise failure or EngineError("no search in flight")
        try:
            output = self._engine.finish_search(self.config.timeout_s)
        except EngineError:
            self._drop()
            raise
        self.in_flight -= 1
        return output

    def _drop(self) -> None:
        self.in_flight = 0
        if self._engine is not None:
            self._engine.kill()
            self._engine = None
            self.restarts += 1

    def release(self) -> None:
        """Give the engine back to the pool (quit it, without one); one still searching (the
        batch was abandoned) is killed, so its output can never be read as another
        position's."""
        if self._engine is not None:
            if self.in_flight:
                self._engine.kill()
            elif self.pool is not None:
                self.pool.give(self._engine)
            else:
                self._engine.quit()
            self._engine = None
            self.in_flight = 0


def engine_identity(config: LabelConfig) -> EngineIdentity:
    """Start the configured engine, read its ``id name``, quit it."""
    engine = UciClient(config.engine, config.uci_options)
    try:
        return EngineIdentity.from_id_name(engine.name, config.uci_options)
    finally:
        engine.quit()


def label_rows(position: PendingPosition, output: SearchOutput, go: str,
               engine_id: str, run_id: str, pv_moves: int) -> list[Row]:
    """One row per depth of ``position.depths`` that the search completed."""
    if output.bestmove is None:
        terminal = terminal_result(output.info)
        results = {depth: terminal for depth in position.depths}
    else:
        results = completed_depths(output.info, position.depths,
                                   last_is_complete=go.startswith("go depth"))
    white_to_move = position.fen.split()[1] == "w"
    now = datetime.now(UTC)
    return [label_row(position.position_key, engine_id, depth, result, white_to_move,
                      go[len("go "):], run_id, now, pv_moves)
            for depth, result in results.items()]


def label_row(position_key: int, engine_id: str, depth: int, result: InfoIteration,
              white_to_move: bool, search_limit: str, run_id: str, now: datetime,
              pv_moves: int) -> Row:
    sign = 1 if white_to_move else -1
    wdl = result.wdl or (None, None, None)
    return {
        "position_key": position_key, "engine_id": engine_id, "depth": depth,
        "score_cp": result.score_cp, "score_mate": result.score_mate,
        "white_cp": None if result.score_cp is None else sign * result.score_cp,
        "white_mate": None if result.score_mate is None else sign * result.score_mate,
        "wdl_win": wdl[0], "wdl_draw": wdl[1], "wdl_loss": wdl[2],
        "best_move": result.best_move, "pv": list(result.pv[:pv_moves]),
        "nodes": result.nodes, "seldepth": result.seldepth, "time_ms": result.time_ms,
        "search_limit": search_limit, "run_id": run_id, "labelled_at": now,
        "bound": result.bound,
    }


def error_row(position: PendingPosition, engine_id: str, attempts: int, message: str,
              run_id: str) -> Row:
    return {"position_key": position.position_key, "engine_id": engine_id, "fen": position.fen,
            "attempts": attempts, "message": message, "run_id": run_id,
            "recorded_at": datetime.now(UTC)}


@dataclass
class BatchResult:
    """What one batch did."""

    positions: int = 0        # positions that got their labels
    labels: int = 0           # label rows written
    errors: int = 0           # positions recorded in label_errors
    restarts: int = 0         # engine restarts after a crash or hang
    bounds: int = 0           # labels whose score is a bound (the depth's last line was one)

    def __add__(self, other: BatchResult) -> BatchResult:
        return BatchResult(self.positions + other.positions, self.labels + other.labels,
                           self.errors + other.errors, self.restarts + other.restarts,
                           self.bounds + other.bounds)


@dataclass
class LabelWriter:
    """Buffers label and error rows and writes them as parts at least every ``seconds``."""

    lake: Lake
    seconds: float
    labels: list[Row] = field(default_factory=list)
    errors: list[Row] = field(default_factory=list)
    flushed_at: float = field(default_factory=time.monotonic)

    def add(self, labels: list[Row], errors: list[Row]) -> None:
        self.labels += labels
        self.errors += errors
        if time.monotonic() - self.flushed_at >= self.seconds:
            self.flush()

    def flush(self) -> None:
        if self.labels:
            self.lake.write("labels", self.labels)
        if self.errors:
            self.lake.write("label_errors", self.errors)
        self.labels, self.errors = [], []
        self.flushed_at = time.monotonic()


def label_batch(lake: Lake, config: LabelConfig, engine_id: str,
                batch: Sequence[PendingPosition], run_id: str,
                pool: EnginePool | None = None) -> BatchResult:
    """Label ``batch`` with one engine process (borrowed from ``pool``, else its own) and
    write its parts (one unit's work).

    A crashed or hung engine is killed and restarted and the position retried up to
    ``config.retries`` times; then the position becomes a ``label_errors`` row.
    """
    slot = EngineSlot(config, pool)
    writer = LabelWriter(lake, config.flush_seconds)
    result = BatchResult()
    try:
        for position, go, outcome in searches(slot, config, batch):
            if isinstance(outcome, SearchOutput):
                rows = label_rows(position, outcome, go, engine_id, run_id, config.pv_moves)
                check_depths(position, rows, config)
                writer.add(rows, [])
                result.positions += bool(rows)
                result.labels += len(rows)
                result.bounds += sum(row["bound"] is not None for row in rows)
            else:
                writer.add([], [error_row(position, engine_id, config.retries + 1, outcome,
                                          run_id)])
                result.errors += 1
        writer.flush()
    finally:
        slot.release()
    result.restarts = slot.restarts
    return result


def searches(slot: EngineSlot, config: LabelConfig, batch: Sequence[PendingPosition]
             ) -> Iterator[tuple[PendingPosition, str, SearchOutput | str]]:
    """(position, go, output or the last error message) for each position, in order.

    Up to ``LOOKAHEAD`` searches are queued ahead, so parsing and writing overlap with the
    engine's work. When the engine fails, the oldest position is retried and the ones queued
    behind it are sent again (without counting an attempt against them).
    """
    positions = iter(batch)
    queue: deque[PendingPosition] = deque()

    def fill() -> None:
        while len(queue) < LOOKAHEAD and (position := next(positions, None)) is not None:
            slot.start(position.fen, config.go_for(position.depths))
            queue.append(position)

    fill()
    while queue:
        current = queue.popleft()
        go = config.go_for(current.depths)
        outcome: SearchOutput | str
        try:
            outcome = slot.finish()
        except EngineError as exc:
            behind = list(queue)
            queue.clear()
            outcome = retry(slot, current, go, str(exc), config.retries)
            for position in behind:
                slot.start(position.fen, config.go_for(position.depths))
                queue.append(position)
        fill()
        yield current, go, outcome


def retry(slot: EngineSlot, position: PendingPosition, go: str, message: str,
          retries: int) -> SearchOutput | str:
    """Search ``position`` again on a fresh engine up to ``retries`` times after the failure
    ``message``; the output, or the last failure's message."""
    for attempt in range(1, retries + 2):
        log.warning("position %d (%s), attempt %d of %d: %s", position.position_key,
                    position.fen, attempt, retries + 1, message)
        if attempt > retries:
            break
        slot.start(position.fen, go)
        try:
            return slot.finish()
        except EngineError as exc:
            message = str(exc)
    return message


def check_depths(position: PendingPosition, rows: list[Row], config: LabelConfig) -> None:
    """Warn of a depth search that gave fewer depths than asked (a nodes search may)."""
    if len(rows) < len(position.depths) and not config.nodes:
        log.warning("position %d (%s): %s gave only depths %s", position.position_key,
                    position.fen, config.go_for(position.depths), [r["depth"] for r in rows])


@dataclass(frozen=True)
class LabelPlan:
    """A run's engine, id and batches of pending positions."""

    identity: EngineIdentity
    run_id: str
    batches: list[list[PendingPosition]]

    @property
    def positions(self) -> int:
        return sum(len(b) for b in self.batches)


@dataclass(frozen=True)
class LabelSummary:
    """What a label run did."""

    engine_id: str
    run_id: str
    pending: int              # positions that needed labels when the run started
    positions: int            # positions labelled
    labels: int               # label rows written
    errors: int               # positions recorded as label errors
    restarts: int
    seconds: float
    bounds: int = 0           # labels whose score is a bound (labels.bound)

    @property
    def labels_per_s(self) -> float:
        return self.labels / self.seconds if self.seconds > 0 else 0.0

    def __str__(self) -> str:
        return (f"engine {self.engine_id}, run {self.run_id}: {self.positions}/{self.pending} "
                f"positions labelled, {self.labels} labels written, {self.errors} errors, "
                f"{self.bounds} labelled from a bound line (labels.bound), "
                f"{self.restarts} engine restarts, {self.seconds:.1f} s "
                f"({self.labels_per_s:.1f} labels/s)")


def new_run_id() -> str:
    return f"{datetime.now(UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"


def split_batches(pending: Sequence[PendingPosition], config: LabelConfig
                  ) -> list[list[PendingPosition]]:
    """Consecutive batches of at most ``batch_size`` positions, shrinking towards the end.

    Guided self-scheduling: each batch takes 1/(2 x workers) of what is left (at least
    ``MIN_BATCH``), so the workers finish together instead of one waiting on a last big batch.

    >>> [len(b) for b in split_batches([None] * 300, LabelConfig(workers=2, batch_size=60))]
    [60, 60, 45, 34, 32, 32, 32, 5]
    """
    batches, start = [], 0
    while start < len(pending):
        left = len(pending) - start
        size = config.batch_size if config.workers == 1 else \
            min(config.batch_size, max(MIN_BATCH, math.ceil(left / (2 * config.workers))))
        batches.append(list(pending[start:start + size]))
        start += size
    return batches


def plan_labels(lake: Lake, config: LabelConfig) -> LabelPlan:
    """Identify the engine (recording it), find pending positions and batch them."""
    identity = engine_identity(config)
    register_engine(lake, identity)
    pending = pending_positions(lake, config, identity.engine_id)
    log.debug("%d positions to label with %s", len(pending), identity.engine_id)
    return LabelPlan(identity, new_run_id(), split_batches(pending, config))


def summarize(plan: LabelPlan, results: Sequence[BatchResult], seconds: float) -> LabelSummary:
    total = sum(results, BatchResult())
    return LabelSummary(plan.identity.engine_id, plan.run_id, plan.positions, total.positions,
                        total.labels, total.errors, total.restarts, seconds, total.bounds)
