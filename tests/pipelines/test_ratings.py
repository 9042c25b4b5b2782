"""BayesElo ratings: compiled bayeselo's figures on three crosstables, paper 001's Table 7 ->
Tables 8 and 9, the MM fixed point, anchors."""
from __future__ import annotations

import inspect
import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from flows.cli import main
from pipelines.ratings import (
    Game,
    RatingsConfig,
    RatingsError,
    fit,
    format_los,
    format_ratings,
    games_from_crosstable,
    pair_elo,
)
from pipelines.ratings.bayeselo import (
    Model,
    RatingTable,
    Results,
    bound_value,
    exact_intervals,
    grid_value,
    intervals_line,
    normal_quantile,
    pair_counts,
    round_half_away,
    superiority,
)
from pipelines.ratings.sources import games_from_pgn

FIXTURES = Path(__file__).parents[1] / "fixtures"
CROSSTABLES = FIXTURES / "crosstables"
TABLE7 = json.loads((CROSSTABLES / "mcc_table7.json").read_text())
BAYESELO_RUNS = [(name, run) for name in ("mcc_table7", "drawish", "unbeaten")
                 for run in ("mm 0 0", "mm 1 1", "mm 0 0, offset")]


def crosstable_games(fixture: dict) -> list[Game]:
    return games_from_crosstable({(a, b): (won, drawn, lost)
                                  for a, b, won, drawn, lost in fixture["pairs"]})


def table7_games() -> list[Game]:
    return crosstable_games(TABLE7)


def bayeselo_config(reference: dict, intervals: str) -> RatingsConfig:
    fitted = reference["advantage"] != 32.8
    anchors = {reference["offset"][1]: reference["offset"][0]} if "offset" in reference else {}
    return RatingsConfig(fit_advantage=fitted, fit_drawelo=fitted, anchors=anchors,
                         intervals=intervals)


@pytest.mark.parametrize("name,run", BAYESELO_RUNS)
def test_ratings_equal_compiled_bayeselo(name: str, run: str) -> None:
    """Every number of bayeselo's ``ratings`` (Elo, +, -, games, score, oppo., draws), the
    fitted advantage and draw Elo, and the ``covariance`` intervals and ``los`` matrix, as
    the compiled bayeselo core printed them (see the fixture's note). bayeselo stops its MM
    at a relative change of 1e-5, hence 0.2 Elo of slack; a doubled prior moves Table 7's top
    player by 70."""
    fixture = json.loads((CROSSTABLES / f"{name}.json").read_text())
    reference = fixture["bayeselo"][run]
    table = fit(crosstable_games(fixture), bayeselo_config(reference, "variance"))
    full = fit(crosstable_games(fixture), bayeselo_config(reference, "covariance"))
    assert [row.name for row in table.rows] == list(reference["players"])
    assert table.advantage == pytest.approx(reference["advantage"], abs=0.01)
    assert table.drawelo == pytest.approx(reference["drawelo"], abs=0.01)
    for row in table.rows:
        expected = reference["players"][row.name]
        assert row.elo == pytest.approx(expected["elo"], abs=0.2), row.name
        assert row.plus == row.minus == pytest.approx(expected["variance"], abs=0.2), row.name
        assert full.by_name()[row.name].plus == pytest.approx(expected["covariance"], abs=0.2)
        assert (row.games, row.score, row.draws) == (
            expected["games"], expected["score"], expected["draws"])
        assert row.oppo == pytest.approx(expected["oppo"], abs=0.2), row.name
        for other, percent in expected["los"].items():
            assert 100 * table.los_between(row.name, other) == pytest.approx(percent, abs=0.05)


@pytest.mark.parametrize("name", ["mcc_table7", "unbeaten"])
def test_exactdist_equals_compiled_bayeselo(name: str) -> None:
    """bayeselo's ``exactdist`` (asymmetric: the never-beaten and the 99% players have a
    longer upper tail) on the same grid of 1001 cells over [-1500, 1500]."""
    fixture = json.loads((CROSSTABLES / f"{name}.json").read_text())
    reference = fixture["bayeselo"]["mm 0 0"]
    table = fit(crosstable_games(fixture), RatingsConfig(intervals="exact")).by_name()
    for player, expected in reference["players"].items():
        minus, plus = expected["exact"]
        assert (table[player].minus, table[player].plus) == (
            pytest.approx(minus, abs=0.2), pytest.approx(plus, abs=0.2)), player


