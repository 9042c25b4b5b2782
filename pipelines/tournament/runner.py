"""Running a tournament: the schedule's missing games on a pool of workers, each game written
to the warehouse as it ends, optionally stopped by an SPRT.

The missing games go out as batches of game pairs to the games runner (``pipelines.games``: a
Dask cluster, local or remote); each batch is played by one worker thread with one engine
process per player, and comes back to be stored and added up here.
"""
from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from engines.registry import (
    EngineSpec,
    check_player,
    expand_ladder,
    load_engines_file,
    parse_engine,
)
from pipelines.games.batch import BatchResult, GameBatch, client_builds
from pipelines.games.cluster import LostWorker, check_workers, open_cluster, run_batches
from pipelines.games.config import GamesError
from pipelines.games.game import GameRecord, Slot
from pipelines.models.deploy import resolve_player
from pipelines.progress import progress_line
from pipelines.sprt import SprtConfig, SprtResult, llr, pentanomial, sweep
from pipelines.sprt.store import record_sprt
from pipelines.tournament import standings, store
from pipelines.tournament.config import TournamentConfig, TournamentError, default_event
from pipelines.tournament.openings import file_digest, load_openings
from pipelines.tournament.pgn import to_pgn
from pipelines.tournament.schedule import schedule, tournament_id
from warehouse import Lake

log = logging.getLogger(__name__)

Progress = Callable[[str], None]

#: Above this share of games lost on time the machines are too busy for the time control
#: (fastchess's bar: about 10 time losses in 20,000 games at 250 concurrent games is normal;
#: 4 in 14 on a loaded cluster was not): the run warns.
FORFEIT_WARNING_RATE = 0.01


@dataclass
class TournamentSummary:
    """What a run did: the id to query, games planned, found and played, why it stopped."""

    tournament_id: str
    players: list[str]
    planned: int
    already_done: int
    played: int = 0
    status: str = "finished"
    sprt: SprtResult | None = None
    wall_seconds: float = 0.0
    worker_seconds: float = 0.0        # wall time of every worker, summed
    engine_seconds: float = 0.0        # time the workers spent waiting for engines, summed
    terminations: dict[str, int] = field(default_factory=dict)
    lost_workers: list[str] = field(default_factory=list)   # workers gone during the run
    replayed_batches: int = 0          # batches a lost worker left, played by another
    time_forfeits: dict[str, int] = field(default_factory=dict)   # player -> games lost
                                                                  # on time, all runs'

    @property
    def forfeit_rate(self) -> float:
        """Share of the tournament's finished games lost on time."""
        done = self.already_done + self.played
        return sum(self.time_forfeits.values()) / done if done else 0.0

    def forfeit_warning(self) -> str | None:
        """A line when more than FORFEIT_WARNING_RATE of the games were lost on time."""
        if self.forfeit_rate <= FORFEIT_WARNING_RATE:
            return None
        lost = sum(self.time_forfeits.values())
        who = ", ".join(f"{name} {n}" for name, n in sorted(self.time_forfeits.items()) if n)
        return (f"warning: {lost} of {self.already_done + self.played} games lost on time "
                f"({self.forfeit_rate:.1%}: {who}), above {FORFEIT_WARNING_RATE:.0%}: the "
                "engines are short of CPU for this time control (fewer games at once, or a "
                "longer time control)")
    repeated: int = 0                  # games of this run that repeat an earlier one exactly

    def repeat_warning(self) -> str | None:
        """What repeated games mean, when this run played any."""
        if not self.repeated:
            return None
        return (f"warning: {self.repeated} of the {self.played} games played repeat an earlier "
                f"game move for move (same players, colours and start: deterministic engines "
                f"at fixed nodes or depth); they count as games of their own in the score and "
                f"the ratings: give --openings FILE (data/openings.epd) for distinct games")

    @property
    def outside_engine_share(self) -> float:
        """Share of the workers' wall time not spent waiting for an engine."""
        return 0.0 if not self.worker_seconds else 1 - self.engine_seconds / self.worker_seconds


