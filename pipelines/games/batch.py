"""A unit of games: a few game pairs of one tournament, played by one worker.

A batch carries all a worker needs but the engines: the search limits and adjudication
rules of its games, the players' specs, its slots with their openings and the engine builds
the client runs. The worker first
checks that its own engines are those builds (own engines: chesslab's code revision;
external engines: the name and version they answer with) and that every program and model
file is there; a worker that differs refuses the batch (:class:`WorkerRefused`, one line)
instead of mixing builds in one match.
"""
from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engines.registry import (
    EngineSpec,
    EngineSpecError,
    check_player,
    is_own,
    own_version,
    read_id_name,
)
from pipelines.games.adjudication import Adjudication, Adjudicator
from pipelines.games.game import EngineFailure, GamePlayer, GameRecord, Opening, Seat, Slot
from pipelines.games.limits import Limits

log = logging.getLogger(__name__)

STOP_POLL_S = 0.5
Stop = Callable[[], bool]


class WorkerRefused(Exception):
    """This worker cannot play the batch: another engine build, a missing program or file.
    ``address``: the Dask worker's, when it ran on one."""

    address: str | None = None


def never() -> bool:
    return False


@dataclass(frozen=True)
class GameBatch:
    """Game pairs of one tournament (the slots of whole pairs, in schedule order)."""

    tournament_id: str
    index: int                               # the batch's number in the run's plan
    limits: Limits
    adjudication: Adjudication
    players: tuple[EngineSpec, ...]
    slots: tuple[Slot, ...]
    openings: dict[int, Opening]             # the slots' openings by index
    builds: dict[str, str]                   # player -> the build the client runs
    clock_reference_nps: float = 0.0         # 0: no clock scaling


@dataclass
class BatchResult:
    """The games of a batch and where they were played."""

    index: int
    worker: str
    records: list[GameRecord] = field(default_factory=list)
    clock_scale: float | None = None
    seconds: float = 0.0
    engine_seconds: float = 0.0
    stopped: bool = False                    # the run was stopped before the batch ended


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def engine_build(spec: EngineSpec) -> str:
    """The build a player runs here: own engines chesslab's version with the engines' code
    revision, external ones the name they answer with (Stockfish's carries its version)."""
    if is_own(spec):
        return own_version()
    return _external_build(spec.command, spec.protocol)


@functools.lru_cache(maxsize=64)
def _external_build(command: tuple[str, ...], protocol: str) -> str:
    return read_id_name(EngineSpec(name=Path(command[0]).name, command=command,
                                   protocol=protocol))


def client_builds(players: Sequence[EngineSpec]) -> dict[str, str]:
    return {p.name: engine_build(p) for p in players}


def localized(spec: EngineSpec) -> EngineSpec:
    """An own engine run by this worker's interpreter (the client's may live elsewhere)."""
    if is_own(spec) and spec.command[0] != sys.executable:
        return dataclasses.replace(spec, command=(sys.executable, *spec.command[1:]))
    return spec


CHECKED: set[str] = set()     # the batches' (players, builds) this worker has checked


def check_worker(batch: GameBatch) -> None:
    """WorkerRefused naming this worker, the player and what differs or is missing (once per
    set of players and builds in a worker process)."""
    check_players(batch.players, batch.builds)


def check_players(players: Sequence[EngineSpec], builds: dict[str, str]) -> None:
    """:func:`check_worker` for any players and the builds the client runs."""
    key = repr(([sorted(p.describe().items()) for p in players], sorted(builds.items())))
    if key in CHECKED:
        return
    _check_worker(players, builds)
    CHECKED.add(key)


