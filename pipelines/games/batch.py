"""A unit of games: a few game pairs of one tournament, played by one worker.

A batch carries all a worker needs but the engines: the tournament's config, its players'
specs, the openings of its slots and the engine builds the client runs. The worker first
checks that its own engines are those builds (own engines: chesslab's code revision;
external engines: the name and version they answer with) and that every program and model
file is there; a worker that differs refuses the batch (:class:`WorkerRefused`, one line)
instead of mixing builds in one match.
"""
from __future__ import annotations

import asyncio
import dataclasses
import functools
import os
import socket
import sys
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
from pipelines.tournament.adjudication import Adjudicator
from pipelines.tournament.config import TimeControl, TournamentConfig
from pipelines.tournament.game import EngineFailure, GamePlayer, GameRecord, Seat
from pipelines.tournament.openings import Opening
from pipelines.tournament.schedule import Slot

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
    config: TournamentConfig
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


def scaled(config: TournamentConfig, scale: float | None) -> TournamentConfig:
    """The config with its time control (or move time) scaled; limits in nodes or depth
    need no scaling."""
    if scale is None:
        return config
    tc = config.time_control
    changes: dict[str, object] = {}
    if tc is not None:
        moves = f"{tc.moves}/" if tc.moves else ""
        changes["tc"] = f"{moves}{tc.seconds * scale:.6g}+{tc.increment * scale:.6g}"
        TimeControl.parse(str(changes["tc"]))
    if config.movetime_ms:
        changes["movetime_ms"] = max(1, round(config.movetime_ms * scale))
    return dataclasses.replace(config, **changes) if changes else config  # type: ignore[arg-type]


def play_batch(batch: GameBatch, stop: Stop = never) -> BatchResult:
    """Check this worker, then play the batch's games in order with one engine process per
    player; ``stop`` (polled between games and every half second) ends it early, its
    engines stopped."""
    check_worker(batch)
    scale = clock_scale(batch.clock_reference_nps)
    result = BatchResult(batch.index, worker_name(), clock_scale=scale)
    started = time.perf_counter()
    try:
        asyncio.run(_play(batch, scaled(batch.config, scale), stop, result))
    finally:
        result.seconds = time.perf_counter() - started
    return result


async def _play(batch: GameBatch, config: TournamentConfig, stop: Stop,
                result: BatchResult) -> None:
    seats = {p.name: Seat(localized(p)) for p in batch.players}
    adjudicator = Adjudicator.from_config(config)
    player = GamePlayer(config, adjudicator)
    games = asyncio.create_task(_games(batch, player, seats, stop, result))
    watcher = asyncio.create_task(_watch(stop))
    try:
        await asyncio.wait({games, watcher}, return_when=asyncio.FIRST_COMPLETED)
        if not games.done():
            result.stopped = True
            games.cancel()
        await asyncio.gather(games, return_exceptions=True)
        if not games.cancelled() and games.exception() is not None:
            raise games.exception()  # type: ignore[misc]
    finally:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        await asyncio.gather(*(seat.stop(polite=not result.stopped)
                               for seat in seats.values()))
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


async def start_players(players: Sequence[EngineSpec]) -> None:
    """Start every player once (a wrong path or option is the user's error, not a tournament
    of forfeits): EngineFailure's reason, one line."""
    seats = [Seat(localized(p)) for p in players]
    try:
        outcomes = await asyncio.gather(*(seat.ensure_started() for seat in seats),
                                        return_exceptions=True)
    finally:
        await asyncio.gather(*(seat.stop() for seat in seats))
    for outcome in outcomes:
        if isinstance(outcome, EngineFailure):
            raise WorkerRefused(f"worker {worker_name()}: {outcome.reason}")
        if isinstance(outcome, BaseException):
            raise outcome


def preflight(batch: GameBatch) -> str:
    """The worker's checks and one start of every player, before any game; the worker."""
    check_worker(batch)
    asyncio.run(start_players(batch.players))
    return worker_name()
