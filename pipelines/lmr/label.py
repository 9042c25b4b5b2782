"""Paper 003's label, the largest safe reduction (appendix A.3, Table 5.1), from a logged LMR
decision re-searched at every depth.

The logged position is the child after the reduced move; its re-search scores are turned to
the node's point of view (negated) and compared with the node's alpha: a depth *fails low*
when its score is <= alpha. With d_fh the deepest depth that fails high (0 if none):

- ``table`` (Table 5.1's text): reduce to the shallowest depth from which every deeper search
  fails low, r = full - (d_fh + 1);
- ``code`` (Listing A.3's code): r = full - d_fh, one more, which reduces onto the depth that
  fails high. Both give full - 1 when no depth fails high.

Table 5.1's example (alpha 100, depths 1..11, only depth 2 fails high) gives 8 and 9:

>>> scores = [99.7, 109.1, 99.9, 99.0, 99.0, 99.0, 99.0, 99.4, 99.3, 97.2, 96.5]
>>> largest_safe_reduction(scores, 100, "table"), largest_safe_reduction(scores, 100, "code")
(8, 9)
"""
from __future__ import annotations

from collections.abc import Sequence

from pipelines.lmr.config import LABEL_RULES, LmrDataError


def deepest_fail_high(scores: Sequence[float], alpha: float) -> int:
    """The deepest depth (1-based) whose score is above alpha; 0 when every one fails low."""
    return max((depth for depth, score in enumerate(scores, start=1) if score > alpha),
               default=0)


def largest_safe_reduction(scores: Sequence[float], alpha: float, rule: str = "table") -> int:
    """The label of a decision whose re-search gave ``scores[i]`` at depth i + 1 (the last one
    is the full depth), under ``rule`` (table or code)."""
    if rule not in LABEL_RULES:
        raise LmrDataError(f"label rule must be one of {LABEL_RULES}, got {rule!r}")
    full, high = len(scores), deepest_fail_high(scores, alpha)
    if high == 0:
        return full - 1
    return max(0, full - high - (1 if rule == "table" else 0))


def in_paper_range(n: int) -> bool:
    """Listing A.2's ``in_range``: n <= 10, or a multiple of 5 up to 30, or of 10 up to 60.

    >>> [n for n in range(1, 70) if in_paper_range(n)][9:]
    [10, 15, 20, 25, 30, 40, 50, 60]
    """
    return n <= 10 or (n <= 30 and n % 5 == 0) or (n <= 60 and n % 10 == 0)
