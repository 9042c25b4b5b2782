"""``chesslab datagen``: the games of :mod:`pipelines.datagen.games` in batches on the games
runner, each batch written as one gzip PGN file as it comes back.

A batch is ``batch_games`` consecutive game numbers; its file is
``OUT/PREFIX-bNNNNN.pgn.gz``, written under a temporary name and renamed, so a file is
whole or absent. Game ``g`` of seed ``s`` is always the same game, so a batch played twice
(its worker died) writes the same file, and a rerun plays only the batches whose files are
missing. Workers check that they run the engine the client runs (the name and version it
answers with) before the first batch.
"""
from __future__ import annotations

import gzip
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import chess.engine

from engines.registry import EngineSpec
from pipelines.datagen.games import GameSettings, play
from pipelines.games.batch import WorkerRefused, _external_build, worker_name
from pipelines.games.config import GamesError, GamesOptions


class DatagenError(ValueError):
    """Bad datagen input: one line."""


@dataclass(frozen=True)
class DatagenConfig:
    engine: str = field(default="/usr/games/stockfish", metadata={
        "help": "the UCI engine binary (its path on every worker)"})
    depth: int = field(default=8, metadata={"help": "search depth of every move"})
    games: int = field(default=100, metadata={"help": "games in all (game numbers 0..N-1)"})
    random_plies: int = field(default=8, metadata={"help": "random plies of each start"})
    seed: int = field(default=1, metadata={"help": "seed of the random starts"})
    resign: int = field(default=1000, metadata={"help": "adjudication score, centipawns"})
    max_plies: int = field(default=400, metadata={"help": "plies after which a game stops (*)"})
    hash_mb: int = field(default=16, metadata={"help": "MB of hash per engine"})
    batch_games: int = field(default=8, metadata={
        "help": "games per unit of work and per PGN file"})
    out: str | None = field(default=None, metadata={
        "help": "folder of the PGN batches (default: HOME/datagen)"})
    prefix: str | None = field(default=None, metadata={
        "help": "file name prefix (default: ENGINE-dDEPTH-sSEED)"})
    concurrency: int = field(default=0, metadata={
        "help": "games at once without --cluster/--workers (0: the cores)"})
    ingest: bool = field(default=True, metadata={"help": "ingest the PGN batches after"})
    runner: GamesOptions = field(default_factory=GamesOptions, metadata={
        "help": "where the games are played (the --cluster, --workers, ... options)"})

    def __post_init__(self) -> None:
        for name in ("depth", "games", "max_plies", "hash_mb", "batch_games"):
            if getattr(self, name) < 1:
                raise DatagenError(f"datagen: --{name.replace('_', '-')} must be >= 1, got "
                                   f"{getattr(self, name)!r}")
        if self.random_plies < 0 or self.concurrency < 0:
            raise DatagenError("datagen: --random-plies and --concurrency must be >= 0")

    @property
    def settings(self) -> GameSettings:
        return GameSettings(self.depth, self.random_plies, self.seed, self.resign,
                            self.max_plies)

    @property
    def workers(self) -> int:
        return self.concurrency or os.cpu_count() or 1


@dataclass(frozen=True)
class DatagenBatch:
    index: int
    engine: str
    build: str                      # the name the engine answers with on the client
    settings: GameSettings
    hash_mb: int
    games: tuple[int, ...]


@dataclass
class DatagenResult:
    index: int
    worker: str
    pgn: list[str] = field(default_factory=list)
    plies: int = 0
    seconds: float = 0.0
    stopped: bool = False


@dataclass
class DatagenSummary:
    out: str
    files: list[str]
    planned: int                    # batches
    already_done: int
    played_games: int = 0
    plies: int = 0
    seconds: float = 0.0
    per_worker: dict[str, int] = field(default_factory=dict)

    def __str__(self) -> str:
        rate = self.plies / self.seconds if self.seconds else 0.0
        return (f"datagen: {self.played_games} games, {self.plies} plies in "
                f"{self.seconds:.0f} s ({rate:.0f} plies/s) in {self.planned - self.already_done}"
                f" batches ({self.already_done} already there) -> {self.out}")


