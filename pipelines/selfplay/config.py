"""The self-play step's configuration and errors."""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field

from pipelines.games.config import GamesOptions


class SelfplayError(ValueError):
    """Bad self-play input or an engine that cannot play: names the engine, file or option."""


def default_workers() -> int:
    return os.cpu_count() or 1


@dataclass(frozen=True)
class SelfplayConfig:
    """How ``chesslab selfplay`` makes games: one engine playing both sides from varied starts.

    Everything but ``games``, ``workers`` and ``runner`` goes into the run id, so running the same command
    again (or with more ``games``) continues the same run: game ``g`` is seeded by
    ``(seed, g)`` and only the games missing from the run's batch files are played.
    """

    engine: str = field(default="alphabeta:eval=hce", metadata={
        "help": "engine spec, as tournaments take them (alphabeta:eval=hce, stockfish, "
                "stockfish@1800, uci:PATH); chesslab's own alphabeta runs in-process"})
    games: int = field(default=100, metadata={"help": "games the run holds when done"})
    nodes: int | None = field(default=None, metadata={"help": "node limit per move"})
    depth: int | None = field(default=None, metadata={"help": "depth limit per move"})
    random_plies: int = field(default=8, metadata={
        "help": "random legal plies played at the start of each game (after the opening, "
                "when --openings is given)"})
    openings: str | None = field(default=None, metadata={
        "help": "opening file (.epd, .pgn or Polyglot .bin), as tournaments take them; game g "
                "starts from opening g mod n"})
    opening_plies: int = field(default=8, metadata={
        "help": "plies taken from each PGN game, or walked in a Polyglot book"})
    max_plies: int = field(default=400, metadata={
        "help": "plies after which a game is adjudicated a draw"})
    batch_games: int = field(default=16, metadata={
        "help": "games per batch: each batch is one PGN file, ingested as one source"})
    seed: int = field(default=1, metadata={"help": "seed of the random plies and book walks"})
    workers: int = field(default_factory=default_workers, metadata={
        "help": "processes playing batches at once (a local Dask cluster of N workers; with "
                "--cluster: batches at once on the cluster)"})
    runner: GamesOptions = field(default_factory=GamesOptions, metadata={
        "help": "where the batches are played (--cluster, ...)"})

    def games_options(self) -> GamesOptions:
        """The games runner: ``workers`` processes of one batch each (one: in this process),
        or the ``--cluster``."""
        if self.runner.cluster:
            return self.runner
        return dataclasses.replace(self.runner, workers=self.workers if self.workers > 1 else 0,
                                   games_per_worker=self.runner.games_per_worker or 1)

    def __post_init__(self) -> None:
        if not self.engine.strip():
            raise SelfplayError("selfplay config: --engine is empty")
        if self.nodes is None and self.depth is None:
            raise SelfplayError("selfplay config: give a search limit, --nodes N or --depth D")
        for name in ("games", "max_plies", "batch_games", "workers", "nodes", "depth"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise SelfplayError(
                    f"selfplay config: {name} must be a positive integer, got {value!r}")
        for name in ("random_plies", "opening_plies"):
            if getattr(self, name) < 0:
                raise SelfplayError(
                    f"selfplay config: {name} must be >= 0, got {getattr(self, name)!r}")

    def limit_text(self) -> str:
        """The search limit as the PGN tags and the summary write it.

        >>> SelfplayConfig(nodes=200).limit_text()
        'nodes=200'
        """
        parts = [f"nodes={self.nodes}"] if self.nodes else []
        return ",".join(parts + ([f"depth={self.depth}"] if self.depth else []))

    @classmethod
    def tiny(cls, **overrides: object) -> SelfplayConfig:
        """Four short games of the in-process engine at 200 nodes: the preset the tests run."""
        values: dict[str, object] = dict(engine="alphabeta:eval=hce,hash=1", games=4, nodes=200,
                                         random_plies=2, max_plies=200, batch_games=2, workers=1)
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]
