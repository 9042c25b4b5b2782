"""Paper 003's volatility classifier end to end (issue 10 part 1): a warehouse built by
ingesting real games (tests/fixtures/label_engines/selfplay.pgn) and labelling every position
with real Stockfish at depths 5, 6 and 7, then ``chesslab train volatility --preset tiny``.

The figures the training stores are checked against independent computations: the baseline
against the unstable share counted in SQL, the AUC against scikit-learn, Table 4.1's
thresholds against the FPR they give on the stored validation predictions.
"""
from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import chess
import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from engines.volatility.model import load_model
from flows.cli import main as cli_main
from flows.ingest import INGEST, IngestJob
from flows.label import LABEL
from flows.step import run_step
from pipelines.ingest import IngestConfig
from pipelines.kinds.volatility.config import VolatilityConfig
from pipelines.kinds.volatility.metrics import PAPER_TABLE_4_1
from pipelines.label import LabelConfig
from pipelines.models.deploy import engine_options
from pipelines.models.registry import resolve_model
from pipelines.train import TrainConfigError, preset, train
from pipelines.train.dataset import DatasetError
from warehouse import Lake, connect

ROOT = Path(__file__).resolve().parent.parent.parent
GAMES = ROOT / "tests" / "fixtures" / "label_engines" / "selfplay.pgn"
TINY_PERMILLE = 200


@pytest.fixture(scope="module")
def labelled_lake(tmp_path_factory: pytest.TempPathFactory, stockfish_path: str) -> Lake:
    """selfplay.pgn ingested and every position labelled by Stockfish at depths 5, 6, 7."""
    lake = Lake(tmp_path_factory.mktemp("volatility") / "home")
    run_step(INGEST, IngestJob((GAMES,), IngestConfig.tiny()), lake)
    summary = run_step(LABEL, LabelConfig.tiny(depths=(5, 6, 7), limit=None,
                                                     batch_size=200, workers=2), lake)
    assert summary.errors == 0 and summary.labels > 2400
    return lake


@pytest.fixture
def lake(labelled_lake: Lake, tmp_path: Path) -> Lake:
    shutil.copytree(labelled_lake.home, tmp_path / "home")
    return Lake(tmp_path / "home")


def test_examples_follow_formula_3_1(labelled_lake: Lake) -> None:
    """Every position labelled at 5, 6 and 7 is one example; V6 - V5, the best move change
    and |V7 - V6| < 18 recomputed from the labels table in Python."""
    con = connect(labelled_lake)
    labels: dict[int, dict[int, tuple[int, str]]] = {}
    for key, depth, cp, mate, move in con.sql(
            "select position_key, depth, score_cp, score_mate, best_move from labels").fetchall():
        value = cp if mate is None else (10000 if mate > 0 else -10000)
        labels.setdefault(key, {})[depth] = (value, move)
    examples = {r[0]: r[1:] for r in con.sql(
        "select position_key, delta_value, pv_change, stable, split_key "
        "from volatility_split_examples").fetchall()}
    assert examples.keys() == {k for k, d in labels.items() if d.keys() >= {5, 6, 7}}
    for key, (delta, pv_change, stable, _) in examples.items():
        (v5, m5), (v6, m6), (v7, _) = (labels[key][d] for d in (5, 6, 7))
        assert (delta, pv_change, stable) == (v6 - v5, m5 != m6, abs(v7 - v6) < 18)
    shares = [s for _, _, s, _ in examples.values()]
    assert 0.1 < sum(shares) / len(shares) < 0.9          # both classes are there
    assert any(pv for _, pv, _, _ in examples.values())


def test_split_by_game_is_the_nnue_split(labelled_lake: Lake) -> None:
    """The validation games of the volatility data set are those of the NNUE data set."""
    con = connect(labelled_lake)
    engine = con.sql("select any_value(engine_id) from labels").fetchall()[0][0]
    rule = f"(md5_number(split_key) % 1000)::integer < {TINY_PERMILLE}"
    volatility = dict(con.sql(f"select split_key, bool_and({rule}) from "
                              "volatility_split_examples group by all").fetchall())
    nnue = dict(con.sql(f"select split_key, bool_and({rule}) from nnue_examples "
                        f"where engine_id = '{engine}' group by all").fetchall())
    shared = volatility.keys() & nnue.keys()
    assert len(shared) >= 5 and any(volatility[k] for k in shared)
    assert all(volatility[k] == nnue[k] for k in shared)
    rows = con.sql("select split_key, count(*) from volatility_split_examples group by all "
                   "having count(*) > 1").fetchall()
    assert rows, "games, not single positions, are the split unit"