def engine_build(engine: str) -> str:
    if not os.access(engine, os.X_OK):
        raise WorkerRefused(f"worker {worker_name()} refuses: no engine {engine}")
    try:
        return _external_build((engine,), "uci")
    except Exception as exc:  # noqa: BLE001 - the engine's own failure, as one line
        raise WorkerRefused(f"worker {worker_name()} refuses: {engine}: "
                            f"{str(exc).splitlines()[0]}") from None


def check_datagen(batch: DatagenBatch) -> str:
    """This worker runs the engine the client runs; its name."""
    build = engine_build(batch.engine)
    if build != batch.build:
        raise WorkerRefused(f"worker {worker_name()} refuses: {batch.engine} is {build!r} "
                            f"here, the client runs {batch.build!r}")
    return worker_name()


def play_datagen(batch: DatagenBatch, stop: Callable[[], bool]) -> DatagenResult:
    """The batch's games, one engine process; ``stop`` is asked between games."""
    check_datagen(batch)
    result = DatagenResult(batch.index, worker_name())
    started = time.perf_counter()
    spec = EngineSpec(name=Path(batch.engine).name, command=(batch.engine,))
    with chess.engine.SimpleEngine.popen_uci(list(spec.command)) as engine:
        engine.configure({"Threads": 1, "Hash": batch.hash_mb})
        for index in batch.games:
            if stop():
                result.stopped = True
                break
            game = play(engine, index, batch.settings, batch.build, "chesslab datagen")
            result.pgn.append(str(game))
            result.plies += sum(1 for _ in game.mainline_moves())
    result.seconds = time.perf_counter() - started
    return result


def remote_datagen(batch: DatagenBatch, stop_name: str) -> DatagenResult:
    from pipelines.games.cluster import on_worker

    return on_worker(play_datagen, batch, stop_name)


def prefix_of(config: DatagenConfig, build: str) -> str:
    name = build.split()[0].lower() if build else Path(config.engine).name
    return config.prefix or f"{name}-d{config.depth}-s{config.seed}"


def batch_file(out: Path, prefix: str, index: int) -> Path:
    return out / f"{prefix}-b{index:05d}.pgn.gz"


def write_batch(path: Path, result: DatagenResult) -> None:
    """The batch's games as one gzip file, whole or absent (renamed into place)."""
    partial = path.with_name(path.name + ".partial")
    with gzip.open(partial, "wt") as handle:
        for text in result.pgn:
            print(text, file=handle, end="\n\n")
    os.replace(partial, path)


def generate(config: DatagenConfig, out: Path,
             progress: Callable[[str], None]) -> DatagenSummary:
    """Play the batches whose files are missing; every batch file of the run."""
    from pipelines.games.cluster import check_workers, open_cluster, run_batches

    started = time.perf_counter()
    build = engine_build(config.engine)
    prefix = prefix_of(config, build)
    out.mkdir(parents=True, exist_ok=True)
    numbers = list(range(config.games))
    batches = [DatagenBatch(index, config.engine, build, config.settings, config.hash_mb,
                            tuple(numbers[start:start + config.batch_games]))
               for index, start in enumerate(range(0, len(numbers), config.batch_games))]
    files = [str(batch_file(out, prefix, b.index)) for b in batches]
    todo = [b for b in batches if not batch_file(out, prefix, b.index).exists()]
    summary = DatagenSummary(str(out), files, len(batches), len(batches) - len(todo))

    def finish(result: DatagenResult) -> bool:
        if result.stopped:
            return True
        write_batch(batch_file(out, prefix, result.index), result)
        summary.played_games += len(result.pgn)
        summary.plies += result.plies
        summary.per_worker[result.worker] = summary.per_worker.get(result.worker, 0) + \
            len(result.pgn)
        done = sum(1 for f in files if Path(f).exists())
        elapsed = time.perf_counter() - started
        progress(f"datagen: [{done}/{len(batches)} batches] {summary.played_games} games, "
                 f"{summary.plies / max(elapsed, 1e-9):.0f} plies/s; workers: " + ", ".join(
                     f"{w} {g}" for w, g in sorted(summary.per_worker.items())))
        return True

    if todo:
        try:
            with open_cluster(config.runner, config.workers) as client:
                workers = check_workers(client, todo[0], progress, check_datagen)
                run_batches(client, workers, todo, finish, progress, remote_datagen)
        except GamesError as exc:
            raise DatagenError(str(exc)) from None
    summary.seconds = time.perf_counter() - started
    return summary
