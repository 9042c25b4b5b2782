"""``chesslab datagen``: the games of :mod:`pipelines.datagen.games` in batches on the games
runner, each batch written as one file as it comes back: binpack (the default: every searched
position with its score, best move, ply and result, Stockfish's training format, about 2.5
bytes a position) or a gzip PGN annotated with ``[%eval]``.

The engine is a UCI binary (``/usr/games/stockfish``, spoken to over raw pipes) or one of
chesslab's own engines given as a player spec (``alphabeta:eval=hce``), which plays in the
worker's own process: no UCI, no text round trip. A batch is ``batch_games`` consecutive game
numbers; its file is ``OUT/PREFIX-bNNNNN.binpack`` (or ``.pgn.gz``), written under a
temporary name and renamed, so a file is whole or absent. Game ``g`` of seed ``s`` is always
the same game, so a batch played twice (its worker died) writes the same file, and a rerun
plays only the batches whose files are missing. Workers check that they run the engine the
client runs (the name and version it answers with, or chesslab's version) before the first
batch.
"""
from __future__ import annotations

import dataclasses
import gzip
import io
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from engines.config_choices import choice_problem
from engines.registry import EngineSpec, EngineSpecError, is_own, parse_engine
from pipelines.datagen.games import (
    GameRecord,
    GameSettings,
    Searcher,
    UciSearcher,
    binpack_entries,
    play_game,
    to_pgn,
)
from pipelines.games.batch import WorkerRefused, engine_build, worker_name
from pipelines.games.config import GamesError, GamesOptions
from pipelines.progress import progress_line
from warehouse import Lake

Format = Literal["binpack", "pgn"]
SUFFIXES: dict[str, str] = {"binpack": ".binpack", "pgn": ".pgn.gz"}


class DatagenError(ValueError):
    """Bad datagen input: one line."""


