"""The Prefect ``evaluate`` flow: plays a tiny tournament and records its ratings."""
from __future__ import annotations

from pathlib import Path

from flows.evaluate import evaluate
from flows.runtime import run_flow
from pipelines.tournament import TournamentConfig
from warehouse import connect


def test_evaluate_flow_plays_rates_and_resumes(home: Path, stockfish_path: str,
                                               prefect_harness: None) -> None:
    """A gauntlet of full Stockfish against two ladder rungs: four games, ratings anchored at
    the rungs' UCI_Elo; running the flow again plays nothing and rates the same games."""
    config = TournamentConfig.tiny(engines=("stockfish?Threads=1&Hash=16#sf", "stockfish@1350",
                                            "stockfish@1500"), format="gauntlet")
    summary = run_flow(evaluate, workers=1, config=config, home=str(home))
    assert (summary.planned, summary.played) == (4, 4)
    con = connect(home)
    ratings = dict(con.execute("select player, elo from ratings").fetchall())
    assert ratings["stockfish@1350"] == 1350 and ratings["stockfish@1500"] == 1500
    assert set(ratings) == {"sf", "stockfish@1350", "stockfish@1500"}
    again = run_flow(evaluate, workers=1, config=config, home=str(home))
    assert (again.already_done, again.played) == (4, 0)
    assert con.execute("select count(*) from tournament_games").fetchone() == (4,)