def resolve_players(config: TournamentConfig, lake: Lake | None = None) -> list[EngineSpec]:
    """The players of the specs, every own engine's settings and options checked; with
    ``lake``, registry models in own engines' settings (``model=nnue@latest``,
    ``lmr=lmr@best``, ``volatility=volatility@3``) are resolved to their version's engine
    options (:func:`pipelines.models.deploy.resolve_player`: its file's hash checked) and
    every file is loaded: all before the first game."""
    named = load_engines_file(config.engines_file) if config.engines_file else {}
    players = [parse_engine(spec, named) for text in config.engines
               for spec in expand_ladder(text)]
    if lake is not None:
        players = [resolve_player(lake, p) for p in players]
    for player in players:
        check_player(player, load=lake is not None)
    names = [p.name for p in players]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise TournamentError(f"two players named {duplicates[0]!r}: give one a #name")
    return players


def run_tournament(config: TournamentConfig, lake: Lake,
                   progress: Progress | None = None) -> TournamentSummary:
    """Play every game of the tournament not yet in the warehouse ``lake``, in batches of game
    pairs on the games runner ``config.runner`` names (:mod:`pipelines.games.cluster`)."""
    tournament = Tournament(config, lake, progress)
    with exclusive(tournament):
        return tournament.run()


@contextlib.contextmanager
def exclusive(tournament: Tournament) -> Iterator[None]:
    """One run of a tournament at a time per home: a second one would play the same games."""
    folder = tournament.lake.home / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"tournament-{tournament.id}.lock", "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise TournamentError(f"tournament {tournament.id} is already running on "
                                  f"{tournament.lake.home}") from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def busy_machine_warning(config: TournamentConfig, load: float | None = None,
                         cores: int | None = None) -> str | None:
    """A warning when games on the clock start on a machine whose cores are already busy
    (the 1-minute load average at least the cores): each engine then gets a share of a core,
    and games are lost on time that an idle machine would play out (4 of 14 at load 9-12 on
    2 cores). None for fixed nodes or depth, for games played on a ``--cluster``, or an idle
    machine.

    >>> clock = TournamentConfig.tiny(tc="10+0.1", nodes=None)
    >>> print(busy_machine_warning(clock, load=9.4, cores=2))
    the load average is 9.4 on 2 cores: engines on the clock (10+0.1) get a share of a core and may lose on time; play at fixed --nodes or --depth, or when the machine is free
    >>> busy_machine_warning(clock, load=0.7, cores=2) is None
    True
    >>> busy_machine_warning(TournamentConfig.tiny(), load=9.4, cores=2) is None
    True
    """
    if (config.tc is None and not config.movetime_ms) or config.runner.cluster:
        return None
    load = os.getloadavg()[0] if load is None else load
    cores = (os.cpu_count() or 1) if cores is None else cores
    if load < cores:
        return None
    limit = config.tc or f"{config.movetime_ms} ms a move"
    return (f"the load average is {load:.1f} on {cores} cores: engines on the clock ({limit}) "
            f"get a share of a core and may lose on time; play at fixed --nodes or --depth, "
            f"or when the machine is free")


#: Repeated games from which an SPRT's run warns (with a tenth of the games played at least).
REPEATS_WARNED = 2


