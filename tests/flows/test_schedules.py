"""The scheduled flows on the session's Prefect test server, in this process (issue 33 §5: the
default-run counterpart of the slow served retrain-then-evaluate test in test_serve.py, and
issue 32 §2: a run says what it did, or why it did nothing, in its final state and artifact).

nnue@1 is trained on selfplay.pgn's depth-2 Stockfish labels; the retrain flow is not due
until the Capablanca game's new labels arrive, then trains nnue@2 from nnue@1's config; the
evaluate flow evaluates every version without an ``evaluated`` event (nnue@2) and records it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import chess.pgn
import chess.polyglot
import pytest

from warehouse import Lake, connect

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
CAPABLANCA = FIXTURES / "pgn" / "capablanca_latin1.pgn"
EVALUATE_TINY = {"against": "alphabeta:eval=hce-simple,hash=1", "sprt": [0, 200],
                 "sprt_alpha": 0.2, "sprt_beta": 0.2, "max_games": 2, "ladder": "",
                 "nodes": 500, "max_plies": 80, "concurrency": 1,
                 "openings": str(FIXTURES / "openings" / "two_positions.epd")}


def positions_of(path: Path, encoding: str = "utf-8") -> set[int]:
    """The position keys (polyglot Zobrist hashes) of a PGN file's games, by python-chess."""
    seen = set()
    with open(path, encoding=encoding) as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            board = game.board()
            seen.add(chess.polyglot.zobrist_hash(board))
            for move in game.mainline_moves():
                board.push(move)
                seen.add(chess.polyglot.zobrist_hash(board))
    return seen


def artifacts_of(flow_run_id: Any) -> list[str]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    with get_client(sync_client=True) as client:
        found = client.read_artifacts(artifact_filter=ArtifactFilter(
            flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id])))
    return [str(a.data) for a in found]


def test_retrain_when_due_then_the_scheduled_evaluation(
        home: Path, stockfish_path: str, prefect_harness: None) -> None:
    from flows.ingest import INGEST, IngestJob
    from flows.label import LABEL
    from flows.schedules import scheduled_evaluate, scheduled_retrain
    from flows.step import LocalRunner, run_step
    from flows.train import TRAIN, TrainJob
    from pipelines.ingest import IngestConfig
    from pipelines.kinds.nnue.config import NnueConfig
    from pipelines.label import LabelConfig
    from pipelines.models.registry import record_event, resolve_model
    from pipelines.train.config import preset

    lake = Lake(home)
    label = LabelConfig.tiny(depths=(2,), limit=None, batch_size=400, workers=1)
    run_step(INGEST, IngestJob((FIXTURES / "label_engines" / "selfplay.pgn",), IngestConfig.tiny()), lake)
    run_step(LABEL, label, lake)
    LocalRunner(show_progress=False).run(
        TRAIN, TrainJob("nnue", preset(NnueConfig, "tiny", name="nnue-tiny", epochs=1,
                                       check_positions=20)), Lake(home))
    record_event(lake, "nnue@1", "evaluated", {"elo": 0})   # evaluated before: not again

    waiting = scheduled_retrain(str(home), "nnue", 10_000, return_state=True)
    assert waiting.is_completed()
    assert waiting.message.startswith("retrain nnue: not due: 0 of 10,000 new labels")
    assert resolve_model(lake, "nnue@latest").model_id == "nnue@1"
    assert any("| due | False |" in a for a in artifacts_of(waiting.state_details.flow_run_id))

    run_step(INGEST, IngestJob((CAPABLANCA,), IngestConfig.tiny()), lake)
    new = run_step(LABEL, label, lake).positions
    assert new == len(positions_of(CAPABLANCA, "latin-1")
                      - positions_of(FIXTURES / "label_engines" / "selfplay.pgn"))
    trained = scheduled_retrain(str(home), "nnue", new, return_state=True)
    assert trained.message.startswith(
        f"retrain nnue: trained nnue@2 from nnue@1's config ({new} new labels, {new} needed")
    model = resolve_model(lake, "nnue@latest")
    assert (model.model_id, model.name, model.config["epochs"]) == ("nnue@2", "nnue-tiny", 1)
    assert any("| trained | nnue@2 |" in a
               for a in artifacts_of(trained.state_details.flow_run_id))

    evaluated = scheduled_evaluate(str(home), EVALUATE_TINY, return_state=True)
    assert evaluated.is_completed() and evaluated.message.startswith("nnue@2: ")
    events = connect(lake).execute(
        "select model_id, event from model_events where event = 'evaluated' "
        "order by model_id").fetchall()
    assert events == [("nnue@1", "evaluated"), ("nnue@2", "evaluated")]
    games = connect(lake).execute("select count(*) from tournament_games").fetchone()
    assert games is not None and 1 <= games[0] <= EVALUATE_TINY["max_games"]
    assert resolve_model(lake, "nnue@2").status in ("evaluated", "promoted")
    nothing = scheduled_evaluate(str(home), EVALUATE_TINY, return_state=True)
    assert nothing.message == "evaluate: no model version waits for an evaluation"


