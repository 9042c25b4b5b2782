"""Fishtest's GSPRT: LLR values computed with fishtest's LLRcalc (LLR_normalized and
LLR_logistic, scipy's brentq) on the same counts, the LLRs fishtest published for Stockfish
patches, bounds, decisions, and pentanomial counting oriented from the first player's view."""
from __future__ import annotations

import math
from decimal import Decimal, getcontext
from pathlib import Path

import pytest

from pipelines.sprt import SprtConfig, SprtError, pentanomial, sprt
from pipelines.sprt.store import pair_counts_from_rows, tournament_counts
from warehouse import Lake

# (counts, elo0, elo1, fishtest normalized LLR, fishtest logistic LLR)
FISHTEST = [
    ([10, 100, 200, 110, 20], 0, 2, 0.26856490617540146, 0.42502645576636205),
    ([0, 15, 40, 20, 5], 0, 5, 0.3723978395649785, 0.6444785641889516),
    ([1234, 20000, 38000, 21000, 1500], 0, 2, 12.940607355074347, 19.241449988244604),
    ([100, 2000, 5000, 2100, 120], -1.75, 0.25, 1.7909396922353844, 3.8835358279856584),
    ([200, 300, 500], 0, 10, 9.910975228246999, 11.774010823771674),
    ([5, 0, 3, 0, 9], -3, 3, 0.10765174441116016, 0.08388635878398999),
    # issue 48: one-sided and all-draw samples (80-0 at normalized 0, 5: LLR 0.806)
    ([0, 0, 0, 0, 40], 0, 5, 0.80575760419762, 0.5715326732711336),
    ([40, 0, 0, 0, 0], 0, 5, -0.8223238995662756, -0.5798174316163298),
    ([0, 0, 40, 0, 0], 0, 5, -0.013658495731970123, -0.5728819589857442),
    ([0, 0, 0, 0, 147], 0, 5, 2.9611337097474975, 2.1003067003224007),
    ([0, 0, 80], 0, 5, 1.1429620759591, 1.1430084091713053),
    ([0, 40, 0], 0, 5, -0.00643554507866101, -0.5731395621083605),
]


@pytest.mark.parametrize("counts,elo0,elo1,normalized,logistic", FISHTEST)
def test_llr_equals_fishtest(counts: list[int], elo0: float, elo1: float, normalized: float,
                             logistic: float) -> None:
    """Guards the t-value MLE (normalised Elo, sqrt(2) per game pair), the expectation MLE
    (logistic Elo) and the 1e-3 regularisation of empty cells."""
    assert sprt(counts, elo0, elo1).llr == pytest.approx(normalized, rel=1e-9, abs=1e-9)
    assert sprt(counts, elo0, elo1, model="logistic").llr == pytest.approx(
        logistic, rel=1e-9, abs=1e-9)


# Fishtest runs quoted in Stockfish pull requests (tests.stockfishchess.org): pentanomial
# LL, LD, DD+WL, WD, WW of the patch (the first engine), W/L/D games of the patch, bounds, the
# Elo model (<a,b>: normalized, {a,b}: logistic, as fishtest prints them), published LLR.
PUBLISHED = [
    ("PR 4493 STC", [2002, 72968, 180891, 74129, 2034], (177526, 176301, 310221), 0.0, 2.0,
     "normalized", 3.22),
    ("PR 4493 LTC", [24, 7350, 23669, 7717, 28], (21125, 20750, 35701), 0.5, 2.5,
     "normalized", 2.94),
    ("PR 3209 STC", [253, 4282, 17604, 4431, 286], (5776, 5561, 42375), -0.25, 1.25,
     "logistic", 2.94),
    ("PR 3209 LTC", [58, 3302, 33130, 3518, 84], (4007, 3739, 72438), 0.25, 1.25,
     "logistic", 2.97),
    ("PR 3098 STC", [491, 7345, 29693, 7670, 465], (9940, 9667, 71721), -0.25, 1.25,
     "logistic", 2.96),
    ("PR 3098 LTC", [53, 2220, 21459, 2445, 47], (2799, 2586, 47063), 0.25, 1.25,
     "logistic", 2.97),
]


@pytest.mark.parametrize("run,counts,wld,elo0,elo1,model,published", PUBLISHED)
def test_llr_equals_published_fishtest_runs(run: str, counts: list[int],
                                            wld: tuple[int, int, int], elo0: float,
                                            elo1: float, model: str, published: float) -> None:
    """The LLR fishtest printed (two decimals) for these counts, read LL first: the counts'
    points reproduce the patch's published wins minus losses, and the same counts read from
    the other engine's view (reversed) give a negative LLR, so a flipped orientation fails."""
    wins, losses, draws = wld
    games = 2 * sum(counts)
    assert games == wins + losses + draws
    assert sum(i * c for i, c in enumerate(counts)) - games == wins - losses
    result = sprt(counts, elo0, elo1, model=model)
    assert result.llr == pytest.approx(published, abs=0.005), run
    assert sprt(counts[::-1], elo0, elo1, model=model).llr < 0


