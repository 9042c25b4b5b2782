"""Self-play runs: a plan of missing batches, a unit that plays one batch into a PGN file, a
unit that ingests it, and a summary.

A run is named by its config (engine, limits, seed, start variety, caps; not the number of
games) and lives in ``<home>/selfplay/<run-id>/``. Game ``g`` is seeded by ``(seed, g)``;
games are played in batches, each written to ``batch-<first>-<last>.pgn`` through a temporary
file and a rename, then ingested by ``pipelines.ingest`` like any PGN file (a source is keyed
by its SHA-256, so a batch already ingested adds nothing). A killed run leaves whole batch
files only; the next run ingests those not ingested yet and plays only the missing games.

Batches are played by a pool of ``workers`` processes started by a fork server (the engine
searches are CPU-bound; forking a process that runs threads is unsafe); batches are ingested
one at a time in the calling process, so positions are deduped against the warehouse without
a race.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from engines.registry import EngineSpec
from engines.stamps import content_id, file_sha256
from pipelines.games.game import Opening
from pipelines.ingest import IngestConfig, IngestSummary, ingest_file
from pipelines.ingest.run import already_ingested
from pipelines.ingest.sources import source_for
from pipelines.models.deploy import resolve_player
from pipelines.selfplay.config import SelfplayConfig, SelfplayError
from pipelines.selfplay.game import play_game, to_pgn
from pipelines.selfplay.players import open_mover, resolve_engine
from pipelines.tournament.openings import file_digest, read_openings
from warehouse import Lake

log = logging.getLogger(__name__)

BATCH_FILE = re.compile(r"^batch-(\d+)-(\d+)\.pgn$")


@dataclass(frozen=True)
class Batch:
    """Games ``first`` to ``last`` (inclusive) of a run: one PGN file, one ingested source."""

    first: int
    last: int

    @property
    def file_name(self) -> str:
        return f"batch-{self.first:06d}-{self.last:06d}.pgn"

    @property
    def games(self) -> range:
        return range(self.first, self.last + 1)


@dataclass(frozen=True)
class SelfplayPlan:
    """What a run will do: the batches to play and the batch files still to ingest."""

    config: SelfplayConfig
    run_id: str
    folder: str
    player: str
    openings: tuple[Opening, ...]
    batches: tuple[Batch, ...]
    to_ingest: tuple[str, ...]
    games_done: int
    engine: EngineSpec             # the player, its models resolved to what it loads

    def tags(self, batch: Batch) -> dict[str, str]:
        """The PGN tags that say how a batch's games were made (kept in ``games.tags``)."""
        c = self.config
        tags = {"SelfplayRun": self.run_id, "SelfplayBatch": batch.file_name[:-4],
                "SelfplayEngine": c.engine, "SelfplayLimit": c.limit_text(),
                "SelfplaySeed": str(c.seed), "SelfplayRandomPlies": str(c.random_plies),
                "SelfplayMaxPlies": str(c.max_plies)}
        if c.openings:
            tags["SelfplayOpenings"] = Path(c.openings).name
        return tags


@dataclass
class BatchResult:
    """A played batch: its file, games, plies, why its games ended, and the play time."""

    path: str
    games: int = 0
    plies: int = 0
    terminations: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


@dataclass
class SelfplaySummary:
    """What a run did; ``positions_per_s`` counts plies played (each one a search) per second
    of wall time."""

    run_id: str
    folder: str
    games_in_run: int = 0
    games: int = 0
    plies: int = 0
    new_positions: int = 0
    batches_played: int = 0
    batches_ingested: int = 0
    terminations: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def positions_per_s(self) -> float:
        return self.plies / self.seconds if self.seconds > 0 else 0.0

    def __str__(self) -> str:
        ends = ", ".join(f"{k} {v}" for k, v in sorted(self.terminations.items())) or "-"
        return (f"selfplay run {self.run_id}: {self.games} games played now "
                f"({self.games_in_run} in the run), {self.plies} plies, {self.new_positions} "
                f"new positions, {self.batches_ingested} batches ingested; ended by: {ends}; "
                f"{self.positions_per_s:.1f} positions/s")


# --------------------------------------------------------------------------------------------
# Plan
# --------------------------------------------------------------------------------------------

def run_id(config: SelfplayConfig, engine: EngineSpec) -> str:
    """A hash of what makes the run's games what they are (not the number of games): the
    player as it plays (``engine``: its models resolved, so ``model=nnue@latest`` pins the
    version), the limits, the starts."""
    c = config
    parts = [engine.setup_hash, c.nodes, c.depth, c.random_plies,
             file_digest(c.openings), c.opening_plies, c.max_plies, c.batch_games, c.seed]
    return content_id(parts, n=12)   # 12 digits: the run ids already stored


def batch_files(folder: Path) -> dict[Batch, Path]:
    """The whole batch files of a run folder (temporary files are hidden and never match)."""
    found = {}
    for path in sorted(folder.glob("batch-*.pgn")) if folder.is_dir() else []:
        match = BATCH_FILE.match(path.name)
        if match:
            found[Batch(int(match[1]), int(match[2]))] = path
    return found


def missing_batches(games: int, batch_games: int, done: set[int]) -> list[Batch]:
    """Batches of the games in ``range(games)`` not in ``done``: runs of consecutive games
    within each block of ``batch_games``.

    >>> missing_batches(7, 3, {1, 6})
    [Batch(first=0, last=0), Batch(first=2, last=2), Batch(first=3, last=5)]
    """
    batches: list[Batch] = []
    for start in range(0, games, batch_games):
        todo = [g for g in range(start, min(start + batch_games, games)) if g not in done]
        for game in todo:
            if batches and batches[-1].last == game - 1 and batches[-1].first >= start:
                batches[-1] = Batch(batches[-1].first, game)
            else:
                batches.append(Batch(game, game))
    return batches


