"""Each named view of warehouse/sql/views on a small hand-made warehouse."""
from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from warehouse import Lake, connect

START_KEY = 0x463B96181691FC9C
START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"
KINGS_FEN = "8/8/8/8/8/8/8/K6k w - -"
T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def lake(home: Path) -> Lake:
    return Lake(home)


def test_label_coverage_counts_positions_per_engine_and_depth(lake: Lake) -> None:
    lake.write("engines", [{"engine_id": "sf", "name": "Stockfish", "version": "15.1"}])
    lake.write("labels", [
        {"position_key": key, "engine_id": engine, "depth": depth,
         "labelled_at": T0 + timedelta(minutes=key)}
        for key, engine, depth in [(1, "sf", 5), (2, "sf", 5), (1, "sf", 6), (1, "x", 5)]])
    rows = connect(lake).execute("select engine_id, engine_name, depth, positions, "
                                 "last_labelled from label_coverage").fetchall()
    assert rows == [("sf", "Stockfish", 5, 2, T0 + timedelta(minutes=2)),
                    ("sf", "Stockfish", 6, 1, T0 + timedelta(minutes=1)),
                    ("x", None, 5, 1, T0 + timedelta(minutes=1))]


def rating(rating_id: str, source: str, player: str, rank: int, elo: float,
           at: datetime) -> dict[str, object]:
    return {"rating_id": rating_id, "source": source, "player": player, "rank": rank,
            "elo": elo, "computed_at": at}


def test_latest_ratings_keeps_the_newest_table_per_source(lake: Lake) -> None:
    """The newer rating run of a source wins whatever order the rows were written in; an
    older table of another source stays."""
    lake.write("ratings", [rating("new", "t1", "a", 1, 2100.0, T0 + timedelta(hours=1)),
                           rating("new", "t1", "b", 2, 1900.0, T0 + timedelta(hours=1))])
    lake.write("ratings", [rating("old", "t1", "a", 2, 1800.0, T0),
                           rating("old", "t1", "b", 1, 2200.0, T0),
                           rating("other", "games.pgn", "c", 1, 1500.0, T0)])
    rows = connect(lake).execute("select source, rank, player, elo from latest_ratings"
                                 ).fetchall()
    assert rows == [("games.pgn", 1, "c", 1500.0), ("t1", 1, "a", 2100.0),
                    ("t1", 2, "b", 1900.0)]


def game(key: str, white: str, black: str, result: str) -> dict[str, object]:
    score = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[result]
    return {"tournament_id": "t", "game_key": key, "white": white, "black": black,
            "result": result, "white_score": score}


def test_tournament_standings_sum_points_from_both_colours(lake: Lake) -> None:
    lake.write("tournament_games", [game("0:0:0", "a", "b", "1-0"),
                                    game("0:0:1", "b", "a", "1/2-1/2"),
                                    game("0:1:0", "a", "b", "0-1")])
    rows = connect(lake).execute("select player, games, points, score_pct, draws "
                                 "from tournament_standings order by player").fetchall()
    assert rows == [("a", 3, 1.5, 50.0, 1), ("b", 3, 1.5, 50.0, 1)]
    lake.write("tournament_games", [game("0:1:1", "b", "a", "0-1")])
    rows = connect(lake).execute("select player, points, score_pct from tournament_standings"
                                 ).fetchall()
    assert rows == [("a", 2.5, 62.5), ("b", 1.5, 37.5)]


def test_tournament_status_shows_the_latest_event_and_finished_games(lake: Lake) -> None:
    lake.write("tournaments", [{"tournament_id": "t", "event": "gauntlet", "format": "gauntlet",
                                "planned_games": 4}])
    lake.write("tournament_events", [
        {"tournament_id": "t", "event": "finished", "recorded_at": T0 + timedelta(hours=2)},
        {"tournament_id": "t", "event": "started", "recorded_at": T0}])
    lake.write("tournament_games", [game("0:0:0", "a", "b", "1-0")])
    rows = connect(lake).execute("select tournament_id, name, planned_games, games_done, "
                                 "status, updated_at from tournament_status").fetchall()
    assert rows == [("t", "gauntlet", 4, 1, "finished", T0 + timedelta(hours=2))]


