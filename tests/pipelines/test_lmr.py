"""Late-move reductions, paper 003 part II (issue 10 part 2): logging self-play, the largest
safe reduction by re-search (A.3 / Table 5.1), the Table 6.1 fits, the bench normalisation of
Figure 6.1 and the learned formula in play."""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import chess
import numpy as np
import pytest
from sklearn.metrics import r2_score

from engines.alphabeta import AlphaBeta, SearchConfig
from engines.alphabeta.bench import run_bench
from engines.alphabeta.formula import LmrFormula, LmrFormulaError
from engines.alphabeta.program import AlphaBetaOptions, alphabeta_spec
from engines.registry import own_identity, parse_engine
from flows.cli import main
from flows.evaluate_model import evaluate_model
from flows.lmr_data import lmr_data
from flows.step import LocalRunner
from pipelines.evaluate import EvaluateConfig
from pipelines.kinds.lmr.fit import (
    INTERCEPTS,
    PAPER_TABLE_6_1,
    SWEEP,
    LmrConfig,
    LmrTrainError,
    fit_table,
    load_examples,
    normalise,
    term_columns,
    train_lmr,
)
from pipelines.lmr import LmrDataConfig, LmrDataError, largest_safe_reduction
from pipelines.lmr.label import in_paper_range
from pipelines.lmr.run import example, research_scores
from pipelines.models.deploy import engine_options, resolve_player
from warehouse import Lake, connect

OPENINGS = str(Path(__file__).parents[1] / "fixtures" / "openings" / "two_positions.epd")
TINY = dict(games=2, nodes=2000, log_rate=0.02, max_plies=14, random_plies=4, hash_mb=1,
            label_chunk=16, paper_range=False)


@pytest.fixture(scope="module")
def lmr_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with a tiny lmr-data run (two games) labelled."""
    home = tmp_path_factory.mktemp("lmr") / "home"
    run_lmr_data(LmrDataConfig(**TINY), home)  # type: ignore[arg-type]
    return home


@pytest.fixture(scope="module")
def examples(lmr_home: Path) -> list[dict[str, Any]]:
    return connect(Lake(lmr_home)).sql(
        "select * from lmr_examples order by run_id, seq").to_arrow_table().to_pylist()


@pytest.fixture(scope="module")
def trained(lmr_home: Path) -> Any:
    """``train lmr`` (tiny bench) on the module's data: lmr@1 and its fits."""
    return train_lmr(Lake(lmr_home), LmrConfig.tiny())


# --- the label ------------------------------------------------------------------------------

def run_lmr_data(config: LmrDataConfig, home: object) -> Any:
    """The lmr-data steps on the local runner, quietly."""
    return lmr_data(LocalRunner(show_progress=False), config, Lake(home))


def test_table_5_1_example_gives_8_by_the_text_and_9_by_the_code() -> None:
    """Paper 003 Table 5.1 (alpha 100, depth 2 fails high, full depth 11): 'upper limit of
    allowable reduction is 11 - 3 = 8'; Listing A.3's code returns 9 (notes A.3 item 6)."""
    scores = [99.7, 109.1, 99.9, 99.0, 99.0, 99.0, 99.0, 99.4, 99.3, 97.2, 96.5]
    assert largest_safe_reduction(scores, 100, "table") == 8
    assert largest_safe_reduction(scores, 100, "code") == 9
    assert largest_safe_reduction([90, 95, 99], 100, "table") == 2   # nothing fails high
    assert largest_safe_reduction([90, 95, 99], 100, "code") == 2
    assert largest_safe_reduction([90, 95, 101], 100, "table") == 0  # the full depth fails high
    assert largest_safe_reduction([90, 95, 101], 100, "code") == 0
    assert largest_safe_reduction([100, 101, 100, 100], 100, "table") == 1   # equal is low
    with pytest.raises(LmrDataError, match="'stockfish'"):
        largest_safe_reduction([1], 0, "stockfish")


def test_paper_sampling_range() -> None:
    """Listing A.2's do_log range: d and m in 1..10, 15, 20, 25, 30, 40, 50, 60."""
    assert [n for n in range(1, 100) if in_paper_range(n)] == [
        *range(1, 11), 15, 20, 25, 30, 40, 50, 60]