def test_a_version_that_fails_its_evaluation_fails_the_run_with_its_reason(
        home: Path, prefect_harness: None) -> None:
    """A registered version whose net is missing: the run ends Failed naming the version and
    the reason (the later versions are still tried)."""
    import datetime as dt
    import json

    from flows.schedules import scheduled_evaluate

    lake = Lake(home)
    lake.write("models", [{
        "model_id": "nnue@1", "kind": "nnue", "name": "nnue-tiny", "version": 1,
        "config": json.dumps({"name": "nnue-tiny"}), "artifact_path": str(home / "gone.nnue"),
        "artifact_sha256": "0" * 64, "created_at": dt.datetime.now(dt.UTC)}])
    state = scheduled_evaluate(str(home), EVALUATE_TINY, return_state=True)
    assert state.is_failed()
    assert "evaluate: 1 of 1 versions failed: nnue@1: " in str(state.message)
    with pytest.raises(ValueError, match="nnue@1"):   # its input: not tried again
        state.result()


def test_the_served_make_net_flow_makes_and_evaluates_a_net(
        home: Path, stockfish_path: str, prefect_harness: None) -> None:
    """``chesslab-make-net``, the served make-net job (issue 47 §3), run in this process: a
    tiny budget's data, net and evaluation, its result the run's Completed message; options
    the deployment does not take are refused before anything runs."""
    from flows.schedules import folded_options, scheduled_make_net
    from pipelines.ops import OpsConfigError

    options = {"hours": 0.04, "round_minutes": 0.4, "depth": 2, "batch_games": 4, "epochs": 1,
               "hidden": 32, "batch_size": 1024, "eval_games": 2, "tc": "1+0.01"}
    state = scheduled_make_net(str(home), options, return_state=True)
    assert state.is_completed(), state.message
    assert state.message.startswith("make-net make-net-") and "model nnue@1" in state.message
    assert "nnue@1 vs alphabeta:eval=hce" in state.message
    assert connect(Lake(home)).execute(
        "select count(*) from net_run_events where stage = 'run' and event = 'finished'"
    ).fetchone() == (1,)
    with pytest.raises(OpsConfigError, match="make-net: unknown option 'hourz'"):
        scheduled_make_net.fn(str(home), {"hourz": 1})

    class Deployment:
        parameter_openapi_schema = {"properties": {"home": {}, "options": {}}}
        parameters = {"home": str(home), "options": options}

    assert folded_options(Deployment(), {"hours": 8})["options"] == {**options, "hours": 8}


def test_a_run_is_tried_again_unless_its_input_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 49 §4: a served refresh of a folder that does not exist was retried twice, 60 s
    apart, by Prefect's flow retries. Its own retries try again after a failure that may
    pass, and raise a failure of its input at once."""
    import flows.schedules as schedules
    from pipelines.ingest import IngestError

    monkeypatch.setattr(schedules, "RETRIES", 2)
    monkeypatch.setattr(schedules, "RETRY_DELAY_S", 0)
    calls: list[str] = []

    def failing(error: Exception) -> Any:
        def body() -> Any:
            calls.append(type(error).__name__)
            raise error
        return body

    with pytest.raises(IngestError):
        schedules.with_retries("refresh", failing(IngestError("no such folder '/in'")))
    assert calls == ["IngestError"]
    calls.clear()
    with pytest.raises(RuntimeError):
        schedules.with_retries("refresh", failing(RuntimeError("the engine died")))
    assert calls == ["RuntimeError"] * 3
    attempts = iter([RuntimeError("busy"), None])

    def flaky() -> Any:
        if (error := next(attempts)) is not None:
            raise error
        return "done"

    assert schedules.with_retries("refresh", flaky) == "done"