def test_volatility_examples_apply_beta_18_exactly_at_the_boundary(lake: Lake) -> None:
    """Paper 003 formula 3.1: stable iff |V7 - V6| < 18 cp, so 17 is stable and 18 is not;
    delta_value = V6 - V5; pv_change compares the depth 5 and 6 moves; a mate is 10000 cp;
    a position lacking a depth is left out."""
    lake.write("positions", [{"position_key": key, "fen": fen} for key, fen in
                             [(START_KEY, START_FEN), (7, KINGS_FEN), (8, KINGS_FEN),
                              (9, KINGS_FEN)]])
    rows = [(START_KEY, 5, 20, None, "e2e4"), (START_KEY, 6, 35, None, "d2d4"),
            (START_KEY, 7, 52, None, "d2d4"),                                # 17: stable
            (8, 5, 10, None, "a1b1"), (8, 6, -10, None, "a1b1"), (8, 7, 8, None, "a1b1"),  # 18
            (7, 5, 0, None, "a1b1"), (7, 6, 0, None, "a1b1"), (7, 7, None, 3, "a1b2"),
            (9, 5, 0, None, "a1b1"), (9, 6, 0, None, "a1b1")]                # no depth 7
    lake.write("labels", [{"position_key": k, "engine_id": "sf", "depth": d, "score_cp": cp,
                           "score_mate": mate, "best_move": move}
                          for k, d, cp, mate, move in rows])
    got = connect(lake).execute(
        "select position_key, fen, delta_value, pv_change, change_67, stable "
        "from volatility_examples order by position_key").fetchall()
    assert got == [(7, KINGS_FEN, 0, False, 10000, False),
                   (8, KINGS_FEN, -20, False, 18, False),
                   (START_KEY, START_FEN, 15, True, 17, True)]


def evaluated(event_id: str, model_id: str, tournament: str, elo: float,
              at: datetime) -> dict[str, object]:
    payload = {"against": "alphabeta:eval=hce", "match_tournament": tournament, "elo": elo,
               "elo_lower": elo - 30, "elo_upper": elo + 30, "games": 400,
               "sprt_decision": "H1"}
    return {"event_id": event_id, "model_id": model_id, "event": "evaluated",
            "payload": json.dumps(payload), "recorded_at": at}


def test_model_evaluations_keep_each_search_limit_apart(lake: Lake) -> None:
    """A net evaluated at 2+0.02, then at 5,000 nodes, then at 10+0.1, then at 2+0.02 again
    keeps three rows, one per limit, the newest of each; the limits read as a person writes
    them. (A view that kept only the newest evaluation per baseline put a 10+0.1 match on a
    curve measured at 5,000 nodes.)"""
    lake.write("tournaments", [
        {"tournament_id": "fast", "time_control": "2+0.02"},
        {"tournament_id": "nodes", "time_control": "-", "nodes": 5000},
        {"tournament_id": "long", "time_control": "10+0.1"},
        {"tournament_id": "fast2", "time_control": "2+0.02"},
        {"tournament_id": "deep", "depth": 8}])
    lake.write("model_events", [
        evaluated("e1", "nnue@1", "fast", 118.1, T0),
        evaluated("e2", "nnue@1", "nodes", 121.1, T0 + timedelta(hours=1)),
        evaluated("e3", "nnue@1", "long", 95.0, T0 + timedelta(hours=2)),
        evaluated("e4", "nnue@1", "fast2", 110.0, T0 + timedelta(hours=3)),
        evaluated("e5", "nnue@2", "deep", -20.0, T0),
        {"event_id": "e6", "model_id": "nnue@2", "event": "promoted", "payload": "{}",
         "recorded_at": T0}])
    rows = connect(lake).execute(
        "select model_id, kind, version, limits, elo, elo_lower, sprt, match_tournament "
        "from model_evaluations order by model_id, limits").fetchall()
    assert rows == [("nnue@1", "nnue", 1, "10+0.1", 95.0, 65.0, "H1", "long"),
                    ("nnue@1", "nnue", 1, "2+0.02", 110.0, 80.0, "H1", "fast2"),
                    ("nnue@1", "nnue", 1, "5000 nodes", 121.1, 91.1, "H1", "nodes"),
                    ("nnue@2", "nnue", 2, "depth 8", -20.0, -50.0, "H1", "deep")]