def test_interval_quantile_is_bayeselos_discretised_one() -> None:
    """bayeselo's NormInv (a normal on 1000 cells over [-10, 10]) gives 1.960127302 at 0.95
    (compiled), not the exact 1.959964."""
    assert normal_quantile(0.95) == pytest.approx(1.960127302, abs=1e-9)


def test_table7_defaults_give_the_issues_bayeselo_ratings() -> None:
    """Issue 8: real bayeselo (``readpgn; elo; mm; ratings``) gives 567, 47, -68, -218, -328
    on Table 7 (its PGN's colours are not known, which moves MCC by up to 3); chesslab gave
    495, 52, -54, -195, -298 while it counted the prior's virtual draws twice. The printed
    table is bayeselo's, rounded half away from zero."""
    table = fit(table7_games())
    issue = {"MCC_Combined": 567, "MCC_DecisiveMoves": 47, "MCC_HP_SEE_0.4": -68,
             "MCC_progressiveBias": -218, "MCC": -328}
    for row in table.rows:
        assert abs(row.elo - issue[row.name]) <= 1, (row.name, row.elo)
    lines = format_ratings(table).splitlines()
    assert lines[1].split() == ["1", "MCC_Combined", "567", "186", "186", "100", "99%", "-142",
                                "0%"]
    assert lines[5].split() == ["5", "MCC", "-327", "85", "85", "100", "17%", "82", "2%"]


def test_table7_reproduces_table8_ranks_scores_and_elos() -> None:
    """Paper 001, Table 8: BayesElo (default prior 2, mm) of Table 7's crosstable, relative to
    MCC. Table 7 has only points, so draws are the fewest the scores allow; every Elo must
    land within half its published 95% interval, and ranks, games and scores exactly."""
    table = fit(table7_games(), RatingsConfig(anchors={"MCC": 0}))
    reference = TABLE7["table8"]
    assert [row.name for row in table.rows] == list(reference)
    for row in table.rows:
        elo, interval, games, score = reference[row.name]
        assert row.games == games
        assert row.score == pytest.approx(score)
        assert abs(row.elo - elo) <= interval / 2, (row.name, row.elo, elo)
    assert table.by_name()["MCC"].elo == pytest.approx(0.0, abs=1e-9)
    # the paper's own games differ (more draws, other colours): intervals agree within 15
    assert all(abs(row.plus - reference[row.name][1]) < 15 for row in table.rows)


def test_table7_reproduces_table9_likelihood_of_superiority() -> None:
    """Paper 001, Table 9: LOS percentages (bayeselo truncates) within one point."""
    table = fit(table7_games())
    for better, row in TABLE7["table9_los_percent"].items():
        for worse, percent in row.items():
            ours = int(100 * table.los_between(better, worse))
            assert abs(ours - percent) <= 1, (better, worse, ours, percent)
            assert table.los_between(better, worse) + table.los_between(worse, better) \
                == pytest.approx(1.0)


def log_likelihood(delta: float, wins: int, draws: int, losses: int, drawelo: float) -> float:
    theta_d = 10 ** (drawelo / 400)
    g = 10 ** (delta / 400)
    p_win = g / (g + theta_d)
    p_loss = 1 / (theta_d * g + 1)
    return wins * math.log(p_win) + losses * math.log(p_loss) \
        + draws * math.log(1 - p_win - p_loss)