def _check_worker(players: Sequence[EngineSpec], builds: dict[str, str]) -> None:
    here = worker_name()
    for spec in players:
        program = spec.command[0]
        if not is_own(spec) and not os.access(program, os.X_OK):
            raise WorkerRefused(f"worker {here} refuses: {spec.name}: no program {program}")
        try:
            check_player(spec, load=True)         # own engines' model files loaded
            build = engine_build(spec)
        except (EngineSpecError, OSError, ValueError) as exc:
            raise WorkerRefused(f"worker {here} refuses: {spec.name}: {exc}") from None
        expected = builds[spec.name]
        if build != expected:
            raise WorkerRefused(f"worker {here} refuses: {spec.name} is {build!r} here, "
                                f"the client runs {expected!r}")


@functools.lru_cache(maxsize=1)
def measured_nps() -> float:
    """This machine's ``chesslab bench`` nodes/s (the default bench, once per process)."""
    from engines.alphabeta.bench import BenchConfig, run_bench

    return run_bench(BenchConfig()).nps


def clock_scale(reference_nps: float) -> float | None:
    """How much longer this machine's clocks run: the reference over its bench speed."""
    if not reference_nps:
        return None
    return reference_nps / measured_nps()


# -- the engines of a worker thread -------------------------------------------------------------

#: Engines of a thread that has played no batch for this long are stopped (a run that ended
#: without releasing them: its client was killed).
IDLE_S = 10.0
REAP_EVERY_S = 1.0


def seat_key(spec: EngineSpec) -> str:
    return repr((spec.name, spec.command, spec.protocol, sorted(spec.options.items())))


@dataclass
class EngineHost:
    """The engine processes of one thread that plays batches, kept from one batch to the next
    (as a lane of the one-machine runner keeps its engines for the whole match): an engine
    starts once per worker thread, not once per batch. They live on an event loop of the
    thread's own, run only while a batch (or a release) holds ``lock``."""

    loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.new_event_loop)
    seats: dict[str, Seat] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    used: float = field(default_factory=time.monotonic)

    async def seats_for(self, players: Sequence[EngineSpec]) -> dict[str, Seat]:
        """A seat per player, the running ones reused; engines of players this batch does
        not have are stopped."""
        specs = {seat_key(s): s for s in map(localized, players)}
        await self.drop([k for k in self.seats if k not in specs], polite=True)
        return {p.name: self.seats.setdefault(k, Seat(s))
                for p, (k, s) in zip(players, specs.items(), strict=True)}

    async def drop(self, keys: Sequence[str], polite: bool) -> None:
        seats = [self.seats.pop(k) for k in keys]
        await asyncio.gather(*(seat.stop(polite=polite) for seat in seats))

    def release(self) -> int:
        """Stop every engine (the caller holds ``lock``); how many were running."""
        count = sum(seat.engine is not None for seat in self.seats.values())
        self.loop.run_until_complete(self.drop(list(self.seats), polite=True))
        return count


_HOSTS: dict[int, EngineHost] = {}
_HOSTS_LOCK = threading.Lock()
_REAPER: list[threading.Thread] = []


def engine_host() -> EngineHost:
    """This thread's engines (and, once per process, the reaper of idle ones)."""
    ident = threading.get_ident()
    with _HOSTS_LOCK:
        if not _REAPER:
            _REAPER.append(threading.Thread(target=_reap, name="chesslab-engine-reaper",
                                            daemon=True))
            _REAPER[0].start()
        return _HOSTS.setdefault(ident, EngineHost())


def release_engines(idle_s: float = 0.0) -> int:
    """Stop the engines of every thread of this process that has played nothing for
    ``idle_s`` (a thread playing a batch keeps its own); the engines stopped. The games
    runner calls it on every worker when a run ends (on the worker's event loop: the engines'
    loops run in a thread of their own)."""
    stopped = [0]

    def run() -> None:
        stopped[0] = _release(idle_s)

    thread = threading.Thread(target=run, name="chesslab-engine-release")
    thread.start()
    thread.join()
    return stopped[0]


