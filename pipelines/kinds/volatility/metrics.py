"""Paper 003's evaluation of a stability classifier (positive class = stable): ROC curve and
AUC, cumulative gains, and Table 4.1 (thresholds at fixed false-positive rates). numpy only.

A position is flagged stable when its probability is *strictly above* the threshold, the
comparison of algorithm 2 (``stable > threshold``).

>>> roc = roc_curve(np.array([0.9, 0.8, 0.8, 0.1]), np.array([True, False, True, False]))
>>> roc.fpr.tolist(), roc.tpr.tolist()
([0.0, 0.0, 0.5, 1.0], [0.0, 0.5, 1.0, 1.0])
>>> float(roc.auc)
0.875
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Paper 003, Table 4.1 (FPR, TPR, threshold), verbatim, as fractions.
PAPER_TABLE_4_1: tuple[tuple[float, float, float], ...] = tuple(
    (fpr / 100, tpr / 100, threshold) for fpr, tpr, threshold in (
        (0.1, 2.11, 0.93), (0.2, 3.25, 0.875), (0.3, 4.28, 0.829), (0.4, 5.18, 0.789),
        (0.5, 6.02, 0.762), (0.6, 6.52, 0.738), (0.7, 7.09, 0.713), (0.8, 7.73, 0.692),
        (0.9, 8.21, 0.674), (1.0, 8.69, 0.658), (1.1, 9.06, 0.644), (1.2, 9.44, 0.633),
        (1.3, 9.72, 0.624), (1.4, 10.15, 0.613), (1.5, 10.48, 0.605), (1.6, 10.86, 0.597),
        (1.7, 11.27, 0.589), (1.8, 11.58, 0.582), (1.9, 11.92, 0.576)))
PAPER_AUC = 0.71
#: The paper's chosen operating point: FPR 0.5 % (threshold 0.762).
PAPER_TARGET_FPR = 0.005


class MetricsError(ValueError):
    """Predictions that cannot be evaluated (one class missing, lengths differ)."""


@dataclass(frozen=True)
class Roc:
    """ROC points from the strictest threshold (nothing flagged) to flagging everything."""

    thresholds: np.ndarray
    fpr: np.ndarray
    tpr: np.ndarray
    flagged: np.ndarray      # positions flagged at each threshold
    true_positives: np.ndarray

    @property
    def auc(self) -> float:
        """Area under the curve (trapezoids: ties count one half, as Mann-Whitney)."""
        return float(np.sum(np.diff(self.fpr) * (self.tpr[1:] + self.tpr[:-1]) / 2))


def no_better_than_chance(auc: float, positions: int) -> str | None:
    """What a validation ROC AUC at or below 0.5 means (None above it): the model ranks the
    stable positions no better than a coin, whatever its threshold.

    >>> print(no_better_than_chance(0.4578, 812))
    validation ROC AUC 0.4578 on 812 positions is at or below chance (0.5): the model does not tell stable positions from volatile ones; train on more labelled positions or for more epochs before using it
    >>> no_better_than_chance(0.71, 812) is None
    True
    """
    if auc > 0.5:
        return None
    return (f"validation ROC AUC {auc:.4f} on {positions:,} positions is at or below chance "
            f"(0.5): the model does not tell stable positions from volatile ones; train on "
            f"more labelled positions or for more epochs before using it")


def check(probability: np.ndarray, stable: np.ndarray) -> None:
    if len(probability) != len(stable):
        raise MetricsError(f"{len(probability)} predictions for {len(stable)} labels")
    positives = int(np.sum(stable))
    if positives == 0 or positives == len(stable):
        raise MetricsError(f"{len(stable)} positions with {positives} stable: a ROC curve "
                           "needs both stable and unstable positions")


def roc_curve(probability: np.ndarray, stable: np.ndarray) -> Roc:
    """The ROC curve at every distinct probability (flagged = probability > threshold)."""
    check(probability, stable)
    order = np.argsort(-probability, kind="stable")
    p, y = probability[order], np.asarray(stable, dtype=bool)[order]
    ends = np.r_[np.flatnonzero(np.diff(p)), len(p) - 1]   # last index of each distinct value
    true_positives = np.r_[0, np.cumsum(y)[ends]]
    flagged = np.r_[0, ends + 1]
    thresholds = np.r_[p[ends], np.nextafter(p[-1], -np.inf)]
    positives, negatives = int(y.sum()), int(len(y) - y.sum())
    return Roc(thresholds, (flagged - true_positives) / negatives, true_positives / positives,
               flagged, true_positives)


def gains_curve(probability: np.ndarray, stable: np.ndarray) -> np.ndarray:
    """Share of the stable positions among the top 0, 1, ..., 100 % by probability."""
    check(probability, stable)
    y = np.asarray(stable, dtype=bool)[np.argsort(-probability, kind="stable")]
    found = np.r_[0, np.cumsum(y)]
    taken = np.ceil(np.arange(101) * len(y) / 100).astype(int)
    return found[taken] / y.sum()


@dataclass(frozen=True)
class FprRow:
    """One row of the Table 4.1 analogue."""

    target_fpr: float
    threshold: float
    tpr: float
    fpr: float
    flagged_share: float
    precision: float | None


def at_fpr(roc: Roc, target_fpr: float) -> FprRow:
    """The loosest threshold whose FPR does not exceed ``target_fpr``."""
    index = int(np.flatnonzero(roc.fpr <= target_fpr + 1e-12).max())
    flagged = int(roc.flagged[index])
    return FprRow(target_fpr, float(roc.thresholds[index]), float(roc.tpr[index]),
                  float(roc.fpr[index]), flagged / int(roc.flagged[-1]),
                  float(roc.true_positives[index] / flagged) if flagged else None)


def fpr_table(roc: Roc) -> list[FprRow]:
    """Table 4.1's analogue at the paper's 19 FPR levels."""
    return [at_fpr(roc, fpr) for fpr, _, _ in PAPER_TABLE_4_1]


def thin(roc: Roc, points: int = 1001) -> np.ndarray:
    """Indices of at most ``points`` ROC points, both ends kept (what the warehouse stores)."""
    if len(roc.fpr) <= points:
        return np.arange(len(roc.fpr))
    return np.unique(np.linspace(0, len(roc.fpr) - 1, points).round().astype(int))
