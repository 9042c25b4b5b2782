"""Configuration and errors of ``chesslab lmr-data`` and ``chesslab train lmr`` (paper 003)."""
from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from engines.alphabeta import EVALS
from engines.alphabeta.bench import BenchConfig
from engines.alphabeta.formula import TERMS
from engines.config_choices import choice_problem

#: Paper 003 logs one in 2,048 eligible LMR nodes (Listing A.2's ``rand() % 2048 == 0``).
PAPER_LOG_RATE = 1 / 2048
#: Listing A.3 skips records whose full depth is above 30.
PAPER_MAX_FULL_DEPTH = 30
LabelRule = Literal["table", "code"]
LABEL_RULES: tuple[LabelRule, ...] = typing.get_args(LabelRule)


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
    label_max_nodes: int = field(default=2_000_000, metadata={
        "help": "nodes a re-search may take; a decision whose re-search does not reach its "
                "full depth within them gets no label (capped)"})
    label_chunk: int = field(default=50, metadata={
        "help": "decisions re-searched and written per unit"})
    seed: int = field(default=1, metadata={"help": "seed of the random plies"})

    def __post_init__(self) -> None:
        if self.nodes is None and self.depth is None:
            raise LmrDataError("lmr-data: give a search limit, --nodes N or --depth D")
        for name in ("games", "nodes", "depth", "max_plies", "hash_mb", "label_chunk",
                     "max_full_depth", "label_max_nodes"):
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


# --- chesslab train lmr (the fit is pipelines.kinds.lmr.fit; its config stays light to import) -

#: Paper 003, Table 6.1 (p.36), every row: the terms, the fitted coefficients, R^2.
PAPER_TABLE_6_1: tuple[tuple[tuple[str, ...], tuple[float, ...], float], ...] = (
    (("logd*logm",), (1.0915,), 0.3588),
    (("logd",), (2.0351,), 0.4157),
    (("logm",), (1.8865,), 0.0105),
    (("|alpha-S|",), (0.000110438,), -1.6759),
    (("md",), (0.000981318,), -1.7541),
    (("logd*logm", "logd"), (0.3761, 1.3697), 0.4352),
    (("logd*logm", "logm"), (3.1016, -3.8611), 0.6274),
    (("logd*logm", "logd", "logm"), (2.3988, 2.1270, -4.6450), 0.8005),
    (("logd*logm", "|alpha-S|"), (1.0867, 8.4988e-06), 0.3595),
    (("logd*logm", "md"), (1.0897, 7.0620e-05), 0.3591),
    (("logd*logm", "|alpha-S|", "md"), (1.0856, 7.9740e-06, 5.6869e-05), 0.3597),
    (("|alpha-S|", "md"), (0.0001, 0.0008), -1.6441),
    (("logd*logm", "logd", "logm", "|alpha-S|", "md"), (2.39, 2.14, -4.64, -3.78e-6, -2.5e-5),
     0.8007),
)
#: The paper's chosen formula (Eq. 6.1) and its bench scale (Eq. 6.2).
PAPER_CHOICE = "logd*logm + logd + logm"
PAPER_SCALE = 0.40596


def formula_name(terms: Sequence[str]) -> str:
    return " + ".join(terms)


#: The Table 6.1 formulas an engine can play: those in log d and log m only.
DEPLOYABLE = tuple(formula_name(terms) for terms, _, _ in PAPER_TABLE_6_1
                   if set(terms) <= set(TERMS))


#: The scales benched first, Figure 6.1's sweep, until the node count drops below the
#: default's. The count is a step function of the scale (the table changes only where some
#: scale * value(d, m) crosses an integer) and not monotone inside a sweep step, so the search
#: then runs over the distinct tables between the two sweep points: bisection, then the tables
#: next to the crossing, outwards, until one is within the tolerance.
SWEEP = tuple(0.0625 * 2 ** k for k in range(10))


class LmrTrainError(ValueError):
    """Bad ``train lmr`` input: names the option, run or model and the bad value."""


@dataclass(frozen=True)
class LmrConfig:
    """``chesslab train lmr``: fit every Table 6.1 formula to the lmr_examples labels with
    scikit-learn, register a model version, scale the chosen formula to the default formula's
    bench node count and record the scale."""

    name: str | None = field(default=None, metadata={
        "help": "a label for the model (default: lmr)"})
    label: LabelRule = field(default="table", metadata={
        "help": "label rule: table (Table 5.1's text) or code (Listing A.3, one more)"})
    data_run: str | None = field(default=None, metadata={
        "help": "fit one lmr-data run (lmr-...; default: every labelled decision)"})
    deploy: str = field(default=PAPER_CHOICE, metadata={
        "help": "the formula that becomes the engine's reduction (terms in log d, log m only)"})
    min_rows: int = field(default=20, metadata={"help": "refuse to fit fewer examples"})
    eval: str = field(default="hce", metadata={"help": "evaluation of the bench and engine"})
    bench_depth: int = field(default=8, metadata={"help": "bench search depth (chesslab bench: 8)"})
    bench_positions: int = field(default=24, metadata={"help": "bench positions (1..24)"})
    bench_hash: int = field(default=16, metadata={"help": "bench transposition table, MiB"})
    tolerance: float = field(default=0.005, metadata={
        "help": "stop the scale search within this relative node difference (must be < 0.01)"})
    max_steps: int = field(default=30, metadata={
        "help": "bench runs of the scale search (the sweep's ten included)"})
    intercept_steps: int = field(default=20, metadata={
        "help": "bench runs trying Listing A.4's intercept (+-0.05 .. +-0.5) at the nearest "
                "scale when no scale alone is within the tolerance (0: scale only, as Figure "
                "6.1)"})

    def __post_init__(self) -> None:
        if problem := choice_problem(self):
            raise LmrTrainError(problem)
        if self.deploy not in DEPLOYABLE:
            raise LmrTrainError(f"deploy: must be a Table 6.1 formula in log d and log m "
                                f"({'; '.join(DEPLOYABLE)}), got {self.deploy!r}")
        if not 0 < self.tolerance < 0.01 or self.min_rows < 1 or self.max_steps < len(SWEEP) \
                or not 0 <= self.intercept_steps <= 20:
            raise LmrTrainError(f"tolerance must be in (0, 0.01), min_rows >= 1, max_steps >= 10,"
                                f" intercept_steps in 0..20; got {self.tolerance!r}, "
                                f"{self.min_rows!r}, {self.max_steps!r}, "
                                f"{self.intercept_steps!r}")
        self.bench_config()

    def bench_config(self) -> BenchConfig:
        return BenchConfig(depth=self.bench_depth, eval=self.eval, hash_mb=self.bench_hash,
                           positions=self.bench_positions)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True, separators=(",", ":"))

    def run_identity(self) -> str:
        return self.to_json()

    @classmethod
    def tiny(cls, **overrides: Any) -> LmrConfig:
        """A shallow bench over six positions: the preset the tests run."""
        values: dict[str, Any] = dict(min_rows=5, bench_depth=5, bench_positions=6,
                                      bench_hash=1)
        values.update(overrides)
        return cls(**values)