def _release(idle_s: float) -> int:
    alive = {t.ident for t in threading.enumerate()}
    stopped = 0
    with _HOSTS_LOCK:
        hosts = list(_HOSTS.items())
    for ident, host in hosts:
        if time.monotonic() - host.used < idle_s or not host.lock.acquire(blocking=False):
            continue
        try:
            if host.seats:
                stopped += host.release()
            if ident not in alive:            # a finished thread's loop: closed
                host.loop.close()
                with _HOSTS_LOCK:
                    _HOSTS.pop(ident, None)
        finally:
            host.lock.release()
    return stopped


def _reap() -> None:
    while True:
        time.sleep(REAP_EVERY_S)
        try:
            _release(IDLE_S)
        except Exception:          # noqa: BLE001 - the reaper must outlive one bad release
            log.debug("engine reaper", exc_info=True)


def play_batch(batch: GameBatch, stop: Stop = never) -> BatchResult:
    """Check this worker, then play the batch's games in order with one engine process per
    player, kept running for this thread's next batch; ``stop`` (polled between games and
    every half second) ends it early, its engines stopped."""
    check_worker(batch)
    scale = clock_scale(batch.clock_reference_nps)
    result = BatchResult(batch.index, worker_name(), clock_scale=scale)
    started = time.perf_counter()
    host = engine_host()
    with host.lock:
        try:
            host.loop.run_until_complete(_play(batch, batch.limits.scaled(scale), stop,
                                               result, host))
        finally:
            host.used = time.monotonic()
            result.seconds = time.perf_counter() - started
    return result


async def _play(batch: GameBatch, limits: Limits, stop: Stop,
                result: BatchResult, host: EngineHost) -> None:
    seats = await host.seats_for(batch.players)
    adjudicator = Adjudicator.from_rules(batch.adjudication)
    player = GamePlayer(limits, adjudicator)
    games = asyncio.create_task(_games(batch, player, seats, stop, result))
    watcher = asyncio.create_task(_watch(stop))
    finished = False
    try:
        await asyncio.wait({games, watcher}, return_when=asyncio.FIRST_COMPLETED)
        if not games.done():
            result.stopped = True
            games.cancel()
        await asyncio.gather(games, return_exceptions=True)
        if not games.cancelled() and games.exception() is not None:
            raise games.exception()  # type: ignore[misc]
        finished = not result.stopped
    finally:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        if not finished:            # stopped or failed: its engines go (killed when stopped)
            await host.drop(list(host.seats), polite=not result.stopped)
        adjudicator.close()


async def _games(batch: GameBatch, player: GamePlayer, seats: dict[str, Seat], stop: Stop,
                 result: BatchResult) -> None:
    for slot in batch.slots:
        if stop():
            result.stopped = True
            return
        record = await player.play(slot, batch.openings[slot.opening_index],
                                   seats[slot.white], seats[slot.black])
        result.records.append(record)
        result.engine_seconds += record.engine_seconds


async def _watch(stop: Stop) -> None:
    while not await asyncio.to_thread(stop):
        await asyncio.sleep(STOP_POLL_S)


async def start_players(players: Sequence[EngineSpec], host: EngineHost) -> None:
    """Start every player once (a wrong path or option is the user's error, not a tournament
    of forfeits): EngineFailure's reason, one line. The started engines stay on ``host``
    for the thread's first batch (all are stopped when one fails)."""
    seats = (await host.seats_for(players)).values()
    outcomes = await asyncio.gather(*(seat.ensure_started() for seat in seats),
                                    return_exceptions=True)
    if any(isinstance(outcome, BaseException) for outcome in outcomes):
        await host.drop(list(host.seats), polite=True)
    for outcome in outcomes:
        if isinstance(outcome, EngineFailure):
            raise WorkerRefused(f"worker {worker_name()}: {outcome.reason}")
        if isinstance(outcome, BaseException):
            raise outcome


def preflight(batch: GameBatch) -> str:
    """The worker's checks and one start of every player, before any game (the engines kept
    for the first batch this thread plays); the worker."""
    check_worker(batch)
    host = engine_host()
    with host.lock:
        try:
            host.loop.run_until_complete(start_players(batch.players, host))
        finally:
            host.used = time.monotonic()
    return worker_name()