def test_every_label_is_the_largest_reduction_whose_re_search_fails_low(
        examples: list[dict[str, Any]]) -> None:
    """Each stored score is the child's own search at that depth, negated (checked by fresh
    searches); the table label r is the largest with every depth >= full - r failing low,
    and the depth just below fails high unless r reduces to depth 1."""
    assert len(examples) >= 10
    engine = AlphaBeta(SearchConfig(hash_mb=1))
    checked = 0
    for row in examples:
        full, alpha, scores = row["depth_full"], row["alpha"], row["scores"]
        assert len(scores) == full == row["depth"] - 1
        if row["mate"] or row["capped"]:
            assert row["label_table"] is None and row["fail_low_full"] is None
            continue
        for depth in (full, row["depth_reduced"]):
            engine.new_game()
            result = list(engine.iterate(chess.Board(row["fen"]), max_depth=depth))[-1]
            assert -result.score_cp == scores[depth - 1]
        r = row["label_table"]
        assert all(s <= alpha for s in scores[full - r - 1:])
        assert r == full - 1 or scores[full - r - 2] > alpha
        high = max((d for d, s in enumerate(scores, start=1) if s > alpha), default=0)
        assert row["label_code"] == (full - 1 if high == 0 else full - high)
        assert row["fail_low_full"] == (scores[-1] <= alpha)
        assert row["fail_low_reduced"] == (scores[row["depth_reduced"] - 1] <= alpha)
        checked += 1
    assert checked >= 5


def test_a_re_search_over_its_node_budget_gets_no_label() -> None:
    """A re-search that cannot reach the full depth within label_max_nodes is kept as capped,
    without a label (a depth-12 search of a middlegame does not fit in 300 nodes)."""
    fen = "r1bq1rk1/ppp1nppp/4n3/3p3Q/3P4/1BP1B3/PP1N2PP/R4RK1 w - - 1 16"
    scores = research_scores(AlphaBeta(SearchConfig(hash_mb=1)), fen, 12, 300)
    assert 1 <= len(scores) < 12
    decision = {"run_id": "lmr-x-g00000", "seq": 0, "fen": fen, "depth": 13, "move_no": 5,
                "depth_new": 10, "alpha": 0, "value": -5, "stat_eval": 10, "np_material_w": 3000,
                "np_material_b": 3000}
    row = example(decision, scores, "lmr-x", "alphabeta")
    assert row["capped"] and not row["mate"] and row["game"] == 0
    assert row["label_table"] is row["label_code"] is row["fail_low_full"] is None


def test_lmr_data_resumes(lmr_home: Path, examples: list[dict[str, Any]]) -> None:
    """The same command again plays and labels nothing; one more game plays only that game
    and labels only its decisions."""
    again = run_lmr_data(LmrDataConfig(**TINY), lmr_home)  # type: ignore[arg-type]
    assert (again.games_played, again.decisions_logged, again.decisions_labelled) == (0, 0, 0)
    assert again.examples == len(examples)
    more = run_lmr_data(LmrDataConfig(**{**TINY, "games": 3}), lmr_home)  # type: ignore[arg-type]
    assert more.games_played == 1
    assert more.decisions_labelled == more.decisions_logged > 0
    games = connect(Lake(lmr_home)).execute(
        "select game, count(*) from lmr_examples group by game order by game").fetchall()
    assert [g for g, _ in games] == [0, 1, 2]
    assert sum(n for _, n in games) == len(examples) + more.decisions_labelled


def test_lmr_data_summary_counts_every_logged_decision(tmp_path: Path) -> None:
    """Issue 10 (paper 003 run): '5003 decisions logged, 2353 labelled' left the other 2650
    unexplained. With --paper-range and a small re-search budget every logged decision of
    the run is labelled, outside the range (counted from search_log here), capped or a mate."""
    config = LmrDataConfig(**{**TINY, "paper_range": True, "label_max_nodes": 20})  # type: ignore[arg-type]
    summary = run_lmr_data(config, tmp_path / "home")
    con = connect(Lake(tmp_path / "home"))
    rows = con.execute("select depth, move_no from search_log").fetchall()
    outside = sum(not (in_paper_range(d) and in_paper_range(m)) for d, m in rows)
    assert summary.logged == summary.decisions_logged == len(rows) > 0
    assert summary.outside_range == outside > 0 and summary.capped > 0
    assert summary.labelled + summary.outside_range + summary.capped + summary.mates == len(rows)
    assert summary.examples == summary.decisions_labelled == len(rows) - outside
    assert (f"of the run's {len(rows)} logged decisions {summary.labelled} labelled, "
            f"{outside} outside the paper's range, {summary.capped} capped") in str(summary)