class Tournament:
    def __init__(self, config: TournamentConfig, lake: Lake,
                 progress: Progress | None = None) -> None:
        self.config = config
        self.lake = lake
        self.progress = progress if progress is not None else (
            print_progress if config.progress else None)
        self.players = resolve_players(config, lake)
        if not config.event:
            self.config = config = dataclasses.replace(config, event=default_event(
                config.format, [p.name for p in self.players]))
        self.openings = load_openings(config)
        digest = file_digest(config.openings)
        self.id = tournament_id(config, self.players, digest)
        self.slots = schedule([p.name for p in self.players], config.format, config.rounds,
                              len(self.openings))
        self.digest = digest
        self.results: dict[str, dict[str, Any]] = {}
        self.time_losses: Counter[str] = Counter()      # player -> games lost on time
        self.per_worker: dict[str, int] = {}
        self.lost: dict[int, str] = {}        # a lost worker's batch -> that worker
        self.slots_of: dict[int, tuple[Slot, ...]] = {}   # batch index -> its games
        self.seen_games: set[int] = set()   # hashes of players, start and moves (a game's
        #                                     moves kept whole would grow with the match)
        self.repeats_warned = False                        # the SPRT's repeat warning said
        self.stopped = False
        self.started = time.perf_counter()
        self.sprt_config = None
        if config.sprt_elo0 is not None and config.sprt_elo1 is not None:
            self.sprt_config = SprtConfig(config.sprt_elo0, config.sprt_elo1, config.sprt_alpha,
                                          config.sprt_beta, config.sprt_model)

    def run(self) -> TournamentSummary:
        started = self.started = time.perf_counter()
        done = {row["game_key"]: row for row in store.finished_games(self.lake, self.id)}
        for key, row in done.items():
            self.keep(key, row)
        planned = len(self.slots)
        summary = TournamentSummary(self.id, [p.name for p in self.players], planned,
                                    len(done))
        pending = [slot for slot in self.slots if slot.key not in done]
        summary.time_forfeits = self.forfeits()
        summary.sprt = self.sprt_status()
        if summary.sprt is not None and summary.sprt.decision != "continue" \
                and self.config.sprt_stop:
            pending = []
        if pending and (busy := busy_machine_warning(self.config)) is not None:
            log.warning("tournament %s: %s", self.id, busy)
        with self.cluster(bool(pending)) as client:
            batches = self.batches(pending)
            workers = self.check(client, batches)
            store.record_tournament(self.lake, self.id, self.config, self.players, planned,
                                    self.digest)
            store.record_event(self.lake, self.id, "resumed" if done else "started",
                               len(done), planned)
            self.play(client, workers, batches, summary, started)
        if warning := summary.repeat_warning():
            log.warning("tournament %s: %s", self.id, warning)
        return summary

    @contextlib.contextmanager
    def cluster(self, needed: bool) -> Iterator[Any]:
        """The games runner's client (None when no game is left to play)."""
        if not needed:
            yield None
            return
        try:
            with open_cluster(self.config.runner, self.config.workers) as client:
                yield client
        except GamesError as exc:
            raise TournamentError(str(exc)) from None

    def check(self, client: Any, batches: Sequence[GameBatch]) -> list[str]:
        """The workers that passed their checks, before anything is written."""
        if client is None or not batches:
            return []
        try:
            return check_workers(client, batches[0], self.progress or log.warning)
        except GamesError as exc:
            raise TournamentError(str(exc)) from None

    def play(self, client: Any, workers: list[str], batches: Sequence[GameBatch],
             summary: TournamentSummary, started: float) -> None:
        planned = summary.planned
        detail = ""
        try:
            if batches:
                run_batches(client, workers, batches,
                            lambda result: self.finish(result, summary),
                            self.progress or log.warning,
                            on_lost=lambda lost: self.worker_lost(lost, summary))
        except GamesError as exc:
            summary.status = "interrupted"
            detail = str(exc)
            raise TournamentError(str(exc)) from None
        except BaseException as exc:
            summary.status = "interrupted"
            detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise
        finally:
            summary.wall_seconds = time.perf_counter() - started
            summary.sprt = self.sprt_status()
            if summary.status != "interrupted" and self.stopped:
                summary.status = "sprt_stopped"
            if summary.sprt:
                detail = summary.sprt.describe()
            if summary.sprt is not None and self.sprt_config is not None:
                record_sprt(self.lake, summary.sprt, self.sprt_config, self.id)
            store.record_event(self.lake, self.id, summary.status,
                               summary.already_done + summary.played, planned, detail)

    def batches(self, pending: Sequence[Slot]) -> list[GameBatch]:
        """The pending slots as batches of ``config.runner.batch_pairs`` game pairs, in
        schedule order (a pair's games stay together; a pair half played before is sent as its
        missing half)."""
        pairs: dict[str, list[Slot]] = {}
        for slot in pending:
            pairs.setdefault(slot.pair_key, []).append(slot)
        groups = list(pairs.values())
        size = self.config.runner.batch_pairs
        builds = client_builds(self.players) if groups else {}
        batches = []
        for index, start in enumerate(range(0, len(groups), size)):
            slots = tuple(s for group in groups[start:start + size] for s in group)
            openings = {s.opening_index: self.openings[s.opening_index] for s in slots}
            batches.append(GameBatch(self.id, index, self.config.limits,
                                     self.config.adjudication, tuple(self.players), slots,
                                     openings, builds, self.config.runner.clock_reference_nps))
            self.slots_of[index] = slots
        return batches

    def batch_games(self, index: int) -> str:
        """``batch 3 (games 0:3:0, 0:3:1)``: a batch and its games' keys."""
        return f"batch {index} (games {', '.join(s.key for s in self.slots_of[index])})"

    def worker_lost(self, lost: LostWorker, summary: TournamentSummary) -> None:
        """A worker gone mid-run: said, and kept in ``tournament_events`` (``worker_lost``)
        with the games it was playing, which another worker plays again."""
        summary.lost_workers.append(lost.name)
        self.lost.update(dict.fromkeys(lost.batches, lost.name))
        self.incident(summary, "worker_lost", lost.describe(self.batch_games))

    def replayed(self, result: BatchResult, summary: TournamentSummary) -> None:
        """A lost worker's batch played again: said and kept (``batch_replayed``)."""
        gone = self.lost.pop(result.index)
        summary.replayed_batches += 1
        self.incident(summary, "batch_replayed",
                      f"{self.batch_games(result.index)} lost with worker {gone}, played "
                      f"again by worker {result.worker}")

    def incident(self, summary: TournamentSummary, event: str, detail: str) -> None:
        """What went wrong on the cluster, on the console (even without ``--progress``) and
        in ``tournament_events``, with the games done so far."""
        done = summary.already_done + summary.played
        store.record_event(self.lake, self.id, event, done, summary.planned, detail)
        (self.progress or log.warning)(f"[{done}/{summary.planned}] {detail}")

    def finish(self, result: BatchResult, summary: TournamentSummary) -> bool:
        """Store a batch's games (keyed by slot: a batch played twice stores each game once),
        add them up, show the progress; False when the SPRT has decided."""
        if result.stopped or not result.records:
            return not self.stopped
        rows = [store.game_row(self.id, record,
                               to_pgn(record, self.config, result.worker.split(":")[0]),
                               result.worker, result.clock_scale)
                for record in result.records]
        self.lake.write("tournament_games", rows)
        for record, row in zip(result.records, rows, strict=True):
            self.keep(record.slot.key, row)
            summary.played += 1
            summary.repeated += self.repeats(record)
            summary.terminations[record.termination] = \
                summary.terminations.get(record.termination, 0) + 1
        warned = summary.forfeit_warning() is not None
        summary.time_forfeits = self.forfeits()
        summary.engine_seconds += result.engine_seconds
        summary.worker_seconds += result.seconds
        self.per_worker[result.worker] = self.per_worker.get(result.worker, 0) + \
            len(result.records)
        if result.index in self.lost:
            self.replayed(result, summary)
        sprt = self.sprt_status()
        if sprt is not None and sprt.decision != "continue" and self.config.sprt_stop:
            self.stopped = True
        if self.progress:
            self.show(result, summary, sprt)
        if not warned and (warning := summary.forfeit_warning()):
            (self.progress or log.warning)(
                f"[{summary.already_done + summary.played}/{summary.planned}] {warning}")
        self.warn_repeated_pairs(summary)
        return not self.stopped

    def repeats(self, record: GameRecord) -> int:
        """1 when ``record`` repeats a game this run played (players, colours, start and
        every move), else 0 (and it is remembered)."""
        key = hash((record.slot.white, record.slot.black, record.opening.fen,
                    *record.opening.moves, *(m.move.uci() for m in record.moves)))
        if key in self.seen_games:
            return 1
        self.seen_games.add(key)
        return 0

    def warn_repeated_pairs(self, summary: TournamentSummary) -> None:
        """An SPRT takes game pairs as independent: repeated games (the same pair played
        again and again) weaken its verdict, so once they are more than chance
        (REPEATS_WARNED games and a tenth of those played) the run says so, once. The match
        goes on: the evaluate steps of tiny presets and smoke runs play deterministic
        engines from the start position on purpose."""
        if self.sprt_config is None or self.repeats_warned or summary.repeated < max(
                REPEATS_WARNED, summary.played // 10):
            return
        self.repeats_warned = True
        (self.progress or log.warning)(
            f"warning: tournament {self.id}: {summary.repeated} of {summary.played} games "
            f"repeat an earlier game move for move: the SPRT counts the same pairs as "
            f"independent evidence; give --openings FILE (data/openings.epd) for distinct games")

    def show(self, result: BatchResult, summary: TournamentSummary,
             sprt: SprtResult | None) -> None:
        assert self.progress is not None
        done = summary.already_done + summary.played
        for number, record in enumerate(result.records, done - len(result.records) + 1):
            self.progress(
                f"[{number}/{summary.planned}] {record.slot.white} - {record.slot.black} "
                f"{record.result} {record.termination} ({record.plies} plies, "
                f"{record.wall_seconds:.1f}s, {result.worker}){' ' + sprt.short() if sprt else ''}")
        interval = self.config.rating_interval
        if interval and (done // interval != (done - len(result.records)) // interval
                         or self.stopped):
            for line in self.standings(done, summary.planned, sprt):
                self.progress(line)
            self.progress(progress_line(
                f"tournament {self.id}", done, summary.planned, "games",
                time.perf_counter() - self.started, "workers: " + self.workers_line(summary),
                earlier=summary.already_done))

    def workers_line(self, summary: TournamentSummary) -> str:
        """``host:1 6, host:2 4 (lost)``: the games each worker played, the lost ones
        marked."""
        games = {**dict.fromkeys(summary.lost_workers, 0), **self.per_worker}
        return ", ".join(f"{name} {count}" + (" (lost)" if name in summary.lost_workers else "")
                         for name, count in sorted(games.items()))

    def standings(self, done: int, planned: int, sprt: SprtResult | None) -> list[str]:
        """The running score, Elo and interval (and the SPRT) over every finished game."""
        games = [(slot.white, slot.black, result["white_score"]) for slot in self.slots
                 if (result := self.results.get(slot.key)) is not None
                 and result["white_score"] is not None]
        names = [p.name for p in self.players]
        return standings.report(names, standings.player_counts(names, games), done, planned,
                                sprt, self.forfeits())

    def keep(self, key: str, game: dict[str, Any]) -> None:
        """What the running standings keep of a finished game (a ``tournament_games`` row):
        White's score, and who lost on time."""
        lost = standings.lost_on_time(game)
        if lost is not None and key not in self.results:     # a game kept once
            self.time_losses[lost] += 1
        self.results[key] = {"white_score": game["white_score"]}

    def forfeits(self) -> dict[str, int]:
        """Each player's games lost on time, over every finished game."""
        return {p.name: self.time_losses[p.name] for p in self.players}

    def sprt_status(self) -> SprtResult | None:
        """The SPRT on the finished game pairs, from the first player's side."""
        if self.sprt_config is None:
            return None
        first = self.players[0].name
        pairs: dict[str, list[float]] = {}
        for slot in self.slots:
            result = self.results.get(slot.key)
            if result is None or result["white_score"] is None:
                continue
            score = result["white_score"] if slot.white == first else 1 - result["white_score"]
            pairs.setdefault(slot.pair_key, []).append(score)
        counts = pentanomial([sum(s) for s in pairs.values() if len(s) == 2])
        config = self.sprt_config
        value = llr(counts, config) if sum(counts) else 0.0
        return SprtResult(tuple(counts), value, config.lower_bound, config.upper_bound, config,
                          sweep(counts, self.config.sprt_sweep))


def print_progress(line: str) -> None:
    print(line, flush=True)