def plan_selfplay(lake: Lake, config: SelfplayConfig) -> SelfplayPlan:
    """The missing batches and the batch files not ingested yet; the run's folder is created,
    with a ``run.json`` describing the run. SelfplayError on a bad engine spec, an engine that
    cannot start (tried once when games are missing) or a bad opening file; a ModelError
    naming the engine when a model it names does not resolve."""
    spec = resolve_player(lake, resolve_engine(config.engine))
    rid = run_id(config, spec)
    folder = lake.home / "selfplay" / rid
    existing = batch_files(folder)
    done = {game for batch in existing for game in batch.games}
    batches = tuple(missing_batches(config.games, config.batch_games, done))
    openings = tuple(load_openings(config))
    if batches:
        open_mover(spec, config.nodes, config.depth).close()
    folder.mkdir(parents=True, exist_ok=True)
    write_atomically(folder / "run.json", json.dumps(
        {"run_id": rid, "config": asdict(config), "engine": spec.describe()}, indent=2) + "\n")
    # the run's files looked up by their SHA-256 in the key index of sources, as ingest does
    to_ingest = tuple(str(p) for p in existing.values()
                      if not already_ingested(lake, file_sha256(p)))
    return SelfplayPlan(config, rid, str(folder), spec.name, openings, batches, to_ingest,
                        len(done), spec)


def load_openings(config: SelfplayConfig) -> list[Opening]:
    if not config.openings:
        return [Opening()]
    try:
        return read_openings(config.openings, config.opening_plies, config.games, config.seed)
    except ValueError as exc:
        raise SelfplayError(str(exc)) from None


# --------------------------------------------------------------------------------------------
# Units
# --------------------------------------------------------------------------------------------

def play_batch(plan: SelfplayPlan, batch: Batch) -> BatchResult:
    """Play a batch's games and write them, whole, to its PGN file in the run folder."""
    text, result = play_texts(plan, batch)
    write_atomically(Path(result.path), text)
    return result


def play_texts(plan: SelfplayPlan, batch: Batch) -> tuple[str, BatchResult]:
    """A batch's games as the PGN text of its file (not written: a worker of the games runner
    sends it back to the client, which writes it)."""
    config = plan.config
    started = time.perf_counter()
    result = BatchResult(str(Path(plan.folder) / batch.file_name))
    mover = open_mover(plan.engine, config.nodes, config.depth)
    texts = []
    ends: Counter[str] = Counter()
    try:
        for index in batch.games:
            opening = plan.openings[index % len(plan.openings)]
            game = play_game(mover, index, opening, config.random_plies, config.seed,
                             config.max_plies)
            texts.append(to_pgn(game, plan.player, plan.tags(batch)))
            result.plies += game.plies
            ends[game.reason] += 1
    finally:
        mover.close()
    result.games, result.terminations = len(texts), dict(ends)
    result.seconds = time.perf_counter() - started
    return "\n\n".join(texts) + "\n", result


@dataclass(frozen=True)
class SelfplayWork:
    """A batch for a worker of the games runner, with the engine build the client runs."""

    plan: SelfplayPlan
    batch: Batch
    build: str


def selfplay_work(plan: SelfplayPlan, batch: Batch) -> SelfplayWork:
    from pipelines.games.batch import engine_build

    return SelfplayWork(plan, batch, engine_build(plan.engine))


def check_selfplay(work: SelfplayWork) -> str:
    """This worker runs the client's engine build, its files there; its name."""
    from pipelines.games.batch import check_players, worker_name

    check_players((work.plan.engine,), {work.plan.engine.name: work.build})
    return worker_name()


def play_work(work: SelfplayWork) -> tuple[str, BatchResult]:
    """A batch on a games runner's worker: checked, played, its text sent back."""
    check_selfplay(work)
    return play_texts(work.plan, work.batch)


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` under a hidden temporary name, then rename: readers see all or nothing."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def ingest_batch(lake: Lake, path: str) -> IngestSummary:
    """Ingest one batch file in this process (skipped when its SHA-256 is already a source)."""
    source = source_for(Path(path))
    assert source is not None, path
    return ingest_file(lake, source, IngestConfig(workers=1))


# --------------------------------------------------------------------------------------------
# Summary
# --------------------------------------------------------------------------------------------

def summarize(plan: SelfplayPlan, played: Sequence[BatchResult],
              ingested: Sequence[IngestSummary], seconds: float) -> SelfplaySummary:
    ends: Counter[str] = Counter()
    for result in played:
        ends.update(result.terminations)
    return SelfplaySummary(
        plan.run_id, plan.folder,
        games_in_run=plan.games_done + sum(r.games for r in played),
        games=sum(r.games for r in played), plies=sum(r.plies for r in played),
        new_positions=sum(s.new_positions for s in ingested), batches_played=len(played),
        batches_ingested=sum(1 for s in ingested if not s.skipped),
        terminations=dict(ends), seconds=seconds)


# --------------------------------------------------------------------------------------------
# What the ``selfplay`` step (flows/selfplay.py) runs the units with
# --------------------------------------------------------------------------------------------

@contextlib.contextmanager
def run_lock(lake: Lake, plan: SelfplayPlan) -> Iterator[None]:
    """One process at a time per run and home: a second one would play the same batches."""
    folder = lake.home / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"selfplay-{plan.run_id}.lock", "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SelfplayError(f"selfplay run {plan.run_id} is already running on "
                                f"{lake.home}") from None
        yield


