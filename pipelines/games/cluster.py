"""The games runner: batches of games on a Dask cluster, their results added up by the client.

:func:`open_cluster` connects to a scheduler (``--cluster``) or starts a local cluster: worker
processes (``--workers N``) or, for the one-machine default, one worker in this process whose
threads play ``--concurrency`` games. :func:`run_batches` hands the batches out (in plan order,
a batch to a free worker thread), gives each result to the caller as it comes back and stops
everything when the caller says so (an SPRT's verdict, Ctrl-C): no new batch starts, running
ones are cancelled and their workers stop their engines (a Dask ``Event`` each batch
waits on at the scheduler).

A worker that dies loses its running batch, which the scheduler gives to another worker: the
caller hears of each lost worker with the batches it was playing (:class:`LostWorker`, from
the scheduler's ``remove-worker`` event), so a run can say that a machine went away and which
games were played again where. A worker that refuses a batch
(:class:`~pipelines.games.batch.WorkerRefused`: one that joined after the start-up checks
with another build) is left out and the batch goes elsewhere; with no worker left, or with
the scheduler gone, the run ends with :class:`~pipelines.games.config.GamesError` (one line).
"""
from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pipelines.games.batch import (
    BatchResult,
    GameBatch,
    WorkerRefused,
    play_batch,
    preflight,
    release_engines,
    worker_name,
)
from pipelines.games.config import GamesError, GamesOptions

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 10
# A batch's stop watch waits this long at the scheduler at a time (the longest its thread
# outlives the batch).
STOP_WAIT_S = 2.0
# A batch on a worker that dies is played again elsewhere; a batch whose workers keep dying
# (it kills them) is given up after this many.
ALLOWED_FAILURES = 3
# How long the client waits for a result before it looks for lost workers again (as long as
# Dask's as_completed waits between its own looks).
WAKE_S = 0.1

Report = Callable[[str], None]

#: Dask's background work, cut for games: its statistical profiler (every worker thread's
#: stack every 10 ms, for the dashboard), the event-loop tick (every 20 ms), the memory and
#: system monitors (every 100 and 500 ms). With a batch running on each of 2 local workers
#: they took 11% of a core (2 worker processes and the client); with these, 1.3%: CPU an
#: engine searching a fixed number of nodes no longer shares with them.
QUIET_CLUSTER = {"distributed.worker.profile.enabled": False,
                 "distributed.admin.tick.interval": "1s",
                 "distributed.worker.memory.monitor-interval": "1s",
                 "distributed.admin.system-monitor.interval": "5s"}


@contextlib.contextmanager
def open_cluster(options: GamesOptions, concurrency: int) -> Iterator[Any]:
    """A ``distributed.Client`` on the cluster the options name; closed after, in order
    (:func:`shut_down`), under the same settings."""
    import dask
    from distributed import Client

    settings = {"distributed.scheduler.allowed-failures": ALLOWED_FAILURES,
                "distributed.worker.daemon": False,        # workers start engine processes
                "distributed.admin.tick.limit": "60s",      # engines keep a small box busy
                "distributed.scheduler.worker-saturation": 1.0,
                **QUIET_CLUSTER}
    quiet(logging.getLogger("distributed"))
    with dask.config.set(settings):
        cluster = None
        if options.cluster:
            try:
                client = Client(options.cluster, timeout=CONNECT_TIMEOUT_S,
                                set_as_default=False)
            except (OSError, TimeoutError) as exc:
                raise GamesError(f"no Dask scheduler at {options.cluster}: "
                                 f"{type(exc).__name__}: {exc}") from None
        else:
            cluster = local_cluster(options, concurrency)
            try:
                client = Client(cluster, set_as_default=False)
            except BaseException:
                shut_down(None, cluster)
                raise
        try:
            yield client
        finally:
            shut_down(client, cluster)


def local_cluster(options: GamesOptions, concurrency: int) -> Any:
    """``--workers N`` worker processes, or (0) one worker in this process whose threads play
    ``concurrency`` games."""
    from distributed import LocalCluster

    processes = options.workers > 0
    return LocalCluster(
        n_workers=options.workers or 1, processes=processes,
        threads_per_worker=(options.local_games_per_worker() if processes
                            else max(1, concurrency)),
        dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR)