@dataclass(frozen=True)
class DatagenConfig:
    """``chesslab datagen``: an engine plays itself; every searched position is a label."""

    engine: str = field(default="/usr/games/stockfish", metadata={
        "help": "the engine: a UCI binary's path (the same on every worker), a known engine "
                "(stockfish) or a chesslab engine spec played in the worker's own process "
                "(alphabeta:eval=hce)"})
    depth: int | None = field(default=None, metadata={
        "help": "search depth of every move (default: 6 unless --nodes is given)"})
    nodes: int | None = field(default=None, metadata={
        "help": "nodes searched for every move, instead of a depth"})
    games: int = field(default=100, metadata={"help": "games in all (game numbers 0..N-1)"})
    minutes: float | None = field(default=None, metadata={
        "help": "stop after this many minutes (batches still in play are dropped; a rerun "
                "plays the batches that are missing)"})
    random_plies: int = field(default=8, metadata={"help": "random plies of each start"})
    seed: int = field(default=1, metadata={"help": "seed of the random starts"})
    resign: int = field(default=1000, metadata={"help": "adjudication score, centipawns"})
    max_plies: int = field(default=400, metadata={"help": "plies after which a game stops (*)"})
    hash_mb: int = field(default=16, metadata={"help": "MB of hash per engine"})
    batch_games: int = field(default=8, metadata={
        "help": "games per unit of work and per file"})
    format: Format = field(default="binpack", metadata={
        "help": "binpack (every searched position with its score, best move and result; "
                "Stockfish's training format) or pgn (gzip PGN with [%%eval] comments)"})
    out: str | None = field(default=None, metadata={
        "help": "folder of the batch files (default: HOME/datagen)"})
    prefix: str | None = field(default=None, metadata={
        "help": "file name prefix (default: ENGINE-dDEPTH-sSEED or ENGINE-nNODES-sSEED)"})
    concurrency: int = field(default=0, metadata={
        "help": "games at once without --cluster/--workers (0: the cores)"})
    ingest: bool = field(default=True, metadata={"help": "ingest the batch files after"})
    runner: GamesOptions = field(default_factory=GamesOptions, metadata={
        "help": "where the games are played (the --cluster, --workers, ... options)"})

    def __post_init__(self) -> None:
        for name in ("games", "max_plies", "hash_mb", "batch_games"):
            if getattr(self, name) < 1:
                raise DatagenError(f"datagen: --{name.replace('_', '-')} must be >= 1, got "
                                   f"{getattr(self, name)!r}")
        for name in ("depth", "nodes"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise DatagenError(f"datagen: --{name} must be >= 1, got "
                                   f"{getattr(self, name)!r}")
        if self.depth is not None and self.nodes is not None:
            raise DatagenError(f"datagen: give --depth or --nodes, not both (got depth "
                               f"{self.depth} and nodes {self.nodes})")
        if self.minutes is not None and not self.minutes > 0:
            raise DatagenError(f"datagen: --minutes must be positive, got {self.minutes!r}")
        if self.random_plies < 0 or self.concurrency < 0:
            raise DatagenError("datagen: --random-plies and --concurrency must be >= 0")
        if (problem := choice_problem(self)) is not None:
            raise DatagenError(f"datagen: --{problem}")

    @property
    def settings(self) -> GameSettings:
        depth = self.depth if self.depth is not None or self.nodes is not None else 6
        return GameSettings(depth, self.random_plies, self.seed, self.resign, self.max_plies,
                            self.nodes)

    @property
    def workers(self) -> int:
        return self.concurrency or os.cpu_count() or 1


@dataclass(frozen=True)
class DatagenBatch:
    index: int
    engine: EngineSpec
    build: str                      # what the engine answers with on the client
    settings: GameSettings
    hash_mb: int
    games: tuple[int, ...]
    format: Format = "binpack"


@dataclass
class DatagenResult:
    index: int
    worker: str
    data: bytes = b""               # the batch file's bytes (binpack; gzip PGN)
    games: int = 0
    plies: int = 0
    positions: int = 0              # binpack entries (searched positions without a mate)
    seconds: float = 0.0
    stopped: bool = False


@dataclass
class DatagenSummary:
    out: str
    files: list[str]
    planned: int                    # batches
    already_done: int
    engine_id: str = ""             # the labels' engine id (binpack)
    label_depth: int = 0
    played_games: int = 0
    plies: int = 0
    positions: int = 0
    seconds: float = 0.0
    per_worker: dict[str, int] = field(default_factory=dict)

    def __str__(self) -> str:
        rate = self.positions / self.seconds if self.seconds else 0.0
        return (f"datagen: {self.played_games} games, {self.plies} plies, {self.positions} "
                f"positions in {self.seconds:.0f} s ({rate:.0f} positions/s) in "
                f"{self.planned - self.already_done} batches ({self.already_done} already "
                f"there) -> {self.out}")


def engine_spec(engine: str) -> EngineSpec:
    """The engine of ``--engine``: a path is that UCI binary, anything else a player spec
    (``stockfish``, ``alphabeta:eval=hce``); DatagenError naming a bad one."""
    if os.sep in engine or os.path.exists(engine):
        return EngineSpec(name=Path(engine).name, command=(engine,))
    try:
        return parse_engine(engine)
    except EngineSpecError as exc:
        raise DatagenError(f"datagen: --engine: {exc}") from None


def searcher_for(spec: EngineSpec, hash_mb: int) -> Searcher:
    """The batch's searcher: an own engine in this process, else the binary over UCI."""
    if is_own(spec):
        from pipelines.datagen.inprocess import InProcessSearcher

        return InProcessSearcher(spec)
    if not os.access(spec.command[0], os.X_OK):
        raise WorkerRefused(f"worker {worker_name()} refuses: no engine {spec.command[0]}")
    return UciSearcher(spec.command[0], hash_mb)


def datagen_build(spec: EngineSpec) -> str:
    """What the engine answers with here (own engines: chesslab's version)."""
    if not is_own(spec) and not os.access(spec.command[0], os.X_OK):
        raise WorkerRefused(f"worker {worker_name()} refuses: no engine {spec.command[0]}")
    try:
        return engine_build(spec)
    except Exception as exc:  # noqa: BLE001 - the engine's own failure, as one line
        raise WorkerRefused(f"worker {worker_name()} refuses: {spec.name}: "
                            f"{str(exc).splitlines()[0]}") from None


def check_datagen(batch: DatagenBatch) -> str:
    """This worker runs the engine the client runs; its name."""
    build = datagen_build(batch.engine)
    if build != batch.build:
        raise WorkerRefused(f"worker {worker_name()} refuses: {batch.engine.name} is {build!r} "
                            f"here, the client runs {batch.build!r}")
    return worker_name()


def play_datagen(batch: DatagenBatch, stop: Callable[[], bool]) -> DatagenResult:
    """The batch's games with one engine; ``stop`` is asked between games. The result holds
    the batch file's bytes."""
    check_datagen(batch)
    result = DatagenResult(batch.index, worker_name())
    started = time.perf_counter()
    searcher = searcher_for(batch.engine, batch.hash_mb)
    records = []
    try:
        for index in batch.games:
            if stop():
                result.stopped = True
                break
            records.append(play_game(searcher, index, batch.settings))
    finally:
        close = getattr(searcher, "close", None)
        if close is not None:
            close()
    result.games = len(records)
    result.plies = sum(len(r.played) for r in records)
    if batch.format == "pgn":
        text = "".join(f"{to_pgn(r, batch.build, batch.settings, 'chesslab datagen')}\n\n"
                       for r in records)
        result.data = gzip.compress(text.encode())
    else:
        result.data, result.positions = binpack_bytes(records)
    result.seconds = time.perf_counter() - started
    return result


def binpack_bytes(records: list[GameRecord]) -> tuple[bytes, int]:
    """The binpack file of the games' entries, and how many entries it holds."""
    import numpy as np

    from pipelines.formats.binpack import BinpackWriter
    from pipelines.formats.binpack_file import binpack_scores

    entries = [e for record in records for e in binpack_entries(record)]
    stream = io.BytesIO()
    writer = BinpackWriter(stream)
    if entries:
        fens, moves, scores, plies, results = zip(*entries, strict=True)
        refused = writer.add(list(fens), list(moves), binpack_scores(np.array(scores)),
                             list(plies), list(results))
        if refused:
            raise DatagenError(f"datagen: the binpack writer refused an entry: "
                               f"{refused[0][1]}")
    writer.close()
    return stream.getvalue(), len(entries)


def remote_datagen(batch: DatagenBatch, stop_name: str) -> DatagenResult:
    from pipelines.games.cluster import on_worker

    return on_worker(play_datagen, batch, stop_name)


def prefix_of(config: DatagenConfig, spec: EngineSpec, build: str) -> str:
    """``--prefix``, else the engine (the first word it answers with; an own engine's spec),
    the search and the seed: ``stockfish-d6-s1``, ``alphabeta-eval-hce-n5000-s1``."""
    name = spec.name if is_own(spec) else (build.split()[0].lower() if build else spec.name)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-")
    settings = config.settings
    limit = f"d{settings.depth}" if settings.depth is not None else f"n{settings.nodes}"
    return config.prefix or f"{name}-{limit}-s{config.seed}"


def batch_file(out: Path, prefix: str, index: int, form: str = "binpack") -> Path:
    return out / f"{prefix}-b{index:05d}{SUFFIXES[form]}"


def write_batch(path: Path, result: DatagenResult) -> None:
    """The batch's file, whole or absent (written under another name, renamed into place)."""
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(result.data)
    os.replace(partial, path)


def label_engine_id(spec: EngineSpec, build: str, settings: GameSettings) -> str:
    """The engine id a binpack run's labels are stored under: ``datagen:``, the engine (the
    name it answers with; an own engine's spec) and the search, in the characters an engine
    id may hold.

    >>> label_engine_id(EngineSpec("stockfish", ("sf",)), "Stockfish 15.1", GameSettings(6))
    'datagen:Stockfish-15.1-d6'
    >>> own = EngineSpec("alphabeta:eval=hce", ("python", "-m", "engines.uci", "alphabeta"))
    >>> label_engine_id(own, "chesslab", GameSettings(None, nodes=5000))
    'datagen:alphabeta-eval-hce-n5000'
    """
    engine = spec.name if is_own(spec) else build
    limit = f"d{settings.depth}" if settings.depth is not None else f"n{settings.nodes}"
    slug = re.sub(r"[^A-Za-z0-9._@+-]+", "-", engine).strip("-")[:80]
    return f"datagen:{slug}-{limit}"


def label_source(config: DatagenConfig) -> tuple[str, int]:
    """The engine id and depth a binpack run's labels are stored under (the engine asked here
    for its name)."""
    spec = engine_spec(config.engine)
    return label_engine_id(spec, datagen_build(spec), config.settings), \
        config.settings.label_depth


def generate(config: DatagenConfig, out: Path, progress: Callable[[str], None],
             lake: Lake | None = None) -> DatagenSummary:
    """Play the batches whose files are missing; every batch file of the run. An own
    engine's model names (``alphabeta:eval=nnue,model=nnue@3``) resolve in ``lake``."""
    from pipelines.games.cluster import check_workers, open_cluster, run_batches

    started = time.perf_counter()
    spec = engine_spec(config.engine)
    if lake is not None and is_own(spec):
        from pipelines.models.deploy import resolve_player

        spec = resolve_player(lake, spec)
    build = datagen_build(spec)
    prefix = prefix_of(config, spec, build)
    out.mkdir(parents=True, exist_ok=True)
    numbers = list(range(config.games))
    batches = [DatagenBatch(index, spec, build, config.settings, config.hash_mb,
                            tuple(numbers[start:start + config.batch_games]), config.format)
               for index, start in enumerate(range(0, len(numbers), config.batch_games))]
    files = [str(batch_file(out, prefix, b.index, config.format)) for b in batches]
    present = {p.name for p in out.iterdir()}
    todo = [b for b in batches if Path(files[b.index]).name not in present]
    summary = DatagenSummary(str(out), files, len(batches), len(batches) - len(todo),
                             label_engine_id(spec, build, config.settings),
                             config.settings.label_depth)

    deadline = started + 60 * config.minutes if config.minutes else float("inf")
    written: list[int] = []

    def finish(result: DatagenResult) -> bool:
        if result.stopped:
            return True
        write_batch(Path(files[result.index]), result)
        written.append(result.index)
        summary.played_games += result.games
        summary.plies += result.plies
        summary.positions += result.positions
        summary.per_worker[result.worker] = summary.per_worker.get(result.worker, 0) + \
            result.games
        done = summary.already_done + len(written)
        elapsed = time.perf_counter() - started
        progress(progress_line(
            "datagen", done, len(batches), "batches", elapsed,
            f"{summary.played_games} games, {summary.plies / max(elapsed, 1e-9):.0f} plies/s; "
            f"workers: " + ", ".join(f"{w} {g}" for w, g in sorted(summary.per_worker.items())),
            earlier=summary.already_done))
        return time.perf_counter() < deadline

    runner = config.runner
    if is_own(spec) and not runner.cluster and not runner.workers:
        # an engine in the worker's process holds the GIL while it searches: one game per
        # worker process, not threads of this one
        runner = dataclasses.replace(runner, workers=config.workers, games_per_worker=1)
    if todo and time.perf_counter() < deadline:
        try:
            with open_cluster(runner, config.workers) as client:
                workers = check_workers(client, todo[0], progress, check_datagen)
                run_batches(client, workers, todo, finish, progress, remote_datagen)
        except GamesError as exc:
            raise DatagenError(str(exc)) from None
    summary.seconds = time.perf_counter() - started
    return summary