def test_lmr_data_config_errors() -> None:
    with pytest.raises(LmrDataError, match="log_rate must be in"):
        LmrDataConfig(log_rate=0.0)
    with pytest.raises(LmrDataError, match="--nodes N or --depth D"):
        LmrDataConfig(nodes=None)


# --- the fits -------------------------------------------------------------------------------

def test_every_table_6_1_fit_has_sklearns_r2_and_no_intercept(lmr_home: Path) -> None:
    """Thirteen formulas of Table 6.1; each R^2 equals sklearn's r2_score of the stored
    coefficients' predictions through the origin; the coefficients are least squares."""
    rows = load_examples(Lake(lmr_home), LmrConfig.tiny())
    fits = fit_table(rows, "table")
    assert [f.paper_r2 for f in fits] == [row[2] for row in PAPER_TABLE_6_1]
    assert fits[7].formula == "logd*logm + logd + logm" and fits[7].paper_r2 == 0.8005
    columns = term_columns(rows)
    target = np.array([r["label_table"] for r in rows], dtype=float)
    for fit in fits:
        features = np.column_stack([columns[t] for t in fit.terms])
        predicted = features @ np.array(fit.coefficients)
        assert fit.r2 == pytest.approx(r2_score(target, predicted), abs=1e-9)
        solution = np.linalg.lstsq(features, target, rcond=None)[0]
        assert np.allclose(features @ solution, predicted, atol=1e-6)


def test_train_lmr_registers_fits_and_a_normalised_formula(lmr_home: Path, trained: Any) -> None:
    """lmr@1: 13 lmr_fits rows, a metrics row with every R^2, and a deployed event whose scale
    makes the bench (recomputed here) count the default formula's nodes within 1%."""
    model, fits = trained
    assert model.model_id == "lmr@1" and model.kind == "lmr"
    con = connect(Lake(lmr_home))
    stored = dict(con.execute("select formula, r2 from lmr_fits where model_id = 'lmr@1'").fetchall())
    assert stored == {f.formula: pytest.approx(f.r2) for f in fits}
    extra = json.loads(con.execute("select extra from model_metrics").fetchone()[0])
    assert extra == {f.formula: pytest.approx(f.r2) for f in fits}
    events = {e: json.loads(p) for e, p in con.execute(
        "select event, payload from model_events where model_id = 'lmr@1'").fetchall()}
    assert set(events) == {"started", "trained", "exported", "deployed"}
    labels = con.execute("select label_table, depth_full from lmr_examples where not mate and "
                         "not capped and value <= alpha and fail_low_reduced and "
                         "fail_low_full").fetchall()
    at_max = sum(label == full - 1 for label, full in labels) / len(labels)
    assert events["trained"]["at_max_share"] == pytest.approx(at_max) and 0 < at_max <= 1
    deployed = events["deployed"]
    formula = LmrFormula.parse(engine_options(Lake(lmr_home), "lmr@latest")["lmr_formula"])
    assert str(formula) == deployed["formula"]
    bench = LmrConfig.tiny().bench_config()
    default, learned = run_bench(bench).nodes, run_bench(bench, formula).nodes
    assert (learned, default) == (deployed["bench_nodes"], deployed["default_bench_nodes"])
    assert abs(learned / default - 1) <= 0.01
    assert model.config["engine_spec"].endswith(f"lmr_formula={formula},lmr=lmr@1")


def test_normalise_finds_the_default_formula_again() -> None:
    """log d * log m scaled on a six-position bench: the scale found counts the default's
    nodes within 1% (1/1.95 would give the default table itself); the curve holds every
    benched point and falls with the scale."""
    formula = LmrFormula.of({"logd*logm": 1.0})
    bench = LmrConfig.tiny().bench_config()
    normal = normalise(formula, bench, 0.005, 30)
    assert abs(normal.ratio - 1) <= 0.01
    assert (normal.scale, normal.nodes) in normal.curve
    assert run_bench(bench, formula.scaled(normal.scale)).nodes == normal.nodes
    sweep = [nodes for scale, nodes in normal.curve if scale in SWEEP]
    assert sweep == sorted(sweep, reverse=True) and sweep[-1] <= normal.default_nodes


