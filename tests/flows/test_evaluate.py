"""The ``evaluate`` composition on both runners and the ``tournament``/``pgn``/``ratings``/
``sprt`` commands."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from flows.cli import main
from flows.evaluate import evaluate
from flows.step import LocalRunner
from pipelines.tournament import TournamentConfig
from warehouse import Lake, connect


def test_evaluate_plays_rates_and_resumes(home: Path, stockfish_path: str,
                                          runner: LocalRunner) -> None:
    """A gauntlet of full Stockfish against two ladder rungs: four games, ratings anchored at
    the rungs' UCI_Elo; running the flow again plays nothing and rates the same games."""
    config = TournamentConfig.tiny(engines=("stockfish?Threads=1&Hash=16#sf", "stockfish@1350",
                                            "stockfish@1500"), format="gauntlet")
    result = evaluate(runner, config, Lake(home))
    summary = result.tournament
    assert result.ratings is not None and len(result.ratings.rows) == 3
    assert (summary.planned, summary.played) == (4, 4)
    con = connect(home)
    ratings = dict(con.execute("select player, elo from ratings").fetchall())
    assert ratings["stockfish@1350"] == 1350 and ratings["stockfish@1500"] == 1500
    assert set(ratings) == {"sf", "stockfish@1350", "stockfish@1500"}
    again = evaluate(runner, config, Lake(home)).tournament
    assert (again.already_done, again.played) == (4, 0)
    assert con.execute("select count(*) from tournament_games").fetchone() == (4,)


def test_cli_tournament_pgn_ratings_and_sprt(home: Path, stockfish_path: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """``chesslab tournament --no-prefect`` then ``pgn``, ``ratings --pgn --los --pair`` and
    ``sprt`` on its games and on counts; bad input exits 2 with the value quoted."""
    sf = "stockfish?Threads=1&Hash=16"
    assert main(["--home", str(home), "tournament", f"{sf}#a", f"{sf}#b", "--nodes", "1500",
                 "--no-prefect", "--no-progress", "--draw-move-number", "20"]) == 0
    out = capsys.readouterr().out
    tournament_id = re.search(r"tournament (\w+): finished, 2/2 games", out).group(1)
    pgn = tmp_path / "games.pgn"
    assert main(["--home", str(home), "pgn", "--tournament", tournament_id, "-o",
                 str(pgn)]) == 0
    assert pgn.read_text().count("[Event ") == 2
    capsys.readouterr()
    assert main(["--home", str(home), "ratings", "--pgn", str(pgn), "--los", "--pair",
                 "a,b", "--anchor", "a=1000"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:3] == ["Rank", "Name", "Elo"]
    assert re.search(r"a vs b: \+\d+ =\d+ -\d+", out)
    assert main(["--home", str(home), "sprt", "--tournament", tournament_id]) == 0
    out = capsys.readouterr().out
    assert "game pairs LL,LD,DD+WL,WD,WW" in out
    assert "SPRT elo0=0 elo1=2 alpha=0.05 beta=0.05 (normalized Elo): LLR " in out  # issue 32
    assert main(["sprt", "--counts", "10,100,200,110,20"]) == 0
    assert capsys.readouterr().out.strip() == (
        "SPRT elo0=0 elo1=2 alpha=0.05 beta=0.05 (normalized Elo): LLR 0.269 (-2.944, 2.944) "
        "-> continue")
    assert main(["sprt", "--counts", "1,2"]) == 2
    assert "[1, 2]" in capsys.readouterr().err
    assert main(["--home", str(home), "ratings", "--tournament", "nope"]) == 2
    assert "'nope'" in capsys.readouterr().err
