"""The export step's configuration: one typed, validated dataclass (the CLI options come
from it)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from engines.config_choices import choice_problem
from warehouse.predicate import PredicateError, check_predicate

ExportFormat = Literal["text", "binpack", "epd", "parquet"]
MissingResult = Literal["skip", "draw"]
EXAMPLES_VIEW = "nnue_examples"
EXAMPLE_COLUMNS = ("position_key", "fen", "side_to_move", "engine_id", "depth", "score_cp",
                   "result", "game_id", "split_key", "in_check", "best_move")


class ExportError(ValueError):
    """An export that cannot be made (bad option, unknown data set): names the bad value."""


@dataclass(frozen=True)
class ExportConfig:
    """What to export, and how.

    dataset: ``nnue_examples`` (a selection of the view) or a model version (``nnue@3``,
        ``nnue@latest``, ``nnue@best``): the snapshot of the data it was trained on.
    """

    dataset: str = field(default=EXAMPLES_VIEW, metadata={
        "help": "nnue_examples, or a model version (nnue@3, nnue@latest) whose training "
                "snapshot is written"})
    format: ExportFormat = field(default="text", metadata={
        "help": "text (FEN | score | result, bullet/marlinflow), binpack (nnue-pytorch), epd "
                "(ce/bm/acd/c9), parquet"})
    out: str = field(default="", metadata={"help": "the file to write (replaced when it exists)"})
    engine_id: str | None = field(default=None, metadata={
        "help": "nnue_examples: only this label engine"})
    depth: int | None = field(default=None, metadata={"help": "nnue_examples: only this depth"})
    where: str | None = field(default=None, metadata={
        "help": "nnue_examples: SQL predicate on the view's columns (fen, score_cp, result, "
                "game_id, ...); one expression, no subqueries"})
    missing_result: MissingResult = field(default="skip", metadata={
        "help": "positions without a game result (text and binpack need one): skip them, or "
                "write them as draws; both are counted in the summary"})
    batch_rows: int = field(default=200_000, metadata={"help": "rows read and written at a time"})

    def __post_init__(self) -> None:
        if problem := choice_problem(self):
            raise ExportError(f"export: {problem}")
        if not self.out:
            raise ExportError("export: give --out PATH, the file to write")
        if self.batch_rows < 1:
            raise ExportError(f"export: batch_rows must be positive, got {self.batch_rows!r}")
        if self.dataset != EXAMPLES_VIEW:
            if "@" not in self.dataset:
                raise ExportError(f"export: dataset must be nnue_examples or a model version "
                                  f"(KIND@VERSION), got {self.dataset!r}")
            if self.engine_id or self.depth is not None or self.where:
                raise ExportError(f"export: --engine-id, --depth and --where select "
                                  f"nnue_examples rows; {self.dataset} is exported whole")
        if self.where is not None:
            try:
                check_predicate(self.where, EXAMPLES_VIEW, EXAMPLE_COLUMNS)
            except PredicateError as exc:
                raise ExportError(f"bad --where predicate {self.where!r}: {exc.reason}") from None
