"""A small warehouse with something in every dashboard panel: Morphy's Opera game ingested and
labelled by Stockfish at depth 2 (real), and registry, rating, volatility, LMR, tournament and
SPRT rows written through the lake's tables with figures the tests look for."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from pipelines.ingest import IngestConfig, ingest_paths
from pipelines.label import LabelConfig, label_positions
from warehouse import Lake

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "label_engines"
T0 = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)
LOSSES = {"nnue@1": (0.3125, 0.25, 0.1875), "nnue@2": (0.28125, 0.1234)}
RATINGS = {"alphabeta": 41.0, "sunfish": -41.0}


@pytest.fixture(scope="session")
def dashboard_home(tmp_path_factory: pytest.TempPathFactory, stockfish_path: str) -> Path:
    lake = Lake(tmp_path_factory.mktemp("dashboard") / "home")
    ingest_paths(lake, [FIXTURES / "opera.pgn"], IngestConfig.tiny())
    label_positions(lake, LabelConfig.tiny(depths=(2,), limit=None, workers=1))
    lake.write("model_metrics", [
        {"model_id": model, "epoch": epoch, "step": epoch, "train_loss": loss,
         "val_loss": loss + 0.01, "recorded_at": T0}
        for model, losses in LOSSES.items() for epoch, loss in enumerate(losses)])
    lake.write("ratings", [
        {"rating_id": "r1", "tournament_id": "t1", "source": "t1", "player": name, "rank": rank,
         "elo": elo, "plus": 30.0, "minus": 25.0, "games": 10, "score": 5.0, "draws": 2,
         "computed_at": T0} for rank, (name, elo) in enumerate(RATINGS.items(), 1)])
    lake.write("tournament_games", [
        {"tournament_id": "t1", "game_key": f"0:0:{g}", "white": white, "black": black,
         "result": result, "white_score": score}
        for g, (white, black, result, score) in enumerate([
            ("alphabeta", "sunfish", "1-0", 1.0), ("sunfish", "alphabeta", "1/2-1/2", 0.5)])])
    lake.write("sprt_results", [{
        "sprt_id": "s1", "tournament_id": "t1", "model": "normalized", "elo0": 0.0,
        "elo1": 10.0, "llr": 1.625, "lower_bound": -2.94, "upper_bound": 2.94,
        "decision": "continue", "recorded_at": T0}])
    lake.write("model_events", [
        {"event_id": f"e{v}", "model_id": f"nnue@{v}", "event": "evaluated",
         "payload": json.dumps({"ladder_elo": elo, "ladder_plus": 40.0, "ladder_minus": 40.0,
                                "sprt_decision": "H1"}),
         "recorded_at": T0 + dt.timedelta(hours=v)} for v, elo in ((1, 1712.0), (2, 1788.0))])
    lake.write("volatility_roc", [
        {"model_id": "volatility@1", "point": i, "fpr": fpr, "tpr": tpr, "threshold": 1 - fpr}
        for i, (fpr, tpr) in enumerate([(0.0, 0.0), (0.1, 0.45), (0.5, 0.875), (1.0, 1.0)])])
    lake.write("volatility_gains", [
        {"model_id": "volatility@1", "percent": p, "stable_found": min(1.0, p / 60),
         "random": p / 100, "perfect": min(1.0, p / 23)} for p in (0, 25, 50, 75, 100)])
    lake.write("lmr_examples", [
        {"run_id": "lmr", "seq": i, "depth": depth, "move_no": move, "label_table": depth // 3}
        for i, (depth, move) in enumerate([(d, m) for d in (3, 6, 9) for m in (2, 8, 20)])])
    return lake.home