def shut_down(client: Any, cluster: Any) -> None:
    """The client first (nothing more is asked of the cluster), then a local cluster (its
    workers, then its scheduler). A connection closed while they go is not an error: Dask
    logs it with its traceback (a worker's heartbeat to a scheduler already gone, under
    load); those lines are dropped, here and on the workers, while closing only."""
    with contextlib.suppress(Exception):
        if client is not None and cluster is not None:
            client.run(silence_shutdown_noise, os.getpid())
    with shutdown_noise_silenced():
        try:
            if client is not None:
                client.close()
        finally:
            if cluster is not None:
                cluster.close()


class ShutdownNoise(logging.Filter):
    """Drops Dask's records of a connection closed under it (``CommClosedError``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        from distributed.comm.core import CommClosedError

        if not record.name.startswith("distributed"):
            return True
        error = record.exc_info[1] if record.exc_info else None
        return not (isinstance(error, CommClosedError)
                    or "CommClosedError" in record.getMessage())


def noisy_handlers() -> list[logging.Handler]:
    """The handlers Dask's records reach: the ``distributed`` logger's and the root's."""
    return [*logging.getLogger("distributed").handlers, *logging.getLogger().handlers]


def silence_shutdown_noise(client_pid: int) -> None:
    """On a worker process about to be closed: its Dask handlers drop the shutdown noise (a
    worker in the client's process is left alone: that filter would outlive the close)."""
    if os.getpid() == client_pid:
        return
    for handler in noisy_handlers():
        if not any(isinstance(f, ShutdownNoise) for f in handler.filters):
            handler.addFilter(ShutdownNoise())


@contextlib.contextmanager
def shutdown_noise_silenced() -> Iterator[None]:
    """This process's Dask handlers drop the shutdown noise while the block runs."""
    noise = ShutdownNoise()
    handlers = noisy_handlers()
    for handler in handlers:
        handler.addFilter(noise)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(noise)


def quiet(logger: logging.Logger) -> None:
    """Dask's INFO lines (workers coming and going) only with chesslab's ``--verbose``."""
    if not logging.getLogger().isEnabledFor(logging.DEBUG):
        logger.setLevel(max(logger.level, logging.ERROR))


def remote_play(batch: GameBatch, stop_name: str) -> BatchResult:
    """A batch of tournament games on a worker, stopped when the run's stop event is set."""
    return on_worker(play_batch, batch, stop_name)


def on_worker(play: Callable[[Any, Callable[[], bool]], Any], batch: Any,
              stop_name: str) -> Any:
    """``play(batch, stop)`` on this worker; a refusal names the worker's address."""
    from distributed import get_worker

    watch = StopWatch(stop_name)
    try:
        return play(batch, watch)
    except WorkerRefused as exc:
        exc.address = get_worker().address
        raise
    finally:
        watch.close()


class StopWatch:
    """Whether the run's Dask event ``name`` is set, for one batch: a thread waits on it at
    the scheduler, which answers when it is set (or after ``STOP_WAIT_S``, and the thread
    waits again while the batch runs), so a batch asks nothing while it plays; calling the
    watch reads what the thread saw. When the scheduler cannot be asked, the event counts
    as set: an orphaned batch stops its engines."""

    def __init__(self, name: str, event: Any = None) -> None:
        """``event``: the ``distributed.Event`` to watch (default: ``name`` on this worker's
        client)."""
        from distributed import Event, get_client

        self.event = event if event is not None else Event(name, client=get_client())
        self.seen = threading.Event()
        self.closed = threading.Event()
        threading.Thread(target=self.watch, name=f"chesslab-stop-{name}", daemon=True).start()

    def watch(self) -> None:
        while not self.closed.is_set():
            try:
                if not self.event.wait(timeout=STOP_WAIT_S):
                    continue
            except BaseException:      # noqa: BLE001 - no scheduler (or its client closed)
                pass
            self.seen.set()
            return

    def __call__(self) -> bool:
        return self.seen.is_set()

    def close(self) -> None:
        """The batch is over: the thread ends after its current wait."""
        self.closed.set()


