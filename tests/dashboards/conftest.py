"""Two warehouses for the dashboard's tests.

``served_home``: made by the real commands, as a user would (``chesslab ingest``, ``label``,
two tiny ``train nnue`` runs, the second also ``--mlflow file://...``, ``evaluate nnue@1``
with a 4-game SPRT match and a one-rung Stockfish ladder): the browser tests open its pages.

``dashboard_home``: Morphy's Opera game ingested and labelled by Stockfish at depth 2 (real),
and registry, rating, volatility, LMR, policy-value, tournament and SPRT rows written through
the lake's tables with figures the chart tests look for (the kinds a tiny run cannot make
quickly).

``matches_home``: two matches of the default event ("chesslab tournament") between the same
two long engine specs, 1,000 games each, written through the lake's tables (what a long SPRT
leaves, without playing it), and no ladder rating."""
from __future__ import annotations

import datetime as dt
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from flows.cli import main
from flows.ingest import INGEST, IngestJob
from flows.label import LABEL
from flows.step import run_step
from pipelines.ingest import IngestConfig
from pipelines.label import LabelConfig
from pipelines.train.tracking import ALLOW_FILE_STORE
from warehouse import Lake

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "label_engines"
OPENINGS = Path(__file__).resolve().parents[1] / "fixtures" / "openings" / "two_positions.epd"
T0 = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)
LOSSES = {"nnue@1": (0.3125, 0.25, 0.1875), "nnue@2": (0.28125, 0.1234)}
RATINGS = {"alphabeta": 41.0, "sunfish": -41.0}
#: MLflow (``mlflow-skinny``, in the test extra) is installed: ``served_home`` logs to it.
MLFLOW = importlib.util.find_spec("mlflow") is not None