def game_rows(pair_scores: list[tuple[float, float]]) -> list[dict]:
    """Tournament rows of ``new`` against ``base``: ``new`` White in game 0 of each pair,
    ``pair_scores`` holding ``new``'s score in games 0 and 1."""
    rows = []
    for number, scores in enumerate(pair_scores):
        for game, score in enumerate(scores):
            white, black = ("new", "base") if game == 0 else ("base", "new")
            white_score = score if game == 0 else 1 - score
            rows.append({"tournament_id": "t-sprt", "game_key": f"0:{number}:{game}",
                         "pairing": 0, "round": number, "game_in_pair": game,
                         "white": white, "black": black, "white_score": white_score,
                         "result": {1.0: "1-0", 0.5: "1/2-1/2", 0.0: "0-1"}[white_score]})
    return rows


# new's pairs: one LL, two LD/DL, four DD/WL/LW, three WD/DW, two WW
NEW_PAIRS = [(0, 0), (0.5, 0), (0, 0.5), (0.5, 0.5), (1, 0), (0, 1), (0.5, 0.5), (1, 0.5),
             (0.5, 1), (1, 0.5), (1, 1), (1, 1)]


def test_tournament_counts_are_the_first_players(home: Path) -> None:
    """A two-player tournament in the warehouse: counts are ``new``'s (White in the first game
    of each pair, although ``base`` sorts first), and the LLR is fishtest's on them
    (LLRcalc: normalized 0.092586, logistic 0.108103; from ``base``'s view they would be
    -0.112192 and -0.134422). An unfinished pair is left out."""
    lake = Lake(home)
    rows = game_rows(NEW_PAIRS)
    rows.append({**game_rows([(1, 1)])[0], "game_key": "0:12:0", "round": 12})
    lake.write("tournament_games", rows)
    counts, first, second = tournament_counts(lake, "t-sprt")
    assert (counts, first, second) == ([1, 2, 4, 3, 2], "new", "base")
    assert pair_counts_from_rows(rows, "base") == [2, 3, 4, 2, 1]
    assert sprt(counts, 0, 10).llr == pytest.approx(0.09258629888409334, rel=1e-9)
    assert sprt(counts, 0, 10, model="logistic").llr == pytest.approx(0.10810334467368299,
                                                                     rel=1e-9)


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


def test_forecast_drift_is_the_llr_of_a_long_run_and_meets_alpha_and_beta() -> None:
    """The forecast's drift is what llr() gives counts in the forecast's proportions, per pair;
    at the true Elo elo0 (elo1) of a logistic test it accepts H1 with probability alpha
    (1 - beta), Wald's operating characteristic."""
    from pipelines.sprt import forecast, pair_pdf

    config = SprtConfig(0, 10)
    at = forecast(config, elo=38.4, draw_ratio=0.21)
    counts = [round(p * 1_000_000) for _, p in pair_pdf(38.4, 0.21)]
    assert at.drift == pytest.approx(sprt(counts, 0, 10).llr / 1_000_000, rel=1e-3)
    assert at.p_h1 > 0.999 and at.games == pytest.approx(942, abs=2)
    # stop 18's LMR match: -56.3 Elo, 41% draws, about -0.0023 a pair
    lmr = forecast(SprtConfig(-1.75, 0.25), elo=-56.3, draw_ratio=0.41)
    assert lmr.drift == pytest.approx(-0.00233, abs=5e-5) and lmr.p_h1 < 1e-6
    logistic = SprtConfig(0, 10, alpha=0.05, beta=0.1, model="logistic")
    assert forecast(logistic, 0, 0.3).p_h1 == pytest.approx(0.05, abs=0.005)
    assert forecast(logistic, 10, 0.3).p_h1 == pytest.approx(0.9, abs=0.005)
    # a non-regression test of an equal change needs fishtest's scale of games
    assert forecast(SprtConfig(-1.75, 0.25), 0, 0.41).games > 100_000