def test_normalise_tries_the_intercept_when_no_scale_is_close_enough() -> None:
    """With a tolerance no scale meets, the intercept stage benches Listing A.4's intercept
    at the nearest scale, nearest zero first; the point kept is the nearest of all benched,
    and the deployed formula (scaled, then shifted) counts exactly its nodes."""
    formula = LmrFormula.of({"logd*logm": 1.0, "logd": 0.5})
    bench = LmrConfig.tiny().bench_config()
    normal = normalise(formula, bench, 1e-9, 12, intercept_steps=4)
    assert [i for i, _ in normal.intercepts] == list(INTERCEPTS[:4]) == [0.05, -0.05, 0.1, -0.1]
    points = [nodes for _, nodes in normal.curve] + [nodes for _, nodes in normal.intercepts]
    assert abs(normal.nodes - normal.default_nodes) == min(
        abs(n - normal.default_nodes) for n in points)
    deployed = normal.apply(formula)
    assert dict(deployed.coefficients).get("intercept", 0.0) == normal.intercept
    assert run_bench(bench, LmrFormula.parse(str(deployed))).nodes == normal.nodes


@pytest.mark.slow
def test_paper_equation_6_1_normalises_on_the_full_bench() -> None:
    """Figure 6.1 on chesslab's bench (24 positions, depth 8): Eq. 6.1's coefficients reach the
    default's node count within 1% (the paper's scale was 0.40596 on Stockfish's bench)."""
    formula = LmrFormula.of({"logd*logm": 2.3988, "logd": 2.12698, "logm": -4.64504})
    normal = normalise(formula, LmrConfig().bench_config(), 0.005, 30)
    assert abs(normal.ratio - 1) <= 0.01 and 0.8 < normal.scale < 3.2


def test_train_lmr_errors(home: Path) -> None:
    with pytest.raises(LmrTrainError, match="0 usable examples"):
        train_lmr(Lake(home), LmrConfig.tiny())
    with pytest.raises(LmrTrainError, match="'logd \\+ md'"):
        LmrConfig(deploy="logd + md")


# --- the engine -----------------------------------------------------------------------------

def test_formula_text_table_and_callable_agree() -> None:
    formula = LmrFormula.parse("logd*logm=0.97382;logd=0.86347;logm=-1.8857")
    table = formula.table()
    for d in range(1, 64):
        for m in range(1, 64):
            expected = max(0, math.floor(0.97382 * math.log(d) * math.log(m)
                                         + 0.86347 * math.log(d) - 1.8857 * math.log(m)))
            assert table[d][m] == formula(d, m, {}) == min(63, expected)
    assert LmrFormula.parse(str(formula)) == formula
    shifted = formula.shifted(0.3)
    assert shifted.table()[10][20] == math.floor(formula.value(10, 20) + 0.3)
    assert shifted.shifted(0.0) == formula and "intercept=0.3" in str(shifted)
    with pytest.raises(LmrFormulaError, match="'logq=1'"):
        LmrFormula.parse("logq=1")


def test_a_formula_table_searches_as_the_callable_does() -> None:
    """The compiled table path and the Python callback give the same tree: same nodes."""
    formula = LmrFormula.of({"logd*logm": 0.6, "logd": 0.2})

    def callback(d: int, m: int, state: dict[str, Any]) -> int:
        return formula(d, m, state)

    board = chess.Board("r1bq1rk1/ppp1nppp/4n3/3p3Q/3P4/1BP1B3/PP1N2PP/R4RK1 w - - 1 16")
    nodes = [list(AlphaBeta(SearchConfig(lmr=lmr, hash_mb=1)).iterate(board, max_depth=6))[-1]
             .nodes for lmr in (formula, callback)]
    assert nodes[0] == nodes[1] > 0


def test_engine_option_lmr_model_needs_its_formula() -> None:
    with pytest.raises(ValueError, match="needs --lmr-formula"):
        AlphaBetaOptions(lmr="lmr@1")
    with pytest.raises(ValueError, match="'lmr1'"):
        AlphaBetaOptions(lmr="lmr1")
    spec = alphabeta_spec(AlphaBetaOptions(lmr="lmr@1", lmr_formula="logd=0.5"))
    searcher = spec.make_searcher({o.name: o.default for o in spec.options})
    assert isinstance(searcher.config.lmr, LmrFormula)


