"""Evaluating a model (issue 9, item 5): an SPRT match against a baseline and a gauntlet on
the Stockfish ladder, recorded as tournaments, then the model's events."""
from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import chess.pgn
import pytest

from flows.cli import main
from flows.evaluate_model import evaluate_model as evaluate_on
from flows.step import LocalRunner
from pipelines.evaluate import EvaluateConfig, EvaluateError, Evaluation, plan_evaluation
from pipelines.ratings import Game, RatingsConfig, RatingTable, fit
from warehouse import Lake, connect

OPENINGS = str(Path(__file__).parents[1] / "fixtures" / "openings" / "two_positions.epd")
STOCKFISH = "stockfish?Threads=1&Hash=16#sf"


def evaluate_model(config: EvaluateConfig, home: Path) -> Evaluation:
    """The evaluate composition on the local runner (tests/flows/test_models_flow.py runs it
    on both runners)."""
    return evaluate_on(LocalRunner(show_progress=False), config, Lake(home))


def ladder_table(home: Path, tournament_id: str, anchors: dict[str, float]) -> RatingTable:
    """BayesElo of a tournament's games read back from their stored PGN by python-chess
    (names and results from the tags), with the given rungs anchored: what the ladder rating
    must be, computed without the evaluate and tournament code."""
    pgns = connect(Lake(home)).execute("select pgn from tournament_games where tournament_id = ?",
                                       [tournament_id]).fetchall()
    games = []
    for (pgn,) in pgns:
        headers = chess.pgn.read_headers(io.StringIO(pgn))
        assert headers is not None
        score = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[headers["Result"]]
        games.append(Game(headers["White"], headers["Black"], score))
    return fit(games, RatingsConfig(anchors=anchors))


def test_strong_spec_passes_the_sprt_and_is_rated_on_the_ladder(home: Path,
                                                                  stockfish_path: str) -> None:
    """Full Stockfish against the alpha-beta engine at 1000 nodes: it wins every game, the
    SPRT(0,200) accepts H1; the gauntlet against the 1350 and 1500 rungs is rated with both
    rungs anchored at their UCI_Elo; both tournaments and their ratings are in the warehouse;
    a bare spec leaves no model event; running it again plays nothing."""
    config = EvaluateConfig.tiny(spec=STOCKFISH, openings=OPENINGS)
    evaluation = evaluate_model(config, home)
    assert (evaluation.candidate, evaluation.against) == ("sf", "alphabeta:eval=hce-simple,hash=1")
    assert evaluation.sprt_decision == "H1" and evaluation.passed
    assert evaluation.sprt_llr >= evaluation.sprt_bounds[1] == pytest.approx(1.386, abs=1e-3)
    assert (evaluation.wins, evaluation.draws, evaluation.losses) == (evaluation.games, 0, 0)
    assert evaluation.games >= 6 and evaluation.games % 2 == 0
    assert evaluation.elo is None and evaluation.los > 0.99   # a perfect score: Elo infinite
    expected = ladder_table(home, str(evaluation.ladder_tournament),
                            {"stockfish@1350": 1350.0, "stockfish@1500": 1500.0}).by_name()["sf"]
    assert evaluation.ladder_games == expected.games == 4
    assert evaluation.ladder_elo == pytest.approx(expected.elo, abs=1e-9)
    assert evaluation.ladder_plus == pytest.approx(expected.plus, abs=1e-9) \
        and expected.plus > 0
    assert evaluation.ladder_minus == pytest.approx(expected.minus, abs=1e-9)
    con = connect(Lake(home))
    events = con.execute("select event from tournaments order by event").fetchall()
    assert events == [(f"chesslab evaluate {STOCKFISH}: SPRT",),
                      (f"chesslab evaluate {STOCKFISH}: ladder",)]
    ladder = dict(con.execute("select player, elo from ratings where tournament_id = ?",
                              [evaluation.ladder_tournament]).fetchall())
    assert (ladder["stockfish@1350"], ladder["stockfish@1500"]) == (1350, 1500)
    assert ladder["sf"] == pytest.approx(expected.elo, abs=1e-9)
    sprt = con.execute("select decision from sprt_results where tournament_id = ?",
                       [evaluation.match_tournament]).fetchall()
    assert ("H1",) in sprt
    played = con.execute("select count(*) from tournament_games").fetchone()
    again = evaluate_model(config, home)
    assert again.games == evaluation.games and again.ladder_elo == evaluation.ladder_elo
    assert con.execute("select count(*) from tournament_games").fetchone() == played


