"""A learned late-move-reduction formula in log d and log m (paper 003, Eq. 5.2 without the
|alpha - S| and material terms, which the paper found weightless and dropped).

r = floor(scale * (A * log d * log m + B * log d + C * log m) + Y), clamped at 0 as the paper's
``max(int(...), 0)`` table (Listing A.4). Y, the ``intercept`` term, is Listing A.4's fourth
runtime parameter: the fits have none (they go through the origin), but the bench
normalisation may add one when no scale alone reaches the default's node count. d is the
node's remaining depth, m the 1-based move number. The search reads it as a 64 x 64 table, so
a learned formula costs what the default formula costs; it is also a plain
``reduction(d, m, state)`` callable.

The text form names every term, so it never starts with ``-`` (it travels as a command-line
argument and inside engine spec strings, where ``,`` separates settings):

>>> formula = LmrFormula.parse("logd*logm=0.97382;logd=0.86347;logm=-1.8857")
>>> formula(10, 20, {}), formula(3, 30, {})
(3, 0)
>>> LmrFormula.parse(str(formula)) == formula
True
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: The terms a deployable formula may use, as the text form names them.
TERMS = ("logd*logm", "logd", "logm", "intercept")
TABLE_SIZE = 64


class LmrFormulaError(ValueError):
    """A formula text that does not parse; the message quotes it."""


def term_value(term: str, depth: int, move_number: int) -> float:
    """One term at (d, m)."""
    log_d, log_m = math.log(depth), math.log(move_number)
    return {"logd*logm": log_d * log_m, "logd": log_d, "logm": log_m, "intercept": 1.0}[term]


@dataclass(frozen=True)
class LmrFormula:
    """Coefficients per term (see :data:`TERMS`); missing terms are 0."""

    coefficients: tuple[tuple[str, float], ...]

    def __post_init__(self) -> None:
        for term, value in self.coefficients:
            if term not in TERMS:
                raise LmrFormulaError(f"LMR formula: unknown term {term!r} (one of "
                                      f"{', '.join(TERMS)})")
            if not math.isfinite(value):
                raise LmrFormulaError(f"LMR formula: coefficient of {term} is {value!r}")

    @property
    def __name__(self) -> str:  # what the search log records as the lmr column
        return f"formula:{self}"

    @classmethod
    def of(cls, coefficients: Mapping[str, float]) -> LmrFormula:
        return cls(tuple((term, float(coefficients[term])) for term in TERMS
                         if term in coefficients))

    @classmethod
    def parse(cls, text: str) -> LmrFormula:
        """``logd*logm=A;logd=B;logm=C`` (any subset, any order)."""
        values: dict[str, float] = {}
        for item in filter(None, text.strip().split(";")):
            term, eq, number = item.partition("=")
            try:
                values[term.strip()] = float(number)
            except ValueError:
                raise LmrFormulaError(f"LMR formula {text!r}: bad term {item!r} (want "
                                      f"TERM=NUMBER; terms {', '.join(TERMS)})") from None
            if not eq:
                raise LmrFormulaError(f"LMR formula {text!r}: bad term {item!r}")
        if not values:
            raise LmrFormulaError(f"LMR formula {text!r}: no terms")
        unknown = set(values) - set(TERMS)
        if unknown:
            raise LmrFormulaError(f"LMR formula {text!r}: unknown term {sorted(unknown)[0]!r}")
        return cls.of(values)

    def scaled(self, scale: float) -> LmrFormula:
        """Every coefficient times ``scale`` (the bench normalisation of Figure 6.1)."""
        return LmrFormula(tuple((term, value * scale) for term, value in self.coefficients))

    def shifted(self, intercept: float) -> LmrFormula:
        """The same terms with ``intercept`` as the constant (the normalisation's second knob).

        >>> str(LmrFormula.parse("logd=0.5").shifted(0.1))
        'logd=0.5;intercept=0.1'
        """
        terms = {term: value for term, value in self.coefficients if term != "intercept"}
        return LmrFormula.of({**terms, "intercept": intercept} if intercept else terms)

    def value(self, depth: int, move_number: int) -> float:
        return sum(c * term_value(t, depth, move_number) for t, c in self.coefficients)

    def __call__(self, depth: int, move_number: int, state: Mapping[str, Any] | None = None) -> int:
        if depth < 1 or move_number < 1:
            return 0
        return max(0, math.floor(self.value(depth, move_number)))

    def table(self) -> list[list[int]]:
        """The reduction for every (d, m) in 0..63, as the search indexes it (capped at 63)."""
        return [[min(63, self(d, m)) for m in range(TABLE_SIZE)] for d in range(TABLE_SIZE)]

    def __str__(self) -> str:
        return ";".join(f"{term}={value:.6g}" for term, value in self.coefficients)
