"""The label step's configuration: one typed, validated dataclass (the CLI options come from it)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

from warehouse.predicate import PredicateError, check_predicate
from warehouse.tables import table

DEFAULT_ENGINE = "/usr/games/stockfish"
MAX_DEPTH = 99
# Per-position timeout when none is given: generous, from the search limit. Stockfish with
# one thread searches well above 100k nodes/s here; depth grows its tree by under 2x per ply.
TIMEOUT_BASE_S = 30.0
TIMEOUT_NODES_PER_S = 50_000
TIMEOUT_DEPTH_GROWTH = 1.8
TIMEOUT_DEPTH_UNIT_S = 0.001


class LabelConfigError(ValueError):
    """A label option is out of range: names the option and the bad value."""


class WherePredicateError(LabelConfigError):
    """A --where predicate that is not one expression over the positions columns: quotes it."""


def check_where(predicate: str) -> None:
    """WherePredicateError unless ``predicate`` is one expression over the positions columns
    (no subqueries, no other tables, no table functions)."""
    try:
        check_predicate(predicate, "positions", table("positions").schema.names)
    except PredicateError as exc:
        raise WherePredicateError(f"bad --where predicate {predicate!r}: {exc.reason}") from None


@dataclass(frozen=True)
class LabelConfig:
    """What to label and how (``chesslab label`` options).

    The engine's identity (``engine_id``) hashes its name, version and the UCI options this
    config sets that change play (Threads=1, Hash), so labels from different settings never mix.
    """

    depths: tuple[int, ...] = field(default=(5, 6, 7), metadata={
        "help": "depths to label, comma-separated; one search to the deepest gives them all"})
    nodes: int | None = field(default=None, metadata={
        "help": "search each position with 'go nodes N' instead of 'go depth'; only requested "
                "depths whose iteration completed are stored"})
    limit: int | None = field(default=None, metadata={
        "help": "label at most this many positions (in position_key order)"})
    workers: int = field(default_factory=lambda: os.cpu_count() or 1, metadata={
        "help": "engine processes run at once (one Stockfish with Threads=1 each)"})
    where: str | None = field(default=None, metadata={
        "help": "SQL predicate on the positions columns (position_key, fen, source_id, "
                "first_seen) choosing what to label, e.g. \"fen like '% w %'\"; one expression: "
                "no subqueries, no other tables"})
    engine: str = field(default=DEFAULT_ENGINE, metadata={"help": "UCI engine executable"})
    hash_mb: int = field(default=16, metadata={"help": "engine hash table size, MB"})
    retries: int = field(default=2, metadata={
        "help": "restarts of a crashed or hung engine per position before it is a label error"})
    timeout: float | None = field(default=None, metadata={
        "help": "seconds one position may take before the engine counts as hung "
                "(default: generous, from the depth or nodes)"})
    batch_size: int = field(default=500, metadata={
        "help": "positions per task: a task runs one engine and writes its own parts"})
    flush_seconds: float = field(default=5.0, metadata={
        "help": "write finished labels at least this often, so a killed run loses little"})
    pv_moves: int = field(default=8, metadata={"help": "first PV moves kept in a label"})

    def __post_init__(self) -> None:
        if not self.depths:
            raise LabelConfigError("depths: give at least one depth, e.g. 5,6,7")
        bad = [d for d in self.depths if not 1 <= d <= MAX_DEPTH]
        if bad:
            raise LabelConfigError(f"depths: {bad[0]!r} is not between 1 and {MAX_DEPTH}")
        object.__setattr__(self, "depths", tuple(sorted(set(self.depths))))
        for name in ("nodes", "limit", "workers", "hash_mb", "batch_size", "pv_moves"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise LabelConfigError(f"{name}: must be at least 1, got {value!r}")
        if self.retries < 0:
            raise LabelConfigError(f"retries: must be 0 or more, got {self.retries!r}")
        for name in ("timeout", "flush_seconds"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise LabelConfigError(f"{name}: must be positive, got {value!r}")
        if self.where is not None and not self.where.strip():
            raise LabelConfigError("where: empty predicate")
        if self.where is not None:
            check_where(self.where)

    @property
    def go_command(self) -> str:
        """The one search each position gets."""
        return f"go nodes {self.nodes}" if self.nodes else f"go depth {max(self.depths)}"

    @property
    def search_limit(self) -> str:
        """The search limit as stored in ``labels.search_limit``: 'depth 7' or 'nodes 10000'."""
        return self.go_command[len("go "):]

    def go_for(self, depths: tuple[int, ...]) -> str:
        """The search for a position missing ``depths`` (a resumed position may need less)."""
        return self.go_command if self.nodes else f"go depth {max(depths)}"

    @property
    def timeout_s(self) -> float:
        """Seconds a single position may take."""
        if self.timeout is not None:
            return self.timeout
        if self.nodes:
            return TIMEOUT_BASE_S + self.nodes / TIMEOUT_NODES_PER_S
        return TIMEOUT_BASE_S + TIMEOUT_DEPTH_UNIT_S * TIMEOUT_DEPTH_GROWTH ** max(self.depths)

    @property
    def uci_options(self) -> dict[str, str]:
        """The options every engine of the pool gets (part of the engine's identity)."""
        return {"Threads": "1", "Hash": str(self.hash_mb), "UCI_ShowWDL": "true"}

    @classmethod
    def tiny(cls, **overrides: object) -> LabelConfig:
        """A preset small enough for tests: shallow depths, one worker, small batches."""
        values: dict[str, object] = dict(depths=(3, 4, 5), limit=40, workers=1, batch_size=10,
                                         flush_seconds=1.0, timeout=30.0, retries=1)
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]

    def with_(self, **changes: object) -> LabelConfig:
        return replace(self, **changes)  # type: ignore[arg-type]