def test_forecast_matches_simulated_tests() -> None:
    """100 simulated SPRT(0,10) runs at +38.4 Elo and 21% draws, pairs drawn from the
    forecast's distribution and the real llr() checked every 8 pairs: their mean length is
    the forecast's within 15% (the overshoot past the bound lengthens them a little)."""
    import random

    from pipelines.sprt import forecast, pair_pdf

    rng = random.Random(7)
    cells, weights = range(5), [p for _, p in pair_pdf(38.4, 0.21)]
    lengths, accepted = [], 0
    for _ in range(100):
        counts = [0] * 5
        while True:
            for cell in rng.choices(cells, weights, k=8):
                counts[cell] += 1
            decision = sprt(counts, 0, 10).decision
            if decision != "continue":
                break
        lengths.append(sum(counts))
        accepted += decision == "H1"
    expected = forecast(SprtConfig(0, 10), 38.4, 0.21)
    assert accepted >= 97
    assert sum(lengths) / len(lengths) == pytest.approx(expected.pairs, rel=0.15)


def test_forecast_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    """`chesslab sprt --forecast ELO --draws D` prints the expected course; a draw ratio the
    Elo cannot have is a one-line error and exit 2."""
    from flows.cli import main

    assert main(["sprt", "--forecast", "38.4", "--draws", "0.21", "--elo0", "0",
                 "--elo1", "10"]) == 0
    assert capsys.readouterr().out.strip() == (
        "SPRT elo0=0 elo1=10 alpha=0.05 beta=0.05 (normalized Elo): "
        "true Elo +38.4 with 21% draws: LLR +0.00625 a game pair (sd 0.040); accepts H1 "
        "with probability 1.00 after about 471 game pairs (942 games) on average")
    assert main(["sprt", "--forecast", "300", "--draws", "0.5"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("50% draws cannot score 84.9% (Elo +300): need draws <= 30%")
    assert len(err.splitlines()) == 1


# --- issue 32 §4, §5: the bounds in every output, bounds the model cannot test ------------

def test_every_sprt_output_names_its_bounds_and_model(capsys: pytest.CaptureFixture[str]) -> None:
    """``chesslab sprt`` used [0, 2] and ``evaluate`` [0, 10] and neither said which."""
    from flows.cli import main

    head = "SPRT elo0=-1.75 elo1=0.25 alpha=0.1 beta=0.2 (logistic Elo): "
    options = ["--elo0", "-1.75", "--elo1", "0.25", "--alpha", "0.1", "--beta", "0.2",
               "--model", "logistic"]
    assert main(["sprt", "--counts", "10,100,200,110,20", *options]) == 0
    assert capsys.readouterr().out.startswith(head + "LLR ")
    assert main(["sprt", "--forecast", "5", *options]) == 0
    assert capsys.readouterr().out.startswith(head + "true Elo +5 with 40% draws")
    result = sprt([10, 100, 200, 110, 20], -1.75, 0.25, 0.1, 0.2, "logistic")
    assert result.describe().startswith(head)


def test_evaluation_line_names_the_sprt() -> None:
    from pipelines.evaluate.run import Evaluation

    evaluation = Evaluation(
        model_id="nnue@3", candidate="nnue@3", against="alphabeta:eval=hce",
        match_tournament="t", games=10, wins=6, draws=2, losses=2, elo=+70.4, elo_lower=-60.0,
        elo_upper=210.0, los=0.9, sprt_decision="continue", sprt_llr=0.5,
        sprt_bounds=(-2.94, 2.94), sprt_elo=(0.0, 10.0), sprt_counts=(0, 1, 2, 1, 1),
        sprt_alpha=0.05, sprt_beta=0.1, sprt_model="normalized")
    assert ("SPRT elo0=0 elo1=10 alpha=0.05 beta=0.1 (normalized Elo) continue "
            "(LLR 0.50 in [-2.94, 2.94])") in str(evaluation)


def test_why_the_default_bounds_differ_is_in_the_help() -> None:
    """sprt keeps fishtest's 0,2, evaluate 0,10; each help says why, and the game counts
    evaluate's help quotes are the forecast's (+100 Elo, 40% draws)."""
    from pipelines.evaluate import EvaluateConfig
    from pipelines.sprt import forecast

    sprt_help = SprtConfig.__dataclass_fields__["elo0"].metadata["help"]
    assert "fishtest" in sprt_help and "'chesslab evaluate' defaults to 0,10" in sprt_help
    evaluate_help = EvaluateConfig.__dataclass_fields__["sprt"].metadata["help"]
    assert "0,10 stops after about 320 games on average, 0,2 after about 1,540" in evaluate_help
    assert (SprtConfig().elo0, SprtConfig().elo1) == (0, 2)
    assert EvaluateConfig(spec="alphabeta", nodes=10).sprt == (0, 10)
    assert round(forecast(SprtConfig(0, 10), 100, 0.4).games, -1) == 320
    assert round(forecast(SprtConfig(0, 2), 100, 0.4).games, -1) == 1540


def test_bounds_beyond_the_normalized_model_are_named() -> None:
    """``evaluate --sprt=-500,500`` played its games, then failed with a raw list of floats
    (the t-value MLE has no solution there); the same counts at the limit still work."""
    from pipelines.evaluate import EvaluateConfig, EvaluateError
    from pipelines.sprt import NELO_PER_T, NORMALIZED_LIMITS

    assert NORMALIZED_LIMITS[5] == pytest.approx(231.6237, abs=1e-4)   # 2/3 * 800 / ln 10
    assert NORMALIZED_LIMITS[3] == pytest.approx(math.sqrt(24) / 5 * NELO_PER_T)
    with pytest.raises(SprtError, match=r"^SPRT bounds elo0=-500, elo1=500: the normalized "
                       r"Elo model tests bounds within ±231.6 on game pairs"):
        sprt([1, 2, 3, 2, 1], -500, 500)
    with pytest.raises(SprtError, match="within ±340.4 on single games"):
        sprt([1, 2, 3], 0, 341)
    assert sprt([1, 2, 3, 2, 1], -231, 231).decision == "continue"
    assert math.isfinite(sprt([1, 2, 3], 0, 340).llr)
    assert sprt([1, 2, 3, 2, 1], -500, 500, model="logistic").decision == "continue"
    with pytest.raises(EvaluateError, match=r"^evaluate: --sprt -500,500: SPRT bounds "
                                            r"elo0=-500, elo1=500: the normalized Elo model"):
        EvaluateConfig(spec="alphabeta", nodes=10, sprt=(-500.0, 500.0))


def test_evaluate_with_unreachable_bounds_stops_before_any_game(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from flows.cli import main

    Lake(home).root.mkdir(parents=True)
    assert main(["evaluate", "--spec", "alphabeta", "--sprt=-500,500", "--nodes", "10",
                 "--ladder", "", "--no-prefect"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("chesslab evaluate: error: evaluate: --sprt -500,500: SPRT bounds "
                          "elo0=-500, elo1=500") and len(err.splitlines()) == 1
    assert list((home / "lake").iterdir()) == []     # no tournament was started


def test_describe_words_each_decision() -> None:
    """The one-line verdict, by hand for each decision (bounds of alpha = beta = 0.05)."""
    from pipelines.sprt import SprtResult

    lower, upper = math.log(0.05 / 0.95), math.log(0.95 / 0.05)
    lines = {llr: SprtResult((1, 2, 3), llr, lower, upper).describe()
             for llr in (3.0, -3.0, 0.5)}
    assert lines == {3.0: "LLR 3.000 (-2.944, 2.944) -> accept H1",
                     -3.0: "LLR -3.000 (-2.944, 2.944) -> reject H1 (accept H0)",
                     0.5: "LLR 0.500 (-2.944, 2.944) -> continue"}


def test_pair_pdf_is_two_independent_games() -> None:
    """A game pair of two independent games (win w, draw d, loss l each): LL = l^2,
    LD+DL = 2ld, LW+DD+WL = d^2 + 2lw, DW+WD = 2dw, WW = w^2. Draws from 0 to all a
    score allows are accepted (no wins at all, or no losses, included); more, or a draw
    ratio of 1, are refused naming the figures."""
    from pipelines.sprt import expected_score, pair_pdf

    score, d = 1 / (1 + 10 ** (-38.4 / 400)), 0.21
    win, loss = score - d / 2, 1 - score - d / 2
    assert [p for _, p in pair_pdf(38.4, d)] == pytest.approx(
        [loss * loss, 2 * loss * d, d * d + 2 * loss * win, 2 * d * win, win * win], rel=1e-12)
    assert [a for a, _ in pair_pdf(38.4, d)] == [0, 0.25, 0.5, 0.75, 1]
    # no draws, even: LL 1/4, LW+WL 1/2, WW 1/4; impossible cells get 1e-12 (logs stay finite)
    assert [p for _, p in pair_pdf(0, 0)] == [0.25, 1e-12, 0.5, 1e-12, 0.25]
    never_wins = 2 * expected_score(-100)       # wins exactly 0
    assert pair_pdf(-100, never_wins)[4][1] == 1e-12
    never_loses = 2 * (1 - expected_score(100))  # losses exactly 0
    assert pair_pdf(100, never_loses)[0][1] == 1e-12
    for elo, draws in ((0, 1.0), (0, 1.5), (100, 0.9), (-100, 0.9), (0, -0.1)):
        with pytest.raises(SprtError, match="draws cannot score"):
            pair_pdf(elo, draws)


def llr_steps_by_difference(config: SprtConfig, elo: float, draws: float
                            ) -> tuple[list[float], list[float]]:
    """(the pair distribution, what one more pair of each outcome adds to llr() of a million
    pairs in those proportions): the LLR's steps, from llr() itself (the derivative of a
    maximised likelihood is the log-ratio of the maximising distributions)."""
    from pipelines.sprt import pair_pdf

    pdf = [p for _, p in pair_pdf(elo, draws)]
    counts = [round(p * 1_000_000) for p in pdf]
    base = sprt(counts, config.elo0, config.elo1, model=config.model).llr
    steps = []
    for cell in range(5):
        more = [c + (i == cell) for i, c in enumerate(counts)]
        steps.append(sprt(more, config.elo0, config.elo1, model=config.model).llr - base)
    return pdf, steps


def wald(drift: float, variance: float, a: float, b: float) -> tuple[float, float]:
    """Wald's P(reach b before a) and mean length of a walk with this drift and variance per
    step, in 60-digit decimals (no overflow at any drift)."""
    getcontext().prec = 60
    theta, low, high = Decimal(-2 * drift / variance), Decimal(a), Decimal(b)
    p = (1 - (theta * low).exp()) / ((theta * high).exp() - (theta * low).exp())
    return float(p), float((p * high + (1 - p) * low) / Decimal(drift))


@pytest.mark.parametrize("config,elo,draws", [
    (SprtConfig(0, 10), 38.4, 0.21),
    (SprtConfig(0, 10), 6.0, 0.3),            # undecided: P(H1) about 0.78
    (SprtConfig(0, 10, beta=0.1, model="logistic"), 3.0, 0.3),
])
def test_forecast_drift_and_variance_are_the_llrs_steps_and_walds_formulas_follow(
        config: SprtConfig, elo: float, draws: float) -> None:
    """The forecast's drift and variance are the mean and variance of llr()'s steps under
    the pair distribution; its P(H1) and mean length are Wald's for that walk."""
    from pipelines.sprt import forecast

    pdf, steps = llr_steps_by_difference(config, elo, draws)
    drift = sum(p * s for p, s in zip(pdf, steps, strict=True))
    variance = sum(p * s * s for p, s in zip(pdf, steps, strict=True)) - drift ** 2
    result = forecast(config, elo, draws)
    assert result.drift == pytest.approx(drift, rel=1e-3)
    assert result.variance == pytest.approx(variance, rel=1e-4)
    p_h1, pairs = wald(result.drift, result.variance, config.lower_bound, config.upper_bound)
    assert (result.p_h1, result.pairs, result.games) == (
        pytest.approx(p_h1, rel=1e-9), pytest.approx(pairs, rel=1e-9),
        pytest.approx(2 * pairs, rel=1e-9))


@pytest.mark.parametrize("elo", [300.0, -300.0])
def test_forecast_of_a_lopsided_match_stays_finite(elo: float) -> None:
    """+-300 Elo with 20% draws: the walk's exponents reach about 1800 (exp overflows a
    float past 709); the forecast is still Wald's, computed in 60-digit decimals."""
    from pipelines.sprt import forecast

    config = SprtConfig(0, 10)
    result = forecast(config, elo, 0.2)
    p_h1, pairs = wald(result.drift, result.variance, config.lower_bound, config.upper_bound)
    assert result.p_h1 == pytest.approx(p_h1, abs=1e-300)
    assert result.pairs == pytest.approx(pairs, rel=1e-9)
    assert (result.p_h1 > 0.5) == (elo > 0)


@pytest.mark.parametrize("beta", [0.05, 0.2])
def test_forecast_without_drift_is_walds_symmetric_walk(beta: float) -> None:
    """SPRT(-5, 5) at a true 0 Elo: the two hypotheses are mirror images, so the LLR has no
    drift, and Wald's limits hold: P(H1) = -a / (b - a) (0.5 when alpha = beta) and a mean
    length of -ab / variance pairs."""
    from pipelines.sprt import forecast

    config = SprtConfig(-5, 5, beta=beta)
    a, b = math.log(beta / 0.95), math.log((1 - beta) / 0.05)
    pdf, steps = llr_steps_by_difference(config, 0.0, 0.3)
    variance = sum(p * s * s for p, s in zip(pdf, steps, strict=True))
    result = forecast(config, 0.0, 0.3)
    assert abs(result.drift) < 1e-15
    assert result.variance == pytest.approx(variance, rel=1e-4)
    assert result.p_h1 == pytest.approx(-a / (b - a), rel=1e-12)
    assert result.pairs == pytest.approx(-a * b / result.variance, rel=1e-12)


def test_record_sprt_writes_one_row_per_test(home: Path) -> None:
    """The recorded row holds the counts, test and verdict; recording the same test twice
    stores it once; another tournament's test is another row."""
    from pipelines.sprt.store import record_sprt

    lake = Lake(home)
    config = SprtConfig(0, 10, alpha=0.05, beta=0.1, model="logistic")
    result = sprt([200, 300, 500], 0, 10, alpha=0.05, beta=0.1, model="logistic")
    first = record_sprt(lake, result, config, "t-1")
    assert record_sprt(lake, result, config, "t-1") == first
    other = record_sprt(lake, result, config, "t-2")
    assert other != first and len(first) == len(other) == 16
    int(first, 16)
    rows = {row["sprt_id"]: row for row in lake.read("sprt_results").to_pylist()}
    assert set(rows) == {first, other}
    row = rows[first]
    assert {k: v for k, v in row.items() if k not in ("sprt_id", "recorded_at")} == {
        "tournament_id": "t-1", "model": "logistic", "elo0": 0.0, "elo1": 10.0,
        "alpha": 0.05, "beta": 0.1, "counts": [200, 300, 500],
        "llr": pytest.approx(11.774010823771674, rel=1e-9),
        "lower_bound": pytest.approx(math.log(0.1 / 0.95)),
        "upper_bound": pytest.approx(math.log(0.9 / 0.05)), "decision": "H1"}
    assert rows[other]["tournament_id"] == "t-2"


def test_forecast_just_off_zero_drift_is_still_walds_drifting_walk() -> None:
    """SPRT(0, 10) 0.0002 Elo above where its LLR stops drifting (found by bisection, near
    +5): a drift of about 1e-7 a pair still tilts P(H1) off 1/2 (by about 1e-4), as Wald's
    formula for a drifting walk says; only a drift below 1e-9 of the variance is taken as
    none."""
    from pipelines.sprt import forecast

    config = SprtConfig(0, 10)
    low, high = 4.0, 6.0
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if forecast(config, mid, 0.3).drift < 0 else (low, mid)
    result = forecast(config, high + 0.0002, 0.3)
    assert 1e-9 < result.drift < 2e-7
    p_h1, pairs = wald(result.drift, result.variance, config.lower_bound, config.upper_bound)
    assert result.p_h1 == pytest.approx(p_h1, rel=1e-8) and abs(p_h1 - 0.5) > 1e-5
    assert result.pairs == pytest.approx(pairs, rel=1e-6)


# --- issue 48 §3: alpha different from beta at every place that passes them on ------------
# With alpha = beta a swap of the two is invisible. alpha = 0.01, beta = 0.2: Wald's bounds
# are log(beta / (1 - alpha)) = log(0.2 / 0.99) = -1.599 and log((1 - beta) / alpha) =
# log(0.8 / 0.01) = 4.382; swapped they would be -4.382 and 1.599. RISING's SPRT(0, 10) LLR
# lies between 1.599 and 4.382 (a swap accepts H1), FALLING's between -4.382 and -1.599 (a
# swap continues).
ALPHA, BETA = 0.01, 0.2
LOWER, UPPER = math.log(0.2 / 0.99), math.log(0.8 / 0.01)
RISING, FALLING = [5, 90, 200, 125, 25], [25, 125, 200, 90, 5]


def test_alpha_sets_the_upper_bound_and_beta_the_lower() -> None:
    rising = sprt(RISING, 0, 10, ALPHA, BETA)
    falling = sprt(FALLING, 0, 10, alpha=ALPHA, beta=BETA)
    assert (rising.lower_bound, rising.upper_bound) == (pytest.approx(LOWER),
                                                        pytest.approx(UPPER))
    assert -LOWER < rising.llr < UPPER and -UPPER < falling.llr < LOWER
    assert (rising.decision, falling.decision) == ("continue", "H0")
    config = SprtConfig(0, 10, alpha=ALPHA, beta=BETA)
    assert (config.lower_bound, config.upper_bound) == (pytest.approx(LOWER),
                                                        pytest.approx(UPPER))
    assert rising.describe() == ("SPRT elo0=0 elo1=10 alpha=0.01 beta=0.2 (normalized Elo): "
                                 f"LLR {rising.llr:.3f} (-1.599, 4.382) -> continue")


def test_the_command_line_passes_alpha_and_beta_in_their_places(
        capsys: pytest.CaptureFixture[str]) -> None:
    from flows.cli import main

    bounds = ["--elo0", "0", "--elo1", "10", "--alpha", "0.01", "--beta", "0.2"]
    assert main(["sprt", "--counts", ",".join(map(str, RISING)), *bounds]) == 0
    assert capsys.readouterr().out.strip().endswith("(-1.599, 4.382) -> continue")
    assert main(["sprt", "--counts", ",".join(map(str, FALLING)), *bounds]) == 0
    assert capsys.readouterr().out.strip().endswith("(-1.599, 4.382) -> reject H1 (accept H0)")


def test_a_tournaments_sprt_and_identity_take_alpha_and_beta_in_their_places(
        home: Path) -> None:
    """The tournament runner builds its SPRT from the config's alpha and beta (its verdict
    after no pairs shows the bounds); swapping them makes another tournament."""
    from pipelines.tournament import TournamentConfig
    from pipelines.tournament.runner import Tournament, resolve_players
    from pipelines.tournament.schedule import tournament_id

    def config(alpha: float, beta: float) -> TournamentConfig:
        return TournamentConfig.tiny(engines=("alphabeta", "alphabeta:eval=hce-simple"),
                                     sprt_elo0=0, sprt_elo1=10, sprt_alpha=alpha,
                                     sprt_beta=beta)

    status = Tournament(config(ALPHA, BETA), Lake(home)).sprt_status()
    assert status is not None
    assert (status.lower_bound, status.upper_bound) == (pytest.approx(LOWER),
                                                        pytest.approx(UPPER))
    assert status.describe().startswith("SPRT elo0=0 elo1=10 alpha=0.01 beta=0.2 ")
    ids = {tournament_id(c, resolve_players(c), None)
           for c in (config(ALPHA, BETA), config(BETA, ALPHA))}
    assert len(ids) == 2


def test_evaluate_passes_alpha_and_beta_to_its_match(home: Path) -> None:
    from pipelines.evaluate import EvaluateConfig
    from pipelines.evaluate.run import plan_evaluation

    config = EvaluateConfig.tiny(spec="alphabeta", sprt=(0.0, 10.0), sprt_alpha=ALPHA,
                                 sprt_beta=BETA, ladder="")
    plan = plan_evaluation(Lake(home), config)
    assert (plan.match.sprt_alpha, plan.match.sprt_beta) == (ALPHA, BETA)


# --- issue 48: the SPRT's mutation survivors (docs/mutation.md) -------------------------------

def test_a_sweep_stops_only_a_whole_one_sided_run_of_enough_pairs() -> None:
    """``sweep``: H1 when every one of at least ``pairs`` pairs was won twice, H0 when every
    one was lost twice; None below ``pairs``, with another cell, with trinomial counts, or
    with the rule off (0)."""
    from pipelines.sprt import sweep

    assert [sweep([0, 0, 0, 0, 10], 10), sweep([10, 0, 0, 0, 0], 10),
            sweep([0, 0, 0, 0, 11], 10), sweep([0, 0, 0, 0, 1], 1)] == ["H1", "H0", "H1", "H1"]
    for counts, pairs in [([0, 0, 0, 0, 9], 10), ([9, 0, 0, 0, 0], 10), ([0, 10, 0, 0, 0], 10),
                          ([0, 0, 0, 1, 9], 10), ([0, 0, 0, 0, 40], 0), ([0, 0, 12], 10),
                          ([12, 0, 0], 10)]:
        assert sweep(counts, pairs) is None, (counts, pairs)


def test_a_result_reads_the_same_in_words_and_as_json() -> None:
    """``describe`` names the test, the LLR and bounds, the decision and a sweep (won or
    lost, with the pairs played); ``as_dict`` holds the config's fields and the result's, or
    the result's alone without a config."""
    import dataclasses

    result = sprt([0, 0, 0, 0, 10], 0, 5)
    numbers = f"LLR {result.llr:.3f} ({result.lower_bound:.3f}, {result.upper_bound:.3f})"
    head = "SPRT elo0=0 elo1=5 alpha=0.05 beta=0.05 (normalized Elo): "
    assert dataclasses.replace(result, swept="H1").describe() == (
        f"{head}{numbers} -> accept H1 (a sweep: the first 10 game pairs all won)")
    lost = sprt([10, 0, 0, 0, 0], 0, 5)
    assert dataclasses.replace(lost, swept="H0").describe() == (
        f"{head}LLR {lost.llr:.3f} ({lost.lower_bound:.3f}, {lost.upper_bound:.3f}) -> "
        "reject H1 (accept H0) (a sweep: the first 10 game pairs all lost)")
    assert result.describe() == f"{head}{numbers} -> continue"
    assert result.as_dict() == {
        "elo0": 0, "elo1": 5, "alpha": 0.05, "beta": 0.05, "model": "normalized",
        "counts": [0, 0, 0, 0, 10], "llr": result.llr, "lower_bound": result.lower_bound,
        "upper_bound": result.upper_bound, "decision": "continue"}
    bare = type(result)((1, 2, 3), 0.5, -1.0, 1.0)
    assert bare.as_dict() == {"counts": [1, 2, 3], "llr": 0.5, "lower_bound": -1.0,
                              "upper_bound": 1.0, "decision": "continue"}
    assert sprt([10, 100, 200, 110, 20]).config == SprtConfig()   # fishtest's 0, 2 by default


def test_each_bad_sprt_input_is_refused_naming_it() -> None:
    """Bounds that are equal, alpha or beta at 0 or 1 or past 1, a negative count (counts
    that sum past 0 all the same), a pair score of 2.5, bounds at the normalized model's
    limit (for a test and for a forecast), and a likelihood with no maximum; one game is
    enough to compute an LLR."""
    from pipelines.sprt import NORMALIZED_LIMITS, forecast, solve_secular

    cases = [
        (lambda: SprtConfig(elo0=2, elo1=2), "elo1 must exceed elo0, got elo0=2 elo1=2"),
        (lambda: SprtConfig(alpha=0.0), "alpha must be in (0, 1), got 0.0"),
        (lambda: SprtConfig(alpha=1.0), "alpha must be in (0, 1), got 1.0"),
        (lambda: SprtConfig(beta=1.5), "beta must be in (0, 1), got 1.5"),
        (lambda: sprt([-1, 2, 3, 4, 5]),
         "need 5 pentanomial or 3 trinomial non-negative counts, got [-1, 2, 3, 4, 5]"),
        (lambda: pentanomial([2.5]), "a game pair scores 0, 0.5, ..., 2 points, got 2.5"),
        (lambda: solve_secular([(0.0, 0.5), (1.0, 0.5)]),
         "the SPRT's likelihood has no maximum at these bounds: narrow them"),
        (lambda: solve_secular([(-1.0, 0.5), (0.0, 0.5)]),
         "the SPRT's likelihood has no maximum at these bounds: narrow them")]
    limit = NORMALIZED_LIMITS[5]
    at_limit = SprtConfig(elo0=0, elo1=limit)
    for make, message in cases:
        with pytest.raises(SprtError) as refused:
            make()
        assert str(refused.value) == message
    for make in (lambda: at_limit.check_cells(5), lambda: forecast(at_limit, 0, 0.5)):
        with pytest.raises(SprtError, match="the normalized Elo model tests bounds within"):
            make()
    assert sprt([0, 0, 1], 0, 10).counts == (0, 0, 1)


def test_a_forecast_without_a_config_describes_the_walk_alone() -> None:
    from pipelines.sprt import SprtForecast

    plain = SprtForecast(elo=5, draw_ratio=0.5, drift=0.01, variance=0.04, p_h1=0.9, pairs=100)
    assert plain.describe() == ("true Elo +5 with 50% draws: LLR +0.01000 a game pair (sd "
                                "0.200); accepts H1 with probability 0.90 after about 100 game "
                                "pairs (200 games) on average")


def test_the_first_player_is_white_in_a_pairs_first_game_or_else_the_first_name(
        home: Path) -> None:
    """When the player sorting first is White in the first games, the second is the other;
    with no first game of a pair recorded, the first name is the first player; a game not
    finished yet (no score) is passed over, the games after it counted; a third player who
    only ever had White is still a third player (refused)."""
    lake = Lake(home)
    swapped = [{**row, "white": row["black"], "black": row["white"]}
               for row in game_rows(NEW_PAIRS)]
    lake.write("tournament_games", [{**row, "tournament_id": "t-base"} for row in swapped])
    counts, first, second = tournament_counts(lake, "t-base")
    assert (first, second) == ("base", "new")
    assert counts == pair_counts_from_rows(swapped, "base")
    seconds = [{**row, "tournament_id": "t-seconds", "game_in_pair": 1}
               for row in game_rows(NEW_PAIRS) if row["game_in_pair"] == 1]
    lake.write("tournament_games", seconds)
    assert tournament_counts(lake, "t-seconds")[1:] == ("base", "new")
    unfinished = {**game_rows([(1, 1)])[0], "game_key": "0:99:0", "round": 99,
                  "white_score": None, "result": None}
    assert pair_counts_from_rows([unfinished, *game_rows(NEW_PAIRS)], "new") == [1, 2, 4, 3, 2]
    third = [*game_rows(NEW_PAIRS)[:2],
             {**game_rows([(1, 1)])[0], "game_key": "1:0:0", "pairing": 1, "white": "extra"}]
    lake.write("tournament_games", [{**row, "tournament_id": "t-three"} for row in third])
    with pytest.raises(SprtError) as refused:
        tournament_counts(lake, "t-three")
    assert str(refused.value) == ("tournament 't-three': an SPRT needs games between exactly "
                                  "two players, found ['base', 'extra', 'new']")