def test_mm_reaches_the_maximum_likelihood() -> None:
    """Guards the MM update (bayeselo's UpdateGammas): with no prior and no white advantage
    the fitted difference maximises the trinomial likelihood found by a golden-section
    search, and the printed difference is that times bayeselo's scale."""
    games = [Game("A", "B", 1.0)] * 6 + [Game("B", "A", 1.0)] * 2 + [Game("A", "B", 0.5)] * 4
    games += [Game("B", "A", 0.0)] * 3
    config = RatingsConfig(prior=0.0, advantage=0.0)
    table = fit(games, config)
    lo, hi = -1000.0, 1000.0
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(200):
        a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        if log_likelihood(a, 9, 4, 2, 97.3) > log_likelihood(b, 9, 4, 2, 97.3):
            hi = b
        else:
            lo = a
    x = 10 ** (-97.3 / 400)
    scale = 4 * x / (1 + x) ** 2
    rows = table.by_name()
    assert rows["A"].elo - rows["B"].elo == pytest.approx(scale * (lo + hi) / 2, abs=1e-4)
    assert table.scale == pytest.approx(scale)
    assert rows["A"].elo == pytest.approx(-rows["B"].elo)


def test_prior_shrinks_ratings_like_bayeselo() -> None:
    """bayeselo's ``prior`` command: one win against a player with 2 virtual draws is worth
    far less than with 0.5, and the win stays positive."""
    one_win = [Game("A", "B", 1.0)]
    strong = fit(one_win, RatingsConfig(prior=2.0)).by_name()["A"].elo
    weak = fit(one_win, RatingsConfig(prior=0.5)).by_name()["A"].elo
    assert 0 < strong < weak


def test_fitted_draw_elo_and_advantage_match_the_games() -> None:
    """``mm 1 1``: White scoring more than Black gives a positive advantage; more draws give a
    larger draw Elo."""
    games = ([Game("A", "B", 1.0)] * 8 + [Game("B", "A", 1.0)] * 8 + [Game("A", "B", 0.5)] * 4
             + [Game("B", "A", 0.5)] * 4 + [Game("A", "B", 0.0)] * 2 + [Game("B", "A", 0.0)] * 2)
    drawish = games + [Game("A", "B", 0.5)] * 20 + [Game("B", "A", 0.5)] * 20
    fitted = fit(games, RatingsConfig(fit_advantage=True, fit_drawelo=True))
    more_draws = fit(drawish, RatingsConfig(fit_advantage=True, fit_drawelo=True))
    assert fitted.advantage > 100
    assert more_draws.drawelo > fitted.drawelo


def test_several_anchors_hold_and_single_anchor_only_shifts() -> None:
    """A Stockfish ladder: anchored players keep their UCI_Elo exactly (no interval), the
    others land between them; one anchor shifts the free table without changing gaps."""
    games = games_from_crosstable({
        ("sf@1350", "engine"): (2, 4, 14), ("sf@1800", "engine"): (12, 4, 4),
        ("sf@1350", "sf@1800"): (2, 2, 16)})
    ladder = fit(games, RatingsConfig(anchors={"sf@1350": 1350, "sf@1800": 1800})).by_name()
    assert ladder["sf@1350"].elo == pytest.approx(1350)
    assert ladder["sf@1800"].elo == pytest.approx(1800)
    assert ladder["sf@1350"].plus == 0
    assert 1350 < ladder["engine"].elo < 1800 and ladder["engine"].plus > 0
    free = fit(games).by_name()
    shifted = fit(games, RatingsConfig(anchors={"sf@1350": 1350})).by_name()
    for name in free:
        assert shifted[name].elo - free[name].elo == pytest.approx(1350 - free["sf@1350"].elo)
        assert shifted[name].plus == pytest.approx(free[name].plus)


def test_exactdist_intervals_are_wider_above_a_near_perfect_score() -> None:
    """bayeselo's ``exactdist`` on Table 7: MCC_Combined (99%) has a longer upper tail."""
    results = Results(sorted({g.white for g in table7_games()}), table7_games())
    results.add_prior(2.0)
    model = Model(results, RatingsConfig())
    model.fit()
    minus, plus = exact_intervals(model, 0.95)[results.index["MCC_Combined"]]
    assert plus > minus > 50


