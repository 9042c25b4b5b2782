"""Fishtest's GSPRT: LLR values computed with fishtest's LLRcalc (LLR_normalized and
LLR_logistic, scipy's brentq) on the same counts, bounds, decisions, pentanomial counting."""
from __future__ import annotations

import math

import pytest

from pipelines.sprt import SprtConfig, SprtError, pentanomial, sprt

# (counts, elo0, elo1, fishtest normalized LLR, fishtest logistic LLR)
FISHTEST = [
    ([10, 100, 200, 110, 20], 0, 2, 0.26856490617540146, 0.42502645576636205),
    ([0, 15, 40, 20, 5], 0, 5, 0.3723978395649785, 0.6444785641889516),
    ([1234, 20000, 38000, 21000, 1500], 0, 2, 12.940607355074347, 19.241449988244604),
    ([100, 2000, 5000, 2100, 120], -1.75, 0.25, 1.7909396922353844, 3.8835358279856584),
    ([200, 300, 500], 0, 10, 9.910975228246999, 11.774010823771674),
    ([5, 0, 3, 0, 9], -3, 3, 0.10765174441116016, 0.08388635878398999),
]


@pytest.mark.parametrize("counts,elo0,elo1,normalized,logistic", FISHTEST)
def test_llr_equals_fishtest(counts: list[int], elo0: float, elo1: float, normalized: float,
                             logistic: float) -> None:
    """Guards the t-value MLE (normalised Elo, sqrt(2) per game pair), the expectation MLE
    (logistic Elo) and the 1e-3 regularisation of empty cells."""
    assert sprt(counts, elo0, elo1).llr == pytest.approx(normalized, rel=1e-9, abs=1e-9)
    assert sprt(counts, elo0, elo1, model="logistic").llr == pytest.approx(
        logistic, rel=1e-9, abs=1e-9)


def test_bounds_and_decisions() -> None:
    """Wald's bounds log(beta / (1 - alpha)) and log((1 - beta) / alpha); the big sample
    accepts H1, a losing one accepts H0, a small one continues."""
    result = sprt([1234, 20000, 38000, 21000, 1500], 0, 2)
    assert result.lower_bound == pytest.approx(math.log(0.05 / 0.95))
    assert result.upper_bound == pytest.approx(math.log(0.95 / 0.05))
    assert result.decision == "H1"
    assert sprt([1500, 21000, 38000, 20000, 1234], 0, 2).decision == "H0"
    assert sprt([10, 100, 200, 110, 20], 0, 2).decision == "continue"
    assert "accept H1" in result.describe()


def test_pentanomial_counts_game_pairs() -> None:
    """Pair scores 0, 0.5, 1, 1.5, 2 land in LL, LD, DD+WL, WD, WW."""
    assert pentanomial([0, 0.5, 1, 1, 1.5, 2, 2, 2]) == [1, 1, 2, 1, 3]
    with pytest.raises(SprtError, match="0.75"):
        pentanomial([0.75])


def test_bad_input_is_refused_with_the_value() -> None:
    with pytest.raises(SprtError, match=r"\[1, 2\]"):
        sprt([1, 2])
    with pytest.raises(SprtError, match="elo1 must exceed elo0"):
        SprtConfig(elo0=2, elo1=0)
    with pytest.raises(SprtError, match="'bayes'"):
        SprtConfig(model="bayes")
