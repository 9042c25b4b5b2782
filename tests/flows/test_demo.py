"""``chesslab demo`` end to end on the bundled sample: ingest, label, a tiny NNUE trained on
the labels, exported and cross-checked, two games of it against the HCE, rated, and the
lineage query from that rating back to the sample file (a smaller ``--positions`` than the
default keeps it to about a minute; the default run is the slow test)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from flows.cli import main
from flows.commands.demo import DEMO_NODES, SAMPLE
from pipelines.models.registry import resolve_model
from warehouse import Lake, connect


def run_demo(home: Path, capsys: pytest.CaptureFixture[str], *options: str) -> str:
    assert main(["--home", str(home), "demo", *options]) == 0
    return capsys.readouterr().out


def check_demo(home: Path, out: str, positions: int) -> None:
    lake = Lake(home)
    con = connect(lake)
    labels = con.execute("select e.name, l.depth, count(*) from labels l join engines e "
                         "using (engine_id) group by all order by all").fetchall()
    # Stockfish's three depths, and the sample suite's EPD analysis (ce/acd opcodes) as labels
    suite = [line for line in (SAMPLE / "suite.epd").read_text().splitlines() if " ce " in line]
    depths = {line.split("acd ")[1].split(";")[0] for line in suite}
    stockfish = [row for row in labels if row[0] == "Stockfish"]
    assert stockfish == [("Stockfish", 5, positions), ("Stockfish", 6, positions),
                         ("Stockfish", 7, positions)]
    assert [row[1:] for row in labels if row[0] != "Stockfish"] == [
        (int(depth), len(suite)) for depth in sorted(depths)]
    model = resolve_model(lake, "nnue@latest")
    assert (model.model_id, model.name, model.status) == ("nnue@1", "nnue-demo", "exported")
    exported = json.loads(con.execute("select payload from model_events where event = "
                                      "'exported'").fetchone()[0])["cross_check"]
    dataset = con.execute("select label_depths, train_rows + validation_rows "
                          "from model_datasets").fetchone()
    assert dataset[0] == [7] and exported["positions"] == min(1000, dataset[1])
    assert f"exported net vs float model on {exported['positions']} positions: mean " \
           f"{exported['float_vs_quantised_mean_cp']:.2f} cp" in out
    # the demo's net learnt: at the tiny preset's old 3e-3 it scored every position 48 cp
    assert exported["float_cp_spread"] > 50, exported
    assert f"the float model's scores spread over {exported['float_cp_spread']:.0f} cp" in out
    games = con.execute("select count(*) from tournament_games").fetchone()
    rated = con.execute("select games from ratings where player like '%model=nnue@1'"
                        ).fetchall()
    assert games == (2,) and rated == [(2,)]
    rows = [line for line in out.splitlines()
            if line.startswith("alphabeta:eval=nnue,model=nnue@1 ") and "nnue_examples" in line]
    assert str(SAMPLE / "games.pgn.zst") in rows[0]
    scored = con.execute("select count(*) from labels where depth = 7 and score_mate is null"
                         ).fetchone()[0]
    assert sum(int(row.split()[-1]) for row in rows) == scored > 0.95 * positions
    assert f"nnue@1 against the hand-crafted evaluation, {DEMO_NODES} nodes a move:" in out


def test_demo_with_a_few_hundred_positions(home: Path, capsys: pytest.CaptureFixture[str],
                                           prefect_harness: None) -> None:
    """On Prefect (``--prefect``): every step of the demo on one runner; then again in this
    process (``--no-prefect``) and without the models part."""
    out = run_demo(home, capsys, "--positions", "300", "--prefect")
    check_demo(home, out, 300)
    # issue 49 §4: the status tables came before the models part ("models 0" beside the
    # net trained seconds later)
    assert out.index("lineage of nnue@1") < out.index("labelled positions per engine and")
    assert re.search(r"^models\s+1\s", out, re.MULTILINE), out
    again = run_demo(home, capsys, "--positions", "300", "--games", "0", "--no-prefect")
    assert "exported net" not in again   # the models part is skipped; nothing labelled again
    # the label limit is per run: 300 more positions at each depth
    assert connect(Lake(home)).execute(
        "select count(*) from labels join engines using (engine_id) where name = 'Stockfish'"
    ).fetchone() == (1800,)


def test_a_prefect_run_leaves_no_duckdb_object_for_the_interpreters_exit(home: Path) -> None:
    """A command on Prefect ends with its event-loop threads (daemons) still running; a DuckDB
    object still alive then (the ingest lookups' cached connections were) is reported by
    nanobind as leaked, a hundred lines on stderr at exit. Its own temporary server: ~10 s."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("PREFECT_")}
    env.update(PREFECT_HOME=str(home / "prefect"), PYTHONPATH=str(Path(__file__).parents[2]))
    run = subprocess.run([sys.executable, "-m", "flows.cli", "--home", str(home), "ingest",
                          "--prefect", "--workers", "1", str(SAMPLE / "games.pgn.zst")],
                         capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "nanobind: leaked" not in run.stderr, run.stderr[-2000:]


@pytest.mark.slow
def test_demo_default(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = run_demo(home, capsys, "--no-prefect")
    check_demo(home, out, 3000)