def test_output_formats_follow_bayeselo() -> None:
    """The ``ratings`` header and row layout, and the ``los`` matrix, as bayeselo prints."""
    table = fit(table7_games(), RatingsConfig(anchors={"MCC": 0}))
    lines = format_ratings(table).splitlines()
    assert lines[0].split() == ["Rank", "Name", "Elo", "+", "-", "games", "score", "oppo.",
                                "draws"]
    assert lines[-1].split()[:3] == ["5", "MCC", "0"]
    assert lines[1].split()[5:7] == ["100", "99%"]
    los = format_los(table).splitlines()
    assert len(los) == 6 and los[1].startswith("MCC_Combined")


def test_pair_elo_and_los() -> None:
    """Trinomial Elo of one pair: 60-30-10 scores 75%, +190.8 Elo; LOS from decisive games."""
    pair = pair_elo(60, 30, 10)
    assert pair.elo == pytest.approx(-400 * math.log10(1 / 0.75 - 1))
    assert pair.lower < pair.elo < pair.upper
    assert pair_elo(10, 0, 10).los == pytest.approx(0.5)
    assert pair_elo(12, 5, 8).los == pytest.approx(0.5 * (1 + math.erf(4 / math.sqrt(40))))


def match_pgn(path: Path, first: str, second: str, outcomes: str) -> Path:
    """A PGN of ``first`` against ``second``, colours alternating, ``first`` White in the even
    games; ``outcomes`` holds ``first``'s results (W, D, L) in order."""
    games = []
    for k, outcome in enumerate(outcomes):
        white, black = (first, second) if k % 2 == 0 else (second, first)
        score = {"W": 1.0, "D": 0.5, "L": 0.0}[outcome]
        white_score = score if k % 2 == 0 else 1 - score
        result = {1.0: "1-0", 0.5: "1/2-1/2", 0.0: "0-1"}[white_score]
        games.append(f'[White "{white}"]\n[Black "{black}"]\n[Result "{result}"]\n\n'
                     f"1. e4 e5 {result}\n\n")
    path.write_text("".join(games))
    return path