def test_weak_spec_is_rejected(home: Path, stockfish_path: str) -> None:
    """The alpha-beta engine at 1000 nodes against full Stockfish loses: the SPRT accepts H0
    and nothing would be promoted; without a ladder no gauntlet is played."""
    config = EvaluateConfig.tiny(spec="alphabeta:eval=hce-simple,hash=1", against=STOCKFISH,
                                 openings=OPENINGS, ladder="")
    evaluation = evaluate_model(config, home)
    assert evaluation.sprt_decision == "H0" and not evaluation.passed
    assert evaluation.wins == 0 and evaluation.losses >= 4
    assert evaluation.ladder_tournament is None and evaluation.ladder_elo is None
    payload = evaluation.payload()
    assert payload["passed"] is False and payload["sprt_decision"] == "H0"
    # the match is rated by itself, the baseline anchored at 0: a row to join models to
    ratings = dict(connect(Lake(home)).execute(
        "select player, elo from latest_ratings where tournament_id = ?",
        [evaluation.match_tournament]).fetchall())
    assert ratings["sf"] == 0.0 and ratings[evaluation.candidate] < -100
    assert len(ratings) == 2
    assert json.loads(json.dumps(payload))["sprt_elo"] == [0.0, 200.0]


def test_a_larger_games_cap_continues_the_same_sprt_match(home: Path,
                                                            stockfish_path: str) -> None:
    """Issue 10 (paper 003 run): --max-games was part of the match's identity, so raising it
    from 100 to 200 replayed all 200 games in a new tournament. Two equal Stockfish players
    keep SPRT(0,10) undecided: a cap of 2 games plays 2, a cap of 4 then plays only the 2
    missing games into the same tournament, and the cap of 4 again plays nothing."""
    config = EvaluateConfig.tiny(spec=STOCKFISH, against="stockfish?Threads=1&Hash=16#sf2",
                                 sprt=(0.0, 10.0), sprt_alpha=0.05, sprt_beta=0.05,
                                 max_games=2, ladder="", openings=OPENINGS)

    def games() -> list[tuple[str, int]]:   # a fresh connection sees the games just written
        return connect(Lake(home)).execute("select tournament_id, count(*) from "
                                           "tournament_games group by tournament_id").fetchall()

    first = evaluate_model(config, home)
    assert first.sprt_decision == "continue" and games() == [(first.match_tournament, 2)]
    larger = replace(config, max_games=4)
    second = evaluate_model(larger, home)
    assert second.match_tournament == first.match_tournament
    assert second.games == 4 and games() == [(first.match_tournament, 4)]
    assert evaluate_model(larger, home).games == 4 and games() == [(first.match_tournament, 4)]
    status = connect(Lake(home)).execute(
        "select planned_games, games_done, status from tournament_status").fetchall()
    assert status == [(4, 4, "finished")]


def register(lake: Lake, version: int, engine_spec: str) -> None:
    """A registry row as training writes it, whose deploy spec is an engine that plays today
    (the model's own artifact is not needed to play it)."""
    from pipelines.models.registry import record_model

    artifact = lake.home / f"nnue-{version}.npz"
    artifact.parent.mkdir(parents=True, exist_ok=True)
    artifact.write_bytes(b"weights")
    record_model(lake, "nnue", version, f"nnue-test-{version}",
                 json.dumps({"engine_spec": engine_spec}), artifact, f"{version:064x}")


