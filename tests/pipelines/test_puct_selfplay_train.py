"""``chesslab selfplay-train --preset tiny`` end to end on the CPU (issue 13): self-play
samples in the warehouse (visit counts of the search, outcome signs from the mover's view,
the material target of paper 002), one policy_value version per round with the value head's
decisive share among its metrics, a rerun that replays nothing, and the versions played by
the PUCT engine through the registry."""
from __future__ import annotations

import json
from pathlib import Path

import chess
import pytest

from engines.registry import own_identity, parse_engine
from flows.cli import main as cli_main
from flows.selfplay_train import selfplay_train
from flows.step import LocalRunner
from pipelines.models.deploy import resolve_player
from pipelines.puct.config import SelfplayTrainError, preset_config
from pipelines.puct.selfplay import material_target
from warehouse import Lake, connect


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Lake, str]:
    lake = Lake(tmp_path_factory.mktemp("puct") / "home")
    config = preset_config("tiny", rounds=1)
    summaries = selfplay_train(LocalRunner(show_progress=False), config, lake)
    assert [s.model for s in summaries] == ["policy_value@1"]
    return lake, config.run_id


def test_samples_record_the_search(trained: tuple[Lake, str]) -> None:
    lake, run_id = trained
    con = connect(lake)
    games = con.sql("select game, result, samples from selfplay_games").fetchall()
    assert len(games) == 4
    rows = con.sql("select fen, moves, visits, played, outcome, material, game "
                   "from selfplay_samples").fetchall()
    assert len(rows) == sum(g[2] for g in games)
    results = {g[0]: g[1] for g in games}
    for fen, moves, visits, played, outcome, material, game in rows:
        board = chess.Board(fen)
        assert sorted(moves) == sorted(m.uci() for m in board.legal_moves)
        assert played in moves and sum(visits) >= 16       # tiny: 16 simulations a move
        white = {"1-0": 1.0, "0-1": -1.0}.get(results[game], 0.0)
        assert outcome == (white if board.turn == chess.WHITE else -white)
        assert material == pytest.approx(material_target(board, 10.0))


def test_rerun_replays_nothing_and_adds_a_round(trained: tuple[Lake, str],
                                                tmp_path: Path) -> None:
    lake, run_id = trained
    con = connect(lake)
    before = con.sql("select count(*), max(recorded_at) from selfplay_samples "
                     "where round = 1").fetchall()
    summaries = selfplay_train(LocalRunner(show_progress=False),
                               preset_config("tiny", rounds=2), lake)
    assert [s.model for s in summaries] == ["policy_value@1", "policy_value@2"]
    con = connect(lake)
    assert con.sql("select count(*), max(recorded_at) from selfplay_samples "
                   "where round = 1").fetchall() == before
    assert con.sql("select distinct model_id from selfplay_samples where round = 2"
                   ).fetchall() == [("policy_value@1",)]
    extra = json.loads(con.sql("select extra from model_metrics where model_id = "
                               "'policy_value@2'").fetchall()[0][0])
    assert 0 <= extra["decisive_share"] <= 1 and "policy_accuracy" in extra
    config = json.loads(con.sql("select config from models where model_id = "
                                "'policy_value@2'").fetchall()[0][0])
    assert config["run_id"] == run_id and config["round"] == 2
    assert config["init_from"].endswith("policy_value/1/policy_value.pt")


def test_versions_play_through_the_registry(trained: tuple[Lake, str]) -> None:
    lake, _ = trained
    spec = resolve_player(lake, parse_engine("puct:simulations=0,model=policy_value@latest"))
    identity = own_identity(spec)
    assert identity.model and identity.model.startswith("policy_value@")
    assert str(identity.options["Simulations"]) == "0"


def test_bad_options_are_named(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SelfplayTrainError, match="games"):
        preset_config("tiny", games=0)
    assert cli_main(["selfplay-train", "--preset", "tiny", "--formula", "uct",
                     "--no-prefect"]) != 0


def test_search_weight_blends_the_roots_q_into_the_value_target(
        trained: tuple[Lake, str]) -> None:
    from pipelines.kinds.policy_value.config import PolicyValueConfig
    from pipelines.kinds.policy_value.module import encode, window_rows

    lake, run_id = trained
    rows = window_rows(lake, PolicyValueConfig(run_id=run_id, round=1, window=1))
    plain = encode(rows, PolicyValueConfig(value_target="material"))
    blend = encode(rows, PolicyValueConfig(value_target="material", search_weight=0.25))
    q = [r["search_value"] for r in rows]
    assert blend.value == pytest.approx(
        [0.75 * m + 0.25 * v for m, v in zip(plain.value, q, strict=True)], abs=1e-6)
    assert max(abs(v) for v in q) <= 1 and len(set(q)) > 1


def test_run_ids_stay_stable_when_options_are_added() -> None:
    # ids of runs made before search_weight existed: a rerun must find them to resume
    config = preset_config("small", rounds=14, games=40, simulations=64,
                           value_target="material")
    assert config.run_id == "pv-2acb3931db"
    assert preset_config("small", value_target="material", search_weight=0.5).run_id \
        != preset_config("small", value_target="material").run_id
    with pytest.raises(SelfplayTrainError, match="search_weight"):
        preset_config("tiny", search_weight=1.5)


def test_tablebases_end_self_play_games_with_their_verdict() -> None:
    from pipelines.puct.selfplay import tables, termination

    config = preset_config("tiny", tablebases="gaviota")
    assert config.run_id != preset_config("tiny").run_id
    adjudicator = tables(config)
    assert adjudicator is not None and tables(preset_config("tiny")) is None
    won = chess.Board("8/8/8/8/8/2k5/8/K1Q5 b - - 0 1")         # KQK, Black to move
    assert termination(won, 60, 10, adjudicator) == ("1-0", "tablebase")
    assert termination(won, 60, 10) is None
    lost = chess.Board("8/8/8/8/8/2k5/8/K1q5 w - - 0 1")        # KQK, White to move
    assert termination(lost, 60, 10, adjudicator) == ("0-1", "tablebase")
    assert termination(chess.Board("8/8/8/8/8/k7/p7/K7 w - - 0 1"), 60, 10,
                       adjudicator) == ("1/2-1/2", "stalemate")
    with pytest.raises(SelfplayTrainError, match="tablebases: folder '/no/such' not found"):
        preset_config("tiny", tablebases="/no/such")