def test_pair_elo_and_los_of_a_against_b(home: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """``ratings --pair``: A scores +7 =5 -3 against B (63.3%): trinomial Elo +94.944, interval
    [-43.260, +273.737], LOS 89.705% (erf of (7 - 3) / sqrt(2 * 10)); B against A is the
    mirror image. Asking for the pair either way round names the first player's counts, so
    swapped counts or a swapped sign fail."""
    pgn = match_pgn(tmp_path / "match.pgn", "A", "B", "WDWLWDWWDLWDWLD")
    assert pair_counts(games_from_pgn(pgn)) == {("A", "B"): [7, 5, 3]}
    pair = pair_elo(7, 5, 3)
    assert (pair.elo, pair.lower, pair.upper, pair.los) == (
        pytest.approx(94.94436631784157, rel=1e-12), pytest.approx(-43.25957767595071, rel=1e-9),
        pytest.approx(273.7366657064169, rel=1e-9), pytest.approx(0.8970483946339658, rel=1e-12))
    expected = {"A,B": "A vs B: +7 =5 -3, Elo +94.9 [-43.3, +273.7], LOS 89.7%",
                "B,A": "B vs A: +3 =5 -7, Elo -94.9 [-273.7, +43.3], LOS 10.3%"}
    for asked, line in expected.items():
        assert main(["--home", str(home), "ratings", "--pgn", str(pgn), "--pair", asked]) == 0
        assert line in capsys.readouterr().out.splitlines()


def test_ratings_from_pgn(tmp_path: Path) -> None:
    """Rating a PGN file reads each finished game's players and result."""
    pgn = tmp_path / "games.pgn"
    pgn.write_text("".join(
        f'[White "{w}"]\n[Black "{b}"]\n[Result "{r}"]\n\n1. e4 e5 {r}\n\n'
        for w, b, r in [("x", "y", "1-0"), ("y", "x", "1/2-1/2"), ("x", "y", "*")]))
    games = games_from_pgn(pgn)
    assert games == [Game("x", "y", 1.0), Game("y", "x", 0.5)]
    with pytest.raises(RatingsError, match="anchor 'z'"):
        fit(games, RatingsConfig(anchors={"z": 0}))


# --- ladders (several anchors) against a maximum-likelihood oracle ---------------------------
# bayeselo holds no player fixed (its ``offset`` only shifts the table), so a ladder's oracle
# is the model itself, maximised by scipy: the log-likelihood of the module docstring's
# probabilities, written out again here, over the free players' Elos, the White advantage and
# the draw Elo, with the anchors held at rating / scale and the scale 4x / (1 + x)^2 of the
# fitted draw Elo (a fixed point, found by brentq); the intervals are the inverse of the
# numerically differentiated Hessian over the free players, times bayeselo's 1.960127302.
LADDER = {("sf@1350", "engine"): (5, 6, 9), ("sf@1800", "engine"): (11, 5, 4),
          ("sf@1350", "sf@1800"): (3, 4, 13), ("sf@1350", "other"): (8, 7, 5),
          ("other", "engine"): (6, 8, 6), ("sf@1800", "other"): (9, 4, 7)}
LADDER_ANCHORS = {"sf@1350": 1350.0, "sf@1800": 1800.0}


def ladder_log_likelihood(games: list[Game], elo: dict[str, float], advantage: float,
                          drawelo: float) -> float:
    total = 0.0
    for (white, black, result), count in Counter(
            (g.white, g.black, g.result) for g in games).items():
        delta = elo[white] - elo[black]
        win = 1 / (1 + 10 ** ((-delta - advantage + drawelo) / 400))
        loss = 1 / (1 + 10 ** ((delta + advantage + drawelo) / 400))
        total += count * math.log({1.0: win, 0.0: loss, 0.5: 1 - win - loss}[result])
    return total


def bayeselo_scale(drawelo: float) -> float:
    x = 10 ** (-drawelo / 400)
    return 4 * x / (1 + x) ** 2


def ladder_oracle(games: list[Game], anchors: dict[str, float]
                  ) -> tuple[dict[str, float], dict[str, float], float, float]:
    """(printed Elos, printed 95% half-intervals of the free players, advantage, draw Elo)."""
    from scipy.optimize import brentq, minimize

    free = sorted(({g.white for g in games} | {g.black for g in games}) - set(anchors))

    def best(drawelo_guess: float) -> np.ndarray:
        scale = bayeselo_scale(drawelo_guess)
        fixed = {name: rating / scale for name, rating in anchors.items()}

        def minus_ll(x: np.ndarray) -> float:
            elo = fixed | dict(zip(free, x[:-2], strict=True))
            return -ladder_log_likelihood(games, elo, x[-2], x[-1])

        x = np.array([sum(fixed.values()) / len(fixed)] * len(free) + [30.0, 100.0])
        for _ in range(2):   # Nelder-Mead, restarted once (BFGS stops short: precision loss)
            x = minimize(minus_ll, x, method="Nelder-Mead", options={
                "xatol": 1e-9, "fatol": 1e-13, "maxiter": 20000, "maxfev": 40000}).x
        return x

    drawelo = brentq(lambda d: best(d)[-1] - d, 20.0, 400.0, xtol=1e-10)
    x = best(drawelo)
    scale = bayeselo_scale(drawelo)
    internal = {name: rating / scale for name, rating in anchors.items()} \
        | dict(zip(free, x[:-2], strict=True))

    def ll(values: np.ndarray) -> float:
        return ladder_log_likelihood(games, internal | dict(zip(free, values, strict=True)),
                                     x[-2], x[-1])

    step, n, at = 0.5, len(free), x[:-2]
    hessian = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            e_i, e_j = np.eye(n)[i] * step, np.eye(n)[j] * step
            hessian[i, j] = (ll(at + e_i + e_j) - ll(at + e_i - e_j) - ll(at - e_i + e_j)
                             + ll(at - e_i - e_j)) / (4 * step * step)
    covariance = np.linalg.inv(-hessian)
    printed = {name: scale * elo for name, elo in internal.items()}
    plus = {name: 1.960127302 * scale * math.sqrt(covariance[k, k])
            for k, name in enumerate(free)}
    return printed, plus, x[-2], x[-1]


def test_a_ladder_with_draw_elo_and_advantage_fitted_matches_the_likelihood_maximum() -> None:
    """A Stockfish ladder with the draw Elo and the White advantage fitted (``mm 1 1``): the
    anchors print exactly at 1350 and 1800 (their internal Elo depends on the scale, so on
    the fitted draw Elo: a fit that stops after one pass prints them about 100 off), and the
    free players' Elos, intervals, advantage and draw Elo are the oracle's."""
    games = games_from_crosstable(LADDER)
    config = RatingsConfig(anchors=LADDER_ANCHORS, fit_advantage=True, fit_drawelo=True,
                           prior=0.0)
    table = fit(games, config)
    rows = table.by_name()
    printed, plus, advantage, drawelo = ladder_oracle(games, LADDER_ANCHORS)
    assert rows["sf@1350"].elo == pytest.approx(1350, abs=1e-6)
    assert rows["sf@1800"].elo == pytest.approx(1800, abs=1e-6)
    assert rows["sf@1350"].plus == rows["sf@1800"].minus == 0
    assert table.advantage == pytest.approx(advantage, abs=1e-3)
    assert table.drawelo == pytest.approx(drawelo, abs=1e-3)
    assert table.scale == pytest.approx(bayeselo_scale(drawelo), abs=1e-8)
    for name in ("engine", "other"):
        assert rows[name].elo == pytest.approx(printed[name], abs=1e-3), name
        assert rows[name].plus == rows[name].minus == pytest.approx(plus[name], abs=1e-2), name
    printed_anchors = {line.split()[1]: line.split()[2]
                       for line in format_ratings(table).splitlines()[1:]}
    assert (printed_anchors["sf@1800"], printed_anchors["sf@1350"]) == ("1800", "1350")


def bayeselo_los_text(table: RatingTable, width: int) -> str:
    """bayeselo's ``los 0 N width`` output, built as its C++ prints it (CEloRatingCUI, IDC_LOS):
    a header of setw(MaxNameLength) ' ', ' ', then setw(width) of each name's first width - 1
    letters; per player its name left-aligned in setw(MaxNameLength), ' ', then per column
    setw(width) of int(los * 10^(min(width, 8) - 1)), or setw(width) ' ' on the diagonal."""
    names = [row.name for row in table.rows]
    pad = max(len(name) for name in names)
    mult = 10.0 ** ((8 if width > 8 else width) - 1)
    lines = [" " * pad + " " + "".join(name[:width - 1].rjust(width) for name in names)]
    for i, name in enumerate(names):
        cells = [" ".rjust(width) if i == j else str(int(table.los[i][j] * mult)).rjust(width)
                 for j in range(len(names))]
        lines.append(name.ljust(pad) + " " + "".join(cells))
    return "\n".join(lines)


@pytest.mark.parametrize("width", [2, 3, 5, 9])
def test_los_matrix_prints_as_bayeselo_does(width: int) -> None:
    """``format_los`` is bayeselo's ``los`` printout, every character, at its default width
    (3: percentages), at 2, at 5 (four letters of each name) and above 8 (the multiplier
    stops at 10^7)."""
    table = fit(table7_games())
    expected = bayeselo_los_text(table, width)
    assert format_los(table, width) == expected
    if width == 3:
        assert format_los(table) == expected


def test_grid_cells_are_bayeselos_cell_centres() -> None:
    """CDiscretization: cell k of n over [low, high] is centred at low + (k + 1/2) (high -
    low) / n; cells -1 and n lie just outside. exactdist's grid is bayeselo's own
    (CEloRatingCUI's constructor: 1001 cells over [-1500, 1500])."""
    assert grid_value(0, -10.0, 10.0, 1000) == pytest.approx(-9.99)
    assert grid_value(999, -10.0, 10.0, 1000) == pytest.approx(9.99)
    assert grid_value(-1, -10.0, 10.0, 1000) == pytest.approx(-10.01)
    assert grid_value(500, -1500.0, 1500.0, 1001) == pytest.approx(1.5 * 3000 / 1001 - 1.5
                                                                   * 3000 / 1001)
    parameters = inspect.signature(exact_intervals).parameters
    assert (parameters["elo_min"].default, parameters["elo_max"].default,
            parameters["resolution"].default) == (-1500.0, 1500.0, 1001)


def test_bound_value_reads_the_trapezoid_mass_from_either_end() -> None:
    """GetBoundValue by hand, cells at 0, 1, 2, 3, leaving 2.5% beyond the bound: all the mass
    in the top cell, the bound from above is 4 - 0.025 / 0.5 = 3.95 (the half cell above the
    top one counts); all in the bottom cell, from above the walk reaches cell 0 and gives
    1 - 0.05 = 0.95, from below 0 - 1 + 0.05 = -0.95; no mass at all, the walk ends on the
    last cell it visits (0 from above, 3 from below)."""
    def value(k: int) -> float:
        return float(k)

    assert bound_value([0, 0, 0, 1], value, 0.95, upward=False) == pytest.approx(3.95)
    assert bound_value([1, 0, 0, 0], value, 0.95, upward=False) == pytest.approx(0.95)
    assert bound_value([1, 0, 0, 0], value, 0.95, upward=True) == pytest.approx(-0.95)
    assert bound_value([0, 0, 0, 0], value, 0.95, upward=False) == 0.0
    assert bound_value([0, 0, 0, 0], value, 0.95, upward=True) == 3.0


def test_exactdist_of_a_long_match() -> None:
    """1000 games between two players: log-likelihoods near -1000, which underflow unless
    taken relative to their maximum. An even score is symmetric (plus = minus); with two
    players the other moves against the one on the grid, so the interval is about half the
    Hessian one (within 10%: the grid's cells are 3 Elo wide)."""
    games = games_from_crosstable({("A", "B"): (300, 400, 300)})
    exact = fit(games, RatingsConfig(intervals="exact")).by_name()
    normal = fit(games, RatingsConfig(intervals="variance")).by_name()
    for name in ("A", "B"):
        assert exact[name].plus == pytest.approx(exact[name].minus, rel=1e-9), name
        assert exact[name].plus == pytest.approx(normal[name].plus / 2, rel=0.1), name
    lopsided = fit(games_from_crosstable({("A", "B"): (400, 300, 300)}),
                   RatingsConfig(intervals="exact")).by_name()["A"]
    assert lopsided.elo > 0 and 0 < lopsided.minus < lopsided.plus < 2 * lopsided.minus


# --- issue 48: the ratings' mutation survivors (docs/mutation.md) -----------------------------

def test_each_bad_rating_input_is_refused_in_one_line_naming_it() -> None:
    """A result that is not 0, 1/2 or 1, a game against oneself, fewer than two players, and
    each config value at or past its bound; the values just inside are accepted."""
    cases = [
        (lambda: Game("a", "b", 0.3), "game a - b: bad result 0.3"),
        (lambda: Game("a", "a", 1.0), "game of 'a' against itself"),
        (lambda: fit([]), "need games between at least two players, got []"),
        (lambda: RatingsConfig(prior=-1.0), "prior must be >= 0, got -1.0"),
        (lambda: RatingsConfig(drawelo=0.0), "drawelo must be > 0, got 0.0"),
        (lambda: RatingsConfig(confidence=0.0), "confidence must be in (0, 1), got 0.0"),
        (lambda: RatingsConfig(confidence=1.0), "confidence must be in (0, 1), got 1.0"),
        (lambda: RatingsConfig(confidence=1.5), "confidence must be in (0, 1), got 1.5"),
        (lambda: RatingsConfig(scale=0.0), "scale must be > 0, got 0.0"),
        (lambda: RatingsConfig(intervals="wide"),
         "intervals must be one of ('covariance', 'variance', 'exact'), got 'wide'"),
        (lambda: RatingsConfig(epsilon=0.0), "epsilon must be > 0, got 0.0"),
        (lambda: fit(games_from_crosstable({("a", "b"): (1, 1, 1), ("c", "d"): (1, 1, 1)})),
         "the games do not connect every player: ratings are undefined")]
    for make, message in cases:
        with pytest.raises(RatingsError) as refused:
            make()
        assert str(refused.value) == message
    config = RatingsConfig(drawelo=0.5, scale=0.5, confidence=0.01)
    assert (config.drawelo, config.scale, config.confidence) == (0.5, 0.5, 0.01)


def test_pair_elo_at_its_edges() -> None:
    """Counts as given; a negative count (each of the three) or no game refused; one game
    allowed; a perfect or zero score an infinite Elo; LOS 1/2 with no decisive game and
    (1 + erf(1/sqrt 2)) / 2 after one win (worked out by hand)."""
    result = pair_elo(3, 2, 1)
    assert (result.wins, result.draws, result.losses) == (3, 2, 1)
    for counts in [(-1, 0, 2), (0, -1, 2), (2, 0, -1), (0, 0, 0)]:
        with pytest.raises(ValueError) as refused:
            pair_elo(*counts)
        assert str(refused.value) == ("need non-negative counts and at least one game, got "
                                      + "-".join(map(str, counts)))
    one = pair_elo(1, 0, 0)
    assert one.elo == math.inf and one.los == pytest.approx((1 + math.erf(2 ** -0.5)) / 2)
    assert pair_elo(0, 0, 3).elo == -math.inf
    assert pair_elo(0, 3, 0).los == 0.5


def test_superiority_without_variance_orders_by_elo() -> None:
    """Two anchors have no variance: LOS 1, 0, or 1/2 when level; with a variance of 1/2
    (Elo 0.5 against 0), the normal tail (1 + erf(0.5)) / 2 = 0.7602 (by hand)."""
    none = [[0.0, 0.0], [0.0, 0.0]]
    assert (superiority([10.0, 0.0], none, 0, 1), superiority([10.0, 0.0], none, 1, 0),
            superiority([5.0, 5.0], none, 0, 1)) == (1.0, 0.0, 0.5)
    half = [[0.25, 0.0], [0.0, 0.25]]
    assert superiority([0.5, 0.0], half, 0, 1) == pytest.approx((1 + math.erf(0.5)) / 2)


def test_a_ladder_table_says_its_intervals_are_the_covariances() -> None:
    """A ladder (two anchors) always takes the covariance intervals and says so; another
    config's intervals and confidence are the table's; the anchors' LOS is 1 and 0."""
    games = games_from_crosstable({
        ("sf@1350", "engine"): (2, 4, 14), ("sf@1800", "engine"): (12, 4, 4),
        ("sf@1350", "sf@1800"): (2, 2, 16)})
    ladder = fit(games, RatingsConfig(anchors={"sf@1350": 1350, "sf@1800": 1800}))
    assert ladder.intervals == "covariance"
    assert (ladder.los_between("sf@1800", "sf@1350"),
            ladder.los_between("sf@1350", "sf@1800")) == (1.0, 0.0)
    table = fit(games, RatingsConfig(intervals="exact", confidence=0.9))
    assert (table.intervals, table.confidence) == ("exact", 0.9)
    assert intervals_line(table) == (
        "+ and -: 90% intervals from each player's likelihood with the others fixed, "
        "bayeselo's exactdist (--intervals exact; or covariance, variance)")


def test_short_names_get_the_four_wide_name_column_and_halves_round_away_from_zero() -> None:
    """bayeselo's ratings header is at least ``Name`` wide; halves and 0.7 round away from
    zero."""
    table = fit(games_from_crosstable({("a", "b"): (3, 2, 1)}))
    header, first, _ = format_ratings(table).splitlines()
    assert header == "Rank Name   Elo    +    - games score oppo. draws "
    assert first.startswith("   1 a    ")
    assert [round_half_away(x) for x in (0.5, 0.7, 2.5, -0.5, -2.5, 0.2)] == [1, 1, 3, -1, -3, 0]
    assert format_los(table).splitlines()[0] == "    a  b"