def check_workers(client: Any, batch: Any, report: Report,
                  check: Callable[[Any], str] = preflight) -> list[str]:
    """Every worker runs ``check(batch)`` (default: checks its builds and starts each player
    once); refusing workers are reported and left out. The addresses of the workers that
    will play."""
    workers = list(client.scheduler_info()["workers"])
    if not workers:
        raise GamesError("the Dask cluster has no worker")
    futures = {address: client.submit(refusal_or_name, check, batch, workers=[address],
                                      pure=False, allow_other_workers=False,
                                      key=f"preflight-{uuid.uuid4().hex}")
               for address in workers}
    good, reasons = [], []
    for address, future in futures.items():
        outcome = future.result()
        if isinstance(outcome, WorkerRefused):
            reasons.append(str(outcome))
            continue
        log.debug("worker %s (%s) ready", address, outcome)
        good.append(address)
    if not good:     # the one error line says it (once)
        raise GamesError(reasons[0] if len(set(reasons)) == 1 else "every worker refused: " +
                         "; ".join(reasons))
    for reason in reasons:
        report(reason)
    return good


@dataclass(frozen=True)
class LostWorker:
    """A worker the scheduler removed while the run played (killed, its machine gone): its
    address, its name (``host:pid``, as a batch result names its worker; the address when it
    never said), and the batches it was playing, which the scheduler gives to another worker.

    >>> LostWorker("tcp://10.0.0.7:40123", "box:4242", (3, 5)).describe()
    'worker box:4242 (tcp://10.0.0.7:40123) lost; batch 3, batch 5 to be played again'
    """

    address: str
    name: str
    batches: tuple[int, ...]

    def describe(self, batch: Callable[[int], str] = "batch {}".format) -> str:
        """One line; ``batch`` words a batch from its index."""
        where = self.name if self.name == self.address else f"{self.name} ({self.address})"
        again = (f"; {', '.join(map(batch, self.batches))} to be played again"
                 if self.batches else "; it was playing no batch")
        return f"worker {where} lost{again}"


class WorkerWatch:
    """The scheduler's word on workers for one run: the ``remove-worker`` and ``add-worker``
    events of its ``all`` topic, kept until the client's loop reads them (the handler runs on
    the client's event loop, which must not wait on anything), and each worker's name."""

    TOPIC = "all"

    def __init__(self, client: Any) -> None:
        self.client = client
        self.events: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        self.woken = threading.Event()
        self.names: dict[str, str] = {}
        client.subscribe_topic(self.TOPIC, self.heard)
        self.learn_names()

    def heard(self, event: tuple[float, Any]) -> None:
        message = event[1]
        if isinstance(message, dict) and message.get("action") in ("remove-worker",
                                                                   "add-worker"):
            self.events.put(message)
            self.woken.set()

    def learn_names(self, workers: list[str] | None = None) -> None:
        """Each worker's ``host:pid`` (a worker that does not answer keeps its address)."""
        with contextlib.suppress(Exception):
            self.names.update(self.client.run(worker_name, workers=workers))

    def lost(self, batch_of: Callable[[str], int | None]) -> list[LostWorker]:
        """The workers removed since the last call, each with the indexes of this run's
        batches it was playing or held unfetched (``batch_of``: a task key's batch). Workers
        that joined are asked their names, in one call, except those already removed again:
        asking a worker that is gone holds the client for Dask's connect timeout (30 s)."""
        messages = []
        while not self.events.empty():
            messages.append(self.events.get())
        gone = {str(m["worker"]) for m in messages if m["action"] == "remove-worker"}
        joined = [str(m["worker"]) for m in messages if m["action"] == "add-worker"]
        if asked := [address for address in joined if address not in gone]:
            self.learn_names(asked)
        found = []
        for message in messages:
            if message["action"] == "remove-worker":
                address = str(message["worker"])
                keys = {*message.get("processing-tasks", ()),
                        *message.get("lost-computed-tasks", ())}
                batches = sorted(i for i in map(batch_of, keys) if i is not None)
                found.append(LostWorker(address, self.names.get(address, address),
                                        tuple(batches)))
        return found

    def wait(self) -> None:
        """Until the scheduler says something or ``WAKE_S`` passed."""
        self.woken.wait(WAKE_S)
        self.woken.clear()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.unsubscribe_topic(self.TOPIC)


def refusal_or_name(check: Callable[[Any], str], batch: Any) -> str | WorkerRefused:
    """``check(batch)`` on a worker, its refusal returned as a value: raised, Dask's worker
    logs it as "Compute Failed" with a traceback, a dozen lines before the one that says it."""
    try:
        return check(batch)
    except WorkerRefused as exc:
        return exc