def test_a_model_that_passes_is_promoted_and_becomes_best(home: Path, stockfish_path: str,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    """`chesslab evaluate nnue@1`: its evaluated event holds the Elo, interval, ladder rating
    and SPRT verdict; it passes and is promoted, so nnue@best is nnue@1. nnue@2 (nnue@latest)
    fails its SPRT: evaluated, not promoted, and nnue@best stays nnue@1."""
    from pipelines.models.registry import resolve_model

    lake = Lake(home)
    register(lake, 1, "stockfish?Threads=1&Hash=16")
    register(lake, 2, "alphabeta:eval=hce-simple,hash=1")
    base = ["--home", str(home), "evaluate", "--no-prefect", "--nodes", "1000",
            "--sprt", "0,200", "--sprt-alpha", "0.2", "--sprt-beta", "0.2", "--max-games", "8",
            "--openings", OPENINGS, "--concurrency", "2", "--max-plies", "160"]
    assert main([*base, "nnue@1", "--against", "alphabeta:eval=hce-simple,hash=1",
                 "--ladder", "1350", "--ladder-rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "nnue@1 vs alphabeta:eval=hce-simple,hash=1: +" in out and "nnue@1 promoted" in out
    # issue 32: the bounds, error rates and Elo model of the SPRT are printed
    assert "SPRT elo0=0 elo1=200 alpha=0.2 beta=0.2 (normalized Elo) H1 (LLR " in out
    assert resolve_model(lake, "nnue@best").model_id == "nnue@1"
    assert main([*base, "nnue@latest", "--against", STOCKFISH, "--ladder", ""]) == 0
    assert "promoted" not in capsys.readouterr().out
    assert resolve_model(lake, "nnue@best").model_id == "nnue@1"

    con = connect(lake)
    events = con.execute("select model_id, event, payload from model_events "
                         "order by recorded_at").fetchall()
    assert [(m, e) for m, e, _ in events] == [("nnue@1", "evaluated"), ("nnue@1", "promoted"),
                                              ("nnue@2", "evaluated")]
    first, second = json.loads(events[0][2]), json.loads(events[2][2])
    assert (first["model_id"], first["candidate"], first["sprt_decision"], first["passed"]) == (
        "nnue@1", "nnue@1", "H1", True)
    assert first["wins"] == first["games"] >= 6 and first["losses"] == 0
    assert first["sprt_elo"] == [0.0, 200.0] and first["sprt_llr"] >= first["sprt_bounds"][1]
    expected = ladder_table(home, first["ladder_tournament"],
                            {"stockfish@1350": 1350.0}).by_name()["nnue@1"]
    assert first["ladder_games"] == expected.games == 2
    assert (first["ladder_elo"], first["ladder_plus"], first["ladder_minus"]) == (
        pytest.approx(expected.elo, abs=1e-9), pytest.approx(expected.plus, abs=1e-9),
        pytest.approx(expected.minus, abs=1e-9))
    assert {"elo", "elo_lower", "elo_upper", "los", "match_tournament",
            "ladder_tournament"} <= set(first)
    assert (second["sprt_decision"], second["passed"], second["wins"]) == ("H0", False, 0)
    assert second["elo"] is None and second["ladder_tournament"] is None
    assert json.loads(events[1][2])["sprt_tournament"] == first["match_tournament"]
    status = dict(con.execute("select model_id, status from model_status").fetchall())
    assert status == {"nnue@1": "promoted", "nnue@2": "evaluated"}


def test_unknown_model_and_undeployable_kind(home: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A model not in the registry is a one-line error naming it; an nnue model without a
    deploy override maps to the alpha-beta engine with its NNUE."""
    from pipelines.evaluate import model_engine_spec

    Lake(home).root.mkdir(parents=True)    # a warehouse without the model (issue 32)
    assert main(["--home", str(home), "evaluate", "nnue@7", "--no-prefect", "--nodes", "100",
                 "--ladder", ""]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("chesslab evaluate: error: no model 'nnue@7'") and "\n" not in err
    assert model_engine_spec("nnue", "nnue@7", {}) == "alphabeta:eval=nnue,model=nnue@7"
    with pytest.raises(EvaluateError, match="no engine plays models of kind 'lmr'"):
        model_engine_spec("lmr", "lmr@1", {})


def test_bad_input_is_a_one_line_error(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No candidate, both a model and a spec, bad SPRT bounds, no limit, an unknown engine:
    exit 2 with one line naming what is wrong."""
    Lake(home).root.mkdir(parents=True)    # issue 32: evaluate reads an existing warehouse
    base = ["--home", str(home), "evaluate", "--no-prefect", "--ladder", ""]
    cases = [
        ([*base, "--nodes", "100"], "give a MODEL (KIND@VERSION) or --spec SPEC, not neither"),
        ([*base, "nnue@1", "--spec", "stockfish", "--nodes", "100"], "not both"),
        ([*base, "--spec", "stockfish", "--sprt", "5,0", "--nodes", "100"],
         "--sprt wants elo0,elo1 with elo1 > elo0, got '5,0'"),
        ([*base, "--spec", "stockfish"], "give a limit"),
        ([*base, "--spec", "nosuch", "--nodes", "100"], "unknown engine 'nosuch'"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert err.startswith("chesslab evaluate: error:") and message in err, err
        assert len(err.splitlines()) == 1
    with pytest.raises(EvaluateError, match="nosuch"):
        plan_evaluation(Lake(home), EvaluateConfig.tiny(spec="stockfish", against="nosuch"))


def test_players_and_models_are_checked_before_any_game(home: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    """Issue 32 items 3 and 5: a misspelled setting, an unknown model kind and a registered
    net whose file was replaced are each one line naming the player or model (both hashes for
    the replaced file), exit 2, before any game: no tournament is stored."""
    import hashlib

    from engines.nnue.netfile import random_arrays, save_arrays
    from pipelines.models.registry import record_model

    lake = Lake(home)
    net = home / "models" / "nnue" / "1" / "nnue.npz"
    net.parent.mkdir(parents=True)
    save_arrays(net, random_arrays(1))
    recorded = hashlib.sha256(net.read_bytes()).hexdigest()
    record_model(lake, "nnue", 1, "nnue-test", "{}", net, recorded)
    save_arrays(net, random_arrays(2))
    found = hashlib.sha256(net.read_bytes()).hexdigest()
    base = ["--home", str(home), "evaluate", "--no-prefect", "--nodes", "50", "--ladder", "",
            "--max-games", "2"]
    cases = [
        (["--spec", "alphabeta:eval=hcee"], "eval 'hcee' is not valid (did you mean 'hce'?); "
                                            "valid: hce, hce-simple, nnue, nnue-hybrid"),
        (["--spec", "puct:model=foo@1"], "engine 'puct:model=foo@1': no model 'foo@1'"),
        (["--spec", "alphabeta", "--against", "alphabeta?Hsh=1"], "no option 'Hsh'"),
        (["nnue@1"], f"has sha256 {found}, the registry recorded {recorded}"),
    ]
    for argv, needle in cases:
        assert main([*base, *argv]) == 2, argv
        err = capsys.readouterr().err.strip()
        assert err.startswith("chesslab evaluate: error: ") and needle in err, err
        assert "\n" not in err
    assert not lake.parts("tournaments") and not lake.parts("tournament_games")
