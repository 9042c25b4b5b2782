"""The ``chesslab lmr-data`` step's configuration and errors."""
from __future__ import annotations

from dataclasses import dataclass, field

from engines.alphabeta import EVALS

#: Paper 003 logs one in 2,048 eligible LMR nodes (Listing A.2's ``rand() % 2048 == 0``).
PAPER_LOG_RATE = 1 / 2048
#: Listing A.3 skips records whose full depth is above 30.
PAPER_MAX_FULL_DEPTH = 30
LABEL_RULES = ("table", "code")


class LmrDataError(ValueError):
    """Bad lmr-data input: names the option, file or record and the bad value."""


@dataclass(frozen=True)
class LmrDataConfig:
    """``chesslab lmr-data``: self-play games of the alpha-beta engine that log LMR decisions
    (paper 003 appendix A.2), then every logged decision re-searched at depths 1..full and
    labelled with the largest safe reduction (A.3; both label rules are stored).

    Everything but ``games`` goes into the data run's id, so the same command again (or with
    more ``games``) continues the run: games with a done marker are not replayed, logged
    decisions with an ``lmr_examples`` row are not re-searched.
    """

    games: int = field(default=100, metadata={"help": "self-play games the run holds when done"})
    nodes: int | None = field(default=20000, metadata={"help": "node limit per move"})
    depth: int | None = field(default=None, metadata={"help": "depth limit per move"})
    eval: str = field(default="hce", metadata={"help": "evaluation: hce or hce-simple"})
    log_rate: float = field(default=PAPER_LOG_RATE, metadata={
        "help": "fraction of eligible LMR decisions logged (paper 003: 1/2048)"})
    paper_range: bool = field(default=True, metadata={
        "help": "label only decisions with d and m in Listing A.2's do_log range "
                "(<= 10, then 15..30 by 5, 40..60 by 10)"})
    max_full_depth: int = field(default=PAPER_MAX_FULL_DEPTH, metadata={
        "help": "skip decisions whose unreduced depth is above this (A.3: 30)"})
    random_plies: int = field(default=8, metadata={
        "help": "random legal plies at the start of each game (after the opening)"})
    openings: str | None = field(default=None, metadata={
        "help": "opening file (.epd, .pgn or Polyglot .bin); game g starts from opening g mod n"})
    opening_plies: int = field(default=6, metadata={
        "help": "plies taken from each PGN game (paper 003: 6)"})
    max_plies: int = field(default=300, metadata={"help": "plies after which a game stops"})
    hash_mb: int = field(default=16, metadata={"help": "transposition table of both engines"})
    label_chunk: int = field(default=50, metadata={
        "help": "decisions re-searched and written per unit"})
    seed: int = field(default=1, metadata={"help": "seed of the random plies"})

    def __post_init__(self) -> None:
        if self.nodes is None and self.depth is None:
            raise LmrDataError("lmr-data: give a search limit, --nodes N or --depth D")
        for name in ("games", "nodes", "depth", "max_plies", "hash_mb", "label_chunk",
                     "max_full_depth"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise LmrDataError(f"lmr-data: {name} must be a positive integer, got {value!r}")
        if not 0 < self.log_rate <= 1:
            raise LmrDataError(f"lmr-data: log_rate must be in (0, 1], got {self.log_rate!r}")
        if self.eval not in EVALS:
            raise LmrDataError(f"lmr-data: eval must be one of {EVALS}, got {self.eval!r}")
        for name in ("random_plies", "opening_plies"):
            if getattr(self, name) < 0:
                raise LmrDataError(f"lmr-data: {name} must be >= 0, got {getattr(self, name)!r}")

    @property
    def engine_spec(self) -> str:
        """The self-play engine, as selfplay and tournaments name it."""
        return f"alphabeta:eval={self.eval},hash={self.hash_mb},search_log_rate={self.log_rate!r}"

    @classmethod
    def tiny(cls, **overrides: object) -> LmrDataConfig:
        """Two short games logging one decision in 20: the preset the tests run."""
        values: dict[str, object] = dict(games=2, nodes=3000, log_rate=0.05, max_plies=16,
                                         random_plies=4, hash_mb=1, label_chunk=8)
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]