def test_learned_specs_resolve_through_the_registry(lmr_home: Path, trained: Any) -> None:
    """``alphabeta:lmr=lmr@latest`` becomes the normalised formula pinned to lmr@1 (the
    engine the model's recorded spec starts); the identity records both; the engine plays it
    over UCI."""
    from pipelines.models.deploy import settings_of

    model, _ = trained
    player = resolve_player(Lake(lmr_home), parse_engine("alphabeta:hash=1,lmr=lmr@latest"))
    recorded = parse_engine(model.config["engine_spec"].replace("eval=hce,", "hash=1,"))
    assert settings_of(player.command[4:]) == settings_of(recorded.command[4:])
    identity = own_identity(player)
    assert identity.options["LMR"] == "lmr@1" and "LMRFormula" not in identity.options
    formula = engine_options(Lake(lmr_home), "lmr@1")["lmr_formula"]
    assert settings_of(player.command[4:])["lmr_formula"] == formula
    import chess.engine

    engine = chess.engine.SimpleEngine.popen_uci(list(player.command))
    try:
        result = engine.play(chess.Board(), chess.engine.Limit(nodes=500))
        assert result.move in chess.Board().legal_moves
    finally:
        engine.quit()


def test_bench_cli_takes_a_learned_formula(lmr_home: Path, trained: Any,
                                           monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CHESSLAB_HOME", str(lmr_home))
    assert main(["bench", "--depth", "5", "--positions", "6", "--hash-mb", "1",
                 "--lmr", "lmr@1"]) == 0
    out = capsys.readouterr().out
    deployed = json.loads(connect(Lake(lmr_home)).execute(
        "select payload from model_events where event = 'deployed'").fetchone()[0])
    assert f"Nodes searched  : {deployed['bench_nodes']}" in out and "lmr: lmr@1" in out


# --- the evaluation -------------------------------------------------------------------------

def test_sprt_non_regression_is_recorded_against_the_model(lmr_home: Path, trained: Any) -> None:
    """``evaluate lmr@latest --sprt -1.75,0.25`` (fishtest's non-regression bounds): the
    candidate is the engine with the learned formula (its identity in the engines table is
    lmr@1), the match is against the default formula, the figures are lmr@1's
    ``evaluated`` event."""
    config = EvaluateConfig.tiny(model="lmr@latest", against="alphabeta:eval=hce",
                                 sprt=(-1.75, 0.25), ladder="", max_games=4, openings=OPENINGS)
    evaluation = evaluate_model(LocalRunner(show_progress=False), config, Lake(lmr_home))
    assert (evaluation.model_id, evaluation.candidate, evaluation.games) == ("lmr@1", "lmr@1", 4)
    assert evaluation.wins + evaluation.draws + evaluation.losses == 4
    con = connect(Lake(lmr_home))
    payload = json.loads(con.execute(
        "select payload from model_events where model_id = 'lmr@1' and event = 'evaluated'"
    ).fetchone()[0])
    assert payload["sprt_elo"] == [-1.75, 0.25] and payload["games"] == 4
    assert payload["sprt_decision"] == evaluation.sprt_decision
    options = [json.loads(o) for (o,) in con.execute("select options from engines").fetchall()]
    assert sorted(o.get("LMR") for o in options) == ["lmr@1", "standard"]


def test_cli_lmr_data_then_train_lmr_prints_the_table(home: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """``chesslab lmr-data`` then ``chesslab train lmr --preset tiny``: the summary line, the
    Table 6.1 comparison with the paper's R^2 column, the model version; a bad label rule is
    a one-line error with a non-zero exit."""
    args = ["lmr-data", "--games", "1", "--nodes", "2000", "--log-rate", "0.05",
            "--max-plies", "12", "--hash-mb", "1", "--no-paper-range", "--no-prefect"]
    assert main(args) == 0
    assert "1 games played" in capsys.readouterr().out
    assert main(["train", "lmr", "--preset", "tiny", "--min-rows", "3"]) == 0
    captured = capsys.readouterr()
    assert "lmr@1 (lmr): " in captured.out
    assert "logd*logm + logd + logm" in captured.err and "0.8005" in captured.err
    # issue 32: the command prints the R^2 of the formula it deployed (the fit's, recorded)
    deploy = LmrConfig().deploy
    r2, best = connect(home).execute(
        "select max(r2) filter (where formula = $1), max(r2) from lmr_fits", [deploy]).fetchone()
    assert (f"lmr@1: R² of the deployed formula {deploy}: {r2:.4f}; train loss "
            f"{1 - best:.4f}") in captured.out
    assert main(["train", "lmr", "--label", "stockfish"]) != 0
    assert "'stockfish'" in capsys.readouterr().err