def run_batches(client: Any, workers: list[str], batches: Sequence[Any],
                on_result: Callable[[Any], bool], report: Report,
                play: Callable[[Any, str], Any] = remote_play,
                on_lost: Callable[[LostWorker], None] | None = None) -> None:
    """Play ``batches`` on the cluster's checked ``workers`` (:func:`check_workers`);
    ``on_result`` takes each result as it comes back and returns False to stop the run
    (nothing more is handed to it). ``play(batch, stop_name)`` plays one batch on a worker
    (default: a tournament's :class:`GameBatch`); a batch has an ``index``, its rank.
    ``on_lost`` hears of each worker lost during the run (default: ``report`` gets a line);
    its batches come back through ``on_result`` when another worker has played them."""
    from distributed import Event, as_completed

    if not batches:
        return
    stop_name = f"chesslab-stop-{uuid.uuid4().hex}"
    stop = Event(stop_name, client=client)
    by_key: dict[str, Any] = {}
    everyone = set(client.scheduler_info()["workers"])
    restrict = [] if everyone <= set(workers) else workers
    todo = list(batches)
    running: list[Any] = []
    watch = WorkerWatch(client)
    tell = on_lost or (lambda lost: report(lost.describe()))

    def submit(batch: Any) -> Any:
        # a batch restricted to workers is not queued nor stolen: restricted only when a
        # worker refused
        future = client.submit(play, batch, stop_name, pure=False,
                               priority=-batch.index, workers=restrict or None,
                               key=f"games-{batch.index}-{uuid.uuid4().hex}")
        by_key[future.key] = batch
        running.append(future)
        return future

    def capacity() -> int:
        """Batches in flight: one per worker thread (the next batch goes out when one comes
        back, so the scheduler always has a free thread for it, in plan order)."""
        threads = client.nthreads()
        return max(1, sum(n for w, n in threads.items() if not restrict or w in restrict))

    def batch_of(key: str) -> int | None:
        """The index of the batch a task of this run plays (None: not one of this run's).
        Any of them: a lost worker's batch may be played again and back before the loss is
        read (it once read "playing no batch" then)."""
        return by_key[key].index if key in by_key else None

    def next_done() -> Any:
        """The next finished batch's future; lost workers told as the scheduler names them."""
        while not pending.has_ready():
            for lost in watch.lost(batch_of):
                tell(lost)
            watch.wait()
        return next(pending)

    pending = as_completed([submit(todo.pop(0))
                            for _ in range(min(capacity(), len(todo)))], loop=client.loop)
    try:
        while not pending.is_empty():
            future = next_done()
            running.remove(future)
            batch = by_key[future.key]
            try:
                result = future.result()
            except WorkerRefused as exc:        # a worker that joined after the checks
                report(str(exc))
                restrict = [w for w in (restrict or list(everyone)) if w != exc.address]
                if not restrict:
                    raise GamesError(str(exc)) from None
                pending.add(submit(batch))
                continue
            except Exception as exc:
                raise lost_or_failed(client, exc) from None
            # the freed thread gets its next batch before the client stores this one (a
            # verdict in ``on_result`` cancels it: the run still stops within one batch)
            threads = capacity()
            while todo and len(running) < threads:
                pending.add(submit(todo.pop(0)))
            if not on_result(result):
                break
        for lost in watch.lost(batch_of):   # lost as the last batches came back
            tell(lost)
    except OSError as exc:              # asking a scheduler that went away (CommClosedError)
        raise lost_or_failed(client, exc) from None
    finally:
        watch.close()
        with contextlib.suppress(Exception):
            stop.set()
        with contextlib.suppress(Exception):
            client.cancel([f for f in running if not f.done()], force=True)
        release(client)


def release(client: Any) -> None:
    """Every worker stops the engines its threads kept between batches (a thread still
    playing a stopped batch stops its own; a worker not answering in time, its reaper)."""
    with contextlib.suppress(Exception):
        client.run(release_engines)


def lost_or_failed(client: Any, exc: BaseException) -> BaseException:
    """A lost scheduler as one line (GamesError); any other failure as it is."""
    from distributed.client import FutureCancelledError

    if client.status != "running" or isinstance(exc, (OSError, FutureCancelledError)):
        address = getattr(client.scheduler, "address", None) or "the scheduler"
        return GamesError(f"lost the Dask scheduler {address}: {type(exc).__name__}: {exc}; "
                          "finished games are stored, run the same command again to resume")
    return exc
