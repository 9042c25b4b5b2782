"""Where and how games are played: the cluster options of every command that plays games."""
from __future__ import annotations

import os
from dataclasses import dataclass, field


class GamesError(ValueError):
    """Bad cluster options, a refused worker, a lost scheduler: one line."""


@dataclass(frozen=True)
class GamesOptions:
    """The games runner: a Dask scheduler's address, or a local cluster of ``workers``
    processes, or (neither) the command's ``--concurrency`` games on threads of this process.

    None of these decide a game's moves, so none is part of a tournament's id: a tournament
    started on one machine resumes on a cluster and the other way round."""

    cluster: str | None = field(default=None, metadata={
        "help": "play on this Dask scheduler (tcp://HOST:8786); its workers run the engines"})
    workers: int = field(default=0, metadata={
        "help": "without --cluster: start a local Dask cluster of N worker processes "
                "(0: play --concurrency games on threads of this process)"})
    games_per_worker: int = field(default=0, metadata={
        "help": "games a local worker plays at once (0: its cores / --threads-per-game); a "
                "remote worker plays as many as its --nthreads"})
    threads_per_game: int = field(default=1, metadata={
        "help": "cores one game takes (give the engines ?Threads=N to match)"})
    batch_pairs: int = field(default=1, metadata={
        "help": "game pairs per unit of work sent to a worker (an SPRT stops within one batch "
                "of its verdict; a dead worker loses at most its batch)"})
    clock_reference_nps: float = field(default=0.0, metadata={
        "help": "scale time controls by this reference nodes/s over the worker's measured "
                "'chesslab bench' nodes/s, as OpenBench (0: off); recorded with each game"})

    def __post_init__(self) -> None:
        for name in ("workers", "games_per_worker", "threads_per_game", "batch_pairs"):
            value = getattr(self, name)
            if value < (1 if name in ("threads_per_game", "batch_pairs") else 0):
                raise GamesError(f"--{name.replace('_', '-')} too small: {value!r}")
        if self.clock_reference_nps < 0:
            raise GamesError(f"--clock-reference-nps must be >= 0, got "
                             f"{self.clock_reference_nps!r}")
        if self.cluster and self.workers:
            raise GamesError("--cluster and --workers exclude each other (a remote cluster's "
                             "workers are started with 'dask worker')")
        if self.cluster is not None and "://" not in self.cluster and ":" not in self.cluster:
            raise GamesError(f"bad --cluster {self.cluster!r}: give tcp://HOST:PORT")

    def local_games_per_worker(self) -> int:
        return self.games_per_worker or max(1, (os.cpu_count() or 1) // self.threads_per_game)