@pytest.fixture(scope="session")
def dashboard_home(tmp_path_factory: pytest.TempPathFactory, stockfish_path: str) -> Path:
    lake = Lake(tmp_path_factory.mktemp("dashboard") / "home")
    run_step(INGEST, IngestJob((FIXTURES / "opera.pgn",), IngestConfig.tiny()), lake)
    run_step(LABEL, LabelConfig.tiny(depths=(2,), limit=None, workers=1), lake)
    lake.write("model_metrics", [
        {"model_id": model, "epoch": epoch, "step": epoch, "train_loss": loss,
         "val_loss": loss + 0.01, "recorded_at": T0}
        for model, losses in LOSSES.items() for epoch, loss in enumerate(losses)])
    lake.write("ratings", [
        {"rating_id": "r1", "tournament_id": "t1", "source": "t1", "player": name, "rank": rank,
         "elo": elo, "plus": 30.0, "minus": 25.0, "games": 10, "score": 5.0, "draws": 2,
         "computed_at": T0} for rank, (name, elo) in enumerate(RATINGS.items(), 1)])
    lake.write("tournament_games", [
        {"tournament_id": "t1", "game_key": f"0:0:{g}", "pairing": 0, "round": 0,
         "game_in_pair": g, "white": white, "black": black, "result": result,
         "white_score": score, "pgn": f'[White "{white}"]\n[Black "{black}"]\n\n{result}',
         "finished_at": T0 + dt.timedelta(minutes=g)}
        for g, (white, black, result, score) in enumerate([
            ("alphabeta", "sunfish", "1-0", 1.0), ("sunfish", "alphabeta", "1/2-1/2", 0.5)])])
    lake.write("tournaments", [{
        "tournament_id": "t1", "event": "sunfish gauntlet", "format": "round-robin",
        "rounds": 1, "planned_games": 2, "config": json.dumps({
            "sprt_elo0": 0.0, "sprt_elo1": 10.0, "sprt_alpha": 0.05, "sprt_beta": 0.05,
            "sprt_model": "normalized"}), "created_at": T0}])
    lake.write("tournament_events", [{
        "tournament_id": "t1", "event": "finished", "games_done": 2, "planned_games": 2,
        "detail": "", "recorded_at": T0}])
    lake.write("sprt_results", [{
        "sprt_id": "s1", "tournament_id": "t1", "model": "normalized", "elo0": 0.0,
        "elo1": 10.0, "llr": 1.625, "lower_bound": -2.94, "upper_bound": 2.94,
        "decision": "continue", "recorded_at": T0}])
    lake.write("model_events", [
        {"event_id": f"e{v}", "model_id": f"nnue@{v}", "event": "evaluated",
         "payload": json.dumps({"ladder_elo": elo, "ladder_plus": 40.0, "ladder_minus": 40.0,
                                "sprt_decision": "H1", "against": "alphabeta:eval=hce",
                                "elo": match, "elo_lower": match - 60.0,
                                "elo_upper": match + 55.0, "games": 120}),
         "recorded_at": T0 + dt.timedelta(hours=v)}
        for v, elo, match in ((1, 1712.0, -187.0), (2, 1788.0, -98.5))])
    lake.write("model_datasets", [
        {"model_id": f"nnue@{v}", "view": "nnue_examples", "query": "nnue_dataset",
         "parameters": "{}", "label_engine_id": "stockfish", "label_depths": [6],
         "table_versions": "{}", "train_rows": rows, "validation_rows": rows // 20,
         "position_keys_hash": "00", "recorded_at": T0} for v, rows in ((1, 97131),
                                                                       (2, 193882))])
    lake.write("volatility_roc", [
        {"model_id": "volatility@1", "point": i, "fpr": fpr, "tpr": tpr, "threshold": 1 - fpr}
        for i, (fpr, tpr) in enumerate([(0.0, 0.0), (0.1, 0.45), (0.5, 0.875), (1.0, 1.0)])])
    lake.write("volatility_gains", [
        {"model_id": "volatility@1", "percent": p, "stable_found": min(1.0, p / 60),
         "random": p / 100, "perfect": min(1.0, p / 23)} for p in (0, 25, 50, 75, 100)])
    lake.write("models", [
        {"model_id": m, "kind": m.split("@")[0], "name": m.split("@")[0] + "-tiny", "version": 1,
         "config": json.dumps(config), "artifact_path": f"models/{m}", "artifact_sha256": "ab",
         "created_at": T0}
        for m, config in (("volatility@1", {"epochs": 2}), ("lmr@1", {"label": "table"}),
                          ("policy_value@1", {"run_id": "sp", "round": 1}),
                          ("policy_value@2", {"run_id": "sp", "round": 2}))])
    lake.write("model_metrics", [
        {"model_id": f"policy_value@{r}", "epoch": 0, "step": 1, "train_loss": 1.0,
         "val_loss": 1.0, "extra": json.dumps({"decisive_share": share,
                                               "decisive_target_share": 0.5}),
         "recorded_at": T0} for r, share in ((1, 0.375), (2, 0.125))])
    lake.write("lmr_fits", [
        {"model_id": "lmr@1", "formula": "a + b*ln(d)*ln(m)", "terms": ["1", "ln(d)*ln(m)"],
         "coefficients": [0.5, 0.25], "r2": 0.4375, "paper_coefficients": [0.6, 0.3],
         "paper_r2": 0.5, "label": "table", "rows": 9, "fitted_at": T0}])
    lake.write("lmr_examples", [
        {"run_id": "lmr", "seq": i, "depth": depth, "move_no": move, "label_table": depth // 3}
        for i, (depth, move) in enumerate([(d, m) for d in (3, 6, 9) for m in (2, 8, 20)])])
    return lake.home


LONG_NAMES = ("alphabeta:eval=hce,hash=16,lmr=table", "alphabeta:eval=hce-simple,hash=16,lmr=none")
MATCH_GAMES = 1000


def match_rows(tournament: str, nodes: int, started: dt.datetime) -> dict[str, list[dict[str,
                                                                                   Any]]]:
    """A finished 1,000-game match of the default event between ``LONG_NAMES``: the first
    player wins three games of five, the rest are draws."""
    first, second = LONG_NAMES
    games = [{"tournament_id": tournament, "game_key": f"0:{g // 2}:{g % 2}", "pairing": 0,
              "round": g // 2, "game_in_pair": g % 2,
              "white": first if g % 2 == 0 else second, "black": second if g % 2 == 0 else first,
              "result": result, "white_score": score, "plies": 60 + g % 7, "duration_s": 1.5,
              "pgn": f'[Event "chesslab tournament"]\n\n{result}',
              "finished_at": started + dt.timedelta(seconds=10 * g)}
             for g in range(MATCH_GAMES)
             for won in [g % 5 < 3]
             for result, score in [(("1-0", 1.0) if g % 2 == 0 else ("0-1", 0.0)) if won
                                   else ("1/2-1/2", 0.5)]]
    return {
        "tournaments": [{"tournament_id": tournament, "event": "chesslab tournament",
                         "format": "round-robin", "rounds": MATCH_GAMES // 2,
                         "planned_games": MATCH_GAMES, "nodes": nodes, "config": "{}",
                         "created_at": started}],
        "tournament_players": [{"tournament_id": tournament, "player": p, "kind": "own",
                                "protocol": "uci"} for p in LONG_NAMES],
        "tournament_games": games,
        "tournament_events": [{"tournament_id": tournament, "event": "finished",
                               "games_done": MATCH_GAMES, "planned_games": MATCH_GAMES,
                               "detail": "", "recorded_at": games[-1]["finished_at"]}]}


@pytest.fixture(scope="session")
def matches_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    lake = Lake(tmp_path_factory.mktemp("matches") / "home")
    for tournament, nodes, hour in (("m200", 200, 9), ("m400", 400, 14)):
        for table, found in match_rows(tournament, nodes, T0.replace(hour=hour)).items():
            lake.write(table, found)
    return lake.home


def mlflow_store(home: Path) -> Path:
    """The MLflow file store ``served_home``'s nnue@2 run is logged to (``--mlflow file://``)."""
    return home.parent / "mlruns"


@pytest.fixture(scope="session")
def served_mlflow(served_home: Path) -> str:
    """The tracking URI of the MLflow file store ``served_home``'s nnue@2 run is logged to."""
    return mlflow_store(served_home).as_uri()


def cli(home: Path, *args: str) -> None:
    assert main(["--home", str(home), *args]) == 0, args


@pytest.fixture(scope="session")
def served_home(tmp_path_factory: pytest.TempPathFactory, stockfish_path: str) -> Path:
    """A warehouse made by chesslab's own commands (about a minute): selfplay.pgn ingested and
    labelled at depths 3 and 4 (one search: the same counts), nnue@1 (3 epochs) and nnue@2 (2 epochs, another seed and rate)
    trained by the tiny preset (nnue@2 also logged to an MLflow file store beside the home,
    :func:`mlflow_store`, when MLflow is installed), and nnue@1 evaluated: a 4-game SPRT match
    against the HCE at 300 nodes and a 2-game ladder against Stockfish at UCI_Elo 1350 (one
    rung: one point)."""
    home = tmp_path_factory.mktemp("served") / "home"
    cli(home, "ingest", str(FIXTURES / "selfplay.pgn"), "--no-prefect")
    cli(home, "label", "--depths", "3,4", "--workers", "2", "--no-prefect")
    cli(home, "train", "nnue", "--preset", "tiny", "--epochs", "3", "--no-prefect",
        "--no-progress")
    with pytest.MonkeyPatch.context() as env:    # chesslab itself opts in to the file store
        env.delenv(ALLOW_FILE_STORE, raising=False)
        cli(home, "train", "nnue", "--preset", "tiny", "--epochs", "2", "--seed", "7",
            "--learning-rate", "0.003", "--name", "nnue-fast", "--no-prefect", "--no-progress",
            *(["--mlflow", mlflow_store(home).as_uri()] if MLFLOW else []))
    cli(home, "evaluate", "nnue@1", "--against", "alphabeta:eval=hce,hash=4", "--nodes", "300",
        "--max-games", "4", "--ladder", "1350", "--ladder-rounds", "1", "--openings",
        str(OPENINGS), "--no-prefect")
    return home