def test_config_rejects_bad_values() -> None:
    with pytest.raises(TrainConfigError, match="arch.*'lstm'"):
        VolatilityConfig(arch="lstm")
    with pytest.raises(TrainConfigError, match="beta.*-1"):
        VolatilityConfig(beta=-1)
    with pytest.raises(TrainConfigError, match="inputs.*'all'"):
        VolatilityConfig(inputs="all")
    assert preset(VolatilityConfig, "tiny").epochs == 4     # nnue-only preset keys ignored
    assert VolatilityConfig(arch="conv").hidden == 100 and VolatilityConfig().hidden == 50
    with pytest.raises(SystemExit) as exit_info:   # every help text formats (no stray %)
        cli_main(["train", "volatility", "--help"])
    assert exit_info.value.code == 0


def test_no_labels_is_a_one_line_error(home: Path) -> None:
    with pytest.raises(DatasetError, match="no volatility_examples rows for engine any"):
        train(Lake(home), "volatility", preset(VolatilityConfig, "tiny"))


def test_train_dense_end_to_end(lake: Lake, capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch,
                                caplog: pytest.LogCaptureFixture) -> None:
    """`chesslab train volatility --preset tiny`: per-epoch loss and accuracy, and the
    evaluation tables, each checked against an independent computation."""
    monkeypatch.setenv("CHESSLAB_HOME", str(lake.home))
    assert cli_main(["train", "volatility", "--preset", "tiny", "--no-prefect"]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "volatility@1 (volatility-tiny)" in out
    # Issue 49 §3: the shared trainer's epoch lines, with rate and (but the last) ETA.
    ends = [line for line in captured.err.splitlines()
            if line.startswith("train volatility@1: ") and ", train loss " in line]
    assert [re.search(r"; epoch (\d)/4, ", line).group(1) for line in ends] == \
        ["1", "2", "3", "4"], captured.err
    assert all(re.search(r" positions/(s|min), ETA ", line) for line in ends[:3]), ends
    assert re.search(r"positions \(100%\), [\d.,]+ positions/(s|min); ", ends[3]), ends
    con = connect(lake)
    metrics = con.sql("select epoch, train_loss, val_loss, extra from model_metrics "
                      "where model_id = 'volatility@1' order by epoch").fetchall()
    assert [m[0] for m in metrics] == [0, 1, 2, 3]
    assert metrics[-1][1] < metrics[0][1]
    for _, _, val_loss, extra in metrics:
        accuracies = json.loads(extra)
        assert val_loss > 0 and 0 < accuracies["train_accuracy"] <= 1
        assert 0 < accuracies["val_accuracy"] <= 1

    evaluation = con.sql("select * from volatility_evaluations").to_arrow_table().to_pylist()[0]
    stable_share, validation = con.sql(
        f"select avg((change_67 < 18)::int), count(*) from volatility_split_examples "
        f"where (md5_number(split_key) % 1000)::integer < {TINY_PERMILLE}").fetchall()[0]
    assert evaluation["positions"] == validation
    assert evaluation["baseline_accuracy"] == pytest.approx(1 - stable_share, abs=1e-12)

    predictions = con.sql("select p.probability, p.stable, e.change_67 < 18 from "
                          "volatility_predictions p join volatility_split_examples e "
                          "using (position_key)").fetchall()
    probability = np.array([p for p, _, _ in predictions])
    stable = np.array([s for _, s, _ in predictions])
    assert len(predictions) == validation and all(s == t for _, s, t in predictions)
    assert evaluation["roc_auc"] == pytest.approx(roc_auc_score(stable, probability), abs=1e-12)
    # issue 32: the command prints the final losses, the AUC and the chosen threshold
    printed = re.search(r"volatility@1: train loss (\S+), validation loss (\S+) after 4 epochs; "
                        r"validation ROC AUC (\S+), threshold (\S+) \(chosen at FPR 0\.50%\)",
                        out)
    assert printed, out
    assert [float(v) for v in printed.groups()] == pytest.approx(
        [metrics[-1][1], metrics[-1][2], roc_auc_score(stable, probability),
         evaluation["threshold"]], abs=1e-4)
    assert evaluation["accuracy"] == pytest.approx(((probability > 0.5) == stable).mean())
    # issue 49 §4: an AUC at or below 0.5 (0.4578 was printed without a word) is a warning
    assert ("is at or below chance (0.5)" in caplog.text) == (evaluation["roc_auc"] <= 0.5)

    table = con.sql("select target_fpr, threshold, tpr, fpr, flagged_share, paper_tpr "
                    "from volatility_fpr_table order by target_fpr").fetchall()
    assert [round(r[0], 4) for r in table] == [round(f, 4) for f, _, _ in PAPER_TABLE_4_1]
    negatives, positives = int((~stable).sum()), int(stable.sum())
    for target, threshold, tpr, fpr, flagged_share, _paper_tpr in table:
        flagged = probability > threshold
        assert fpr == pytest.approx((flagged & ~stable).sum() / negatives)
        assert tpr == pytest.approx((flagged & stable).sum() / positives)
        assert flagged_share == pytest.approx(flagged.mean())
        assert fpr <= target
        looser = probability >= threshold   # the next looser threshold exceeds the target
        assert (looser & ~stable).sum() / negatives > target or looser.all()
    assert table[4][5] == pytest.approx(0.0602)

    gains = dict(con.sql("select percent, stable_found from volatility_gains").fetchall())
    assert gains[0] == 0 and gains[100] == pytest.approx(1.0)
    top = np.argsort(-probability, kind="stable")[:int(np.ceil(len(probability) / 5))]
    assert gains[20] == pytest.approx(stable[top].sum() / positives)

    model = resolve_model(lake, "volatility@1")
    deployed = engine_options(lake, "volatility@latest")        # what the engines are given
    assert deployed == {"volatility": "volatility@1", "volatility_file": str(model.artifact_path)}
    net = load_model(deployed["volatility_file"], "volatility@1")
    assert net.threshold == evaluation["threshold"] and net.arch == "dense"
    payload = json.loads(con.sql("select payload from model_events where event = 'exported'"
                                 ).fetchall()[0][0])
    assert payload["torch_vs_numpy_max_gap"] < 1e-5
    assert payload["roc_auc"] == evaluation["roc_auc"]
    rows = query_table_4_1(lake)
    assert len(rows) == 19 and rows[0]["baseline_accuracy"] == evaluation["baseline_accuracy"]


def query_table_4_1(lake: Lake) -> list[dict[str, object]]:
    from warehouse.catalog import named_query, query

    return query(connect(lake), named_query("volatility_table_4_1"),
                 {"model_id": "volatility@1"}).to_pylist()


def test_train_conv(lake: Lake) -> None:
    """The convolutional net trains, and its export (batch norm folded) is the float net."""
    model = train(lake, "volatility", preset(VolatilityConfig, "tiny", arch="conv", width=8,
                                             epochs=2))
    payload = json.loads(connect(lake).sql(
        "select payload from model_events where event = 'exported'").fetchall()[0][0])
    assert payload["torch_vs_numpy_max_gap"] < 1e-5
    assert load_model(str(model.artifact_path)).arch == "conv"
    assert 0 <= payload["roc_auc"] <= 1


def test_train_with_v6_among_the_inputs(lake: Lake) -> None:
    """``--inputs value``: the nets read V6 too (775 inputs); the export says so and the
    engine-side model, asked through the engines' predictor, matches the trainer's
    validation predictions."""
    model = train(lake, "volatility", preset(VolatilityConfig, "tiny", inputs="value",
                                             epochs=2))
    payload = json.loads(connect(lake).sql(
        "select payload from model_events where event = 'exported'").fetchall()[0][0])
    assert payload["torch_vs_numpy_max_gap"] < 1e-5
    net = load_model(str(model.artifact_path))
    assert net.inputs == 775 and net.meta["input_set"] == "value"
    rows = connect(lake).sql(
        "select e.fen, e.delta_value, e.pv_change, e.v6, p.probability "
        "from volatility_predictions p join volatility_examples e using (position_key) "
        "order by position_key limit 20").fetchall()
    assert rows
    for fen, delta, changed, v6, probability in rows:
        assert net.stability(chess.Board(fen), delta, changed, v6) == pytest.approx(
            probability, abs=1e-9)


def test_paper_match_and_clock_sprt_are_recorded_against_the_model(
        lake: Lake, monkeypatch: pytest.MonkeyPatch) -> None:
    """The paper's match at a tiny depth (fixed depth vs net chooser vs random chooser with
    the net's validation stop rate) and the clock variant's SPRT against the plain time
    manager, both as ``evaluated`` events of the model. The tournaments resolve volatility@N
    through the registry to its file (no environment: engines take files)."""
    from flows.evaluate_model import evaluate_model
    from flows.step import LocalRunner
    from pipelines.evaluate import EvaluateConfig
    from pipelines.kinds.volatility.match import MatchConfig, paper_match

    model = train(lake, "volatility", preset(VolatilityConfig, "tiny", epochs=1))
    openings = str(ROOT / "tests" / "fixtures" / "openings" / "two_positions.epd")
    payload = paper_match(lake, model.model_id, MatchConfig(
        depth=3, rounds=1, openings=openings, max_plies=30, engine="alphabeta:hash=1"))
    rate = connect(lake).sql("select flagged_share from volatility_evaluations").fetchall()[0][0]
    assert payload["random_stop_rate"] == pytest.approx(rate)
    players = connect(lake).sql("select distinct white from tournament_games where white in "
                                "('fixed-depth', 'net-chooser', 'random-chooser') order by 1"
                                ).fetchall()
    assert players == [("fixed-depth",), ("net-chooser",), ("random-chooser",)]
    for result in payload["challengers"]:
        assert result["wins"] + result["draws"] + result["losses"] == 2
    evaluation = evaluate_model(LocalRunner(show_progress=False), EvaluateConfig.tiny(
        model=model.model_id, against="alphabeta:hash=1", nodes=None, tc="1+0.05", max_games=2,
        ladder="", max_plies=30), lake)
    assert evaluation.games == 2 and evaluation.candidate.endswith(model.model_id)
    events = connect(lake).sql(
        "select payload from model_events where event = 'evaluated' order by recorded_at"
    ).fetchall()
    assert len(events) == 2
    assert json.loads(events[0][0])["tournament_id"] == payload["tournament_id"]
    assert json.loads(events[1][0])["sprt_elo"] == [0.0, 200.0]


def test_a_copy_of_the_volatility_folder_is_a_new_kind(
        lake: Lake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 46: adding a kind is copying a kind's folder. ``pipelines/kinds/volatility/``
    copied to ``toy/`` with only the declared name changed: ``chesslab train toy`` trains and
    registers ``toy@1`` under its own name (its folder ``models/toy/1``, its evaluation rows
    under ``toy@1``), and its dashboard page gets the panels the copy declares, drawn from
    its own rows."""
    import pipelines.kinds
    from dashboards import pages

    source = ROOT / "pipelines" / "kinds" / "volatility"
    folder = tmp_path / "kinds" / "toy"
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("__pycache__"))
    declaration = (folder / "kind.py").read_text()
    assert declaration.count('name="volatility"') == 1
    (folder / "kind.py").write_text(declaration.replace('name="volatility"', 'name="toy"'))
    monkeypatch.setattr(pipelines.kinds, "__path__",
                        [*pipelines.kinds.__path__, str(folder.parent)])
    for module in [m for m in sys.modules if m.startswith("pipelines.kinds.toy")]:
        monkeypatch.delitem(sys.modules, module)
    try:
        assert cli_main(["--home", str(lake.home), "train", "toy", "--preset", "tiny",
                         "--no-prefect"]) == 0
        assert "toy@1" in capsys.readouterr().out
        assert resolve_model(lake, "toy@1").artifact_path.parent == lake.home / "models/toy/1"
        con = connect(lake)
        assert con.sql("select distinct model_id from volatility_evaluations").fetchall() \
            == [("toy@1",)]
        page = pages.model_page(con, "toy@1")
        names = [b.name for s in page.sections for b in s.blocks]
        assert {"volatility-roc", "volatility-gains", "volatility-table"} <= set(names)
        roc = pages.chart_spec(con, "volatility-roc", {"model": "toy@1"})
        assert roc["spec"] is not None
    finally:
        for module in [m for m in sys.modules if m.startswith("pipelines.kinds.toy")]:
            del sys.modules[module]
