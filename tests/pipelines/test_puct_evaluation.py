"""Evaluating policy_value versions as the tool does (issue 13): ``chesslab evaluate
policy_value@N`` (search against the same checkpoint bare by default, the ``evaluated`` event
and no promotion from it; the scheduled evaluation's per-kind limit) and ``chesslab
checkpoints RUN_ID`` (a self-play run's versions in a round robin, rated by BayesElo in the
warehouse, resumable, with the value heads' decisive share)."""
from __future__ import annotations

import json

import pytest

from flows.checkpoints import checkpoints
from flows.cli import main
from flows.evaluate_model import evaluate_model
from flows.selfplay_train import selfplay_train
from flows.step import LocalRunner
from pipelines.evaluate import EvaluateConfig, plan_evaluation
from pipelines.ops import baseline_for, unevaluated_models
from pipelines.ops.config import parse_schedules
from pipelines.puct.checkpoints import CheckpointsConfig, CheckpointsError
from pipelines.puct.config import preset_config
from warehouse import Lake, connect


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Lake, str]:
    """Two tiny rounds: policy_value@1 and @2."""
    lake = Lake(tmp_path_factory.mktemp("pv-eval") / "home")
    config = preset_config("tiny", rounds=2)
    summaries = selfplay_train(LocalRunner(show_progress=False), config, lake)
    assert [s.model for s in summaries] == ["policy_value@1", "policy_value@2"]
    return lake, config.run_id


def test_evaluate_plays_search_against_the_bare_checkpoint(run: tuple[Lake, str]) -> None:
    lake, _ = run
    config = EvaluateConfig(model="policy_value@2", nodes=8, ladder="", max_games=4,
                            sprt=(0.0, 200.0), sprt_alpha=0.2, sprt_beta=0.2,
                            max_plies=40, concurrency=2)
    plan = plan_evaluation(lake, config)
    assert plan.baseline == "puct:simulations=0,model=policy_value@2" and plan.searches_itself
    assert plan.match.engines == ("puct:model=policy_value@2#policy_value@2", plan.baseline)
    evaluation = evaluate_model(LocalRunner(show_progress=False), config, lake)
    assert evaluation.games >= 2 and evaluation.against == plan.baseline
    events = connect(lake).execute(
        "select event, payload from model_events where model_id = 'policy_value@2' "
        "order by recorded_at").fetchall()
    names = [e for e, _ in events]
    assert "evaluated" in names and "promoted" not in names   # not by its own bare net
    payload = json.loads(events[names.index("evaluated")][1])
    assert payload["search_vs_bare"] is True and payload["games"] == evaluation.games
    # an explicit baseline is an ordinary evaluation
    other = plan_evaluation(lake, EvaluateConfig(model="policy_value@2", nodes=8, ladder="",
                                                 against="puct:model=policy_value@1"))
    assert not other.searches_itself


def test_scheduled_evaluation_takes_policy_value_versions(run: tuple[Lake, str]) -> None:
    lake, _ = run
    assert "policy_value@1" in unevaluated_models(lake)
    assert baseline_for(lake, "policy_value@1", None) is None       # the kind's own default
    schedules = parse_schedules({}, lake.home)
    assert schedules.evaluate.evaluate_config("policy_value@1").nodes == 128
    assert schedules.evaluate.evaluate_config("nnue@1").nodes == 20000
    given = parse_schedules({"evaluate": {"tc": "10+0.1", "policy_value": {"nodes": 32}}},
                            lake.home)
    assert given.evaluate.evaluate_config("policy_value@1").nodes == 32
    assert given.evaluate.evaluate_config("nnue@1").nodes is None


def test_checkpoints_round_robin(run: tuple[Lake, str], capsys: pytest.CaptureFixture[str]) \
        -> None:
    lake, run_id = run
    config = CheckpointsConfig(run_id=run_id, search_too=True, rounds=1, nodes=8,
                               max_plies=40, concurrency=2)
    report = checkpoints(LocalRunner(show_progress=False), config, lake)
    assert report.games == 12                       # 4 players, 6 pairings, 1 pair each
    rows = report.rows()
    assert [r["player"] for r in rows] == ["policy_value@1", "policy_value@1/bare",
                                           "policy_value@2", "policy_value@2/bare"]
    assert all(r["decisive_share"] is not None for r in rows)
    con = connect(lake)
    rated = dict(con.execute("select player, elo from ratings where tournament_id = ?",
                             [report.tournament_id]).fetchall())
    assert set(rated) == {r["player"] for r in rows}
    starts = con.execute("select distinct opening_fen from tournament_games where "
                         "tournament_id = ?", [report.tournament_id]).fetchall()
    assert len(starts) == 1                          # one endgame start a round
    played = con.execute("select count(*) from tournament_games").fetchone()
    assert main(["--home", str(lake.home), "checkpoints", run_id, "--search-too",
                 "--rounds", "1", "--nodes", "8", "--max-plies", "40", "--no-prefect"]) == 0
    out = capsys.readouterr().out
    assert report.tournament_id in out and "policy_value@2/bare" in out
    assert con.execute("select count(*) from tournament_games").fetchone() == played


def test_checkpoints_bad_input(run: tuple[Lake, str]) -> None:
    lake, run_id = run
    with pytest.raises(CheckpointsError, match="no policy_value version"):
        checkpoints(LocalRunner(show_progress=False), CheckpointsConfig(run_id="pv-none"),
                    lake)
    with pytest.raises(CheckpointsError, match="exclude"):
        CheckpointsConfig(run_id=run_id, search_too=True, bare_only=True)
