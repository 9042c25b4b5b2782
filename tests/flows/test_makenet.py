"""``chesslab make-net`` (issue 47 §3): from an empty home and a tiny time budget to a trained,
evaluated net, every stage recorded; killed with SIGKILL in the middle and run again, it
resumes (the data made stays, the time spent counts, one model) and finishes."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flows.cli import main
from pipelines import makenet as mn
from warehouse import Lake, connect

TINY = ["--hours", "0.04", "--round-minutes", "0.4", "--depth", "2", "--batch-games", "4",
        "--epochs", "2", "--hidden", "32", "--batch-size", "1024", "--eval-games", "2",
        "--tc", "1+0.01", "--no-prefect"]


def events(lake: Lake) -> list[tuple[str, str, dict[str, object]]]:
    rows = connect(lake).execute("select stage, event, payload from net_run_events "
                                 "order by recorded_at").fetchall()
    return [(stage, event, json.loads(payload)) for stage, event, payload in rows]


def test_make_net_from_an_empty_home(home: Path, stockfish_path: str,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Data rounds merged into binpack shards and ingested under the datagen engine id, a
    net trained on exactly those labels, an evaluation match against the HCE, each stage in
    net_run_events; the state's positions are the labels stored; a second run finds it all
    done."""
    assert main(["--home", str(home), "make-net", *TINY]) == 0
    out = capsys.readouterr().out
    lake = Lake(home)
    stages = [(stage, event) for stage, event, _ in events(lake)]
    assert stages[0] == ("run", "started") and stages[-1] == ("run", "finished")
    for stage in ("datagen", "ingest", "train", "evaluate"):
        assert (stage, "finished") in stages, stage
    con = connect(lake)
    engine_id, depth, stored = con.execute(
        "select engine_id, depth, count(*) from labels group by all").fetchall()[0]
    assert (engine_id, depth) == ("datagen:Stockfish-15.1-d2", 2)
    (folder,) = (home / mn.RUN_FOLDER).iterdir()
    state = mn.load_state(home, folder.name)
    assert state.model == "nnue@1" and state.evaluated and state.data_done
    assert state.positions == stored > 500
    shards = sorted((folder / "shards").glob("*.binpack"))
    batches = sorted((folder / "datagen").glob("*.binpack"))
    assert [Path(s).name for s in state.shards] == [s.name for s in shards]
    assert sum(s.stat().st_size for s in shards) == sum(b.stat().st_size for b in batches)
    assert con.execute("select label_engine_id from model_datasets").fetchall() == [(engine_id,)]
    tournament = con.execute("select count(*) from tournament_games").fetchall()[0][0]
    assert tournament == 2
    assert f"make-net {folder.name}: {stored:,} positions, model nnue@1" in out
    assert state.spent_s <= 0.04 * 3600 + 60     # within the budget (a round may run over)

    assert main(["--home", str(home), "make-net", *TINY]) == 0
    assert [e for e in events(lake)][-2][:2] == ("run", "resumed")
    assert connect(lake).execute("select count(*) from models").fetchall()[0][0] == 1


@pytest.mark.slow
def test_a_make_net_killed_in_its_data_rounds_resumes(home: Path, stockfish_path: str) -> None:
    """SIGKILL once the first shard is ingested: the same command resumes the run (the rounds
    continue after the batches made, the interrupted round's time counts), trains one net
    and finishes."""
    command = [sys.executable, "-m", "flows.cli", "--home", str(home), "make-net", *TINY]
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    started = time.monotonic()
    try:
        while time.monotonic() - started < 300:
            states = list((home / mn.RUN_FOLDER).glob("*/state.json"))
            if states and json.loads(states[0].read_text())["ingested"]:
                break
            assert first.poll() is None, "make-net ended before its first shard"
            time.sleep(0.5)
        else:
            pytest.fail("no shard ingested in 300 s")
        time.sleep(3)                       # into the next round
        killed_after = time.monotonic() - started
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    again = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr[-2000:]
    lake = Lake(home)
    stages = [(stage, event) for stage, event, _ in events(lake)]
    assert stages.count(("run", "started")) == 1 and ("run", "resumed") in stages
    (folder,) = (home / mn.RUN_FOLDER).iterdir()
    state = mn.load_state(home, folder.name)
    assert state.model == "nnue@1" and state.evaluated
    stored = connect(lake).execute("select count(*) from labels").fetchall()[0][0]
    assert state.positions == stored
    assert state.spent_s >= 0.5 * killed_after     # the killed run's time was counted


def test_a_budget_with_no_time_for_data_is_one_line(home: Path, stockfish_path: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--home", str(home), "make-net", "--hours", "0.01", "--no-prefect"]) == 2
    assert "make-net: --hours 0.01 leaves no time for data" in capsys.readouterr().err


def test_rounds_stop_where_the_budget_left_trains_the_data() -> None:
    """A round is shortened (or skipped) so that what is left of the budget trains what the
    data made; the epochs shrink when even that is short; an interrupted stage counts the
    time up to its newest file."""
    config = mn.MakeNetConfig(hours=1.0, round_minutes=20, epochs=10)
    fresh = mn.RunState()
    assert mn.next_round_seconds(config, fresh, 1000.0, 100_000.0) == 1200.0
    # 40 min spent, 2.4M positions: 20 min would make 1.2M more, whose 10 epochs (6 min)
    # with the overhead do not fit in 20 min: a 10-min round does
    state = mn.RunState(spent={"datagen": 2400.0}, positions=2_400_000)
    assert mn.next_round_seconds(config, state, 1000.0, 100_000.0) == 600.0
    late = mn.RunState(spent={"datagen": 3300.0}, positions=3_300_000)
    assert mn.next_round_seconds(config, late, 1000.0, 100_000.0) == 0.0
    assert mn.fitted_epochs(config, late, 100_000.0) == 5   # 169 s left: 5 of 3.3M
    assert mn.fitted_epochs(config, mn.RunState(positions=1_000_000), 100_000.0) == 10


def test_an_interrupted_stage_counts_its_time_up_to_its_newest_file(tmp_path: Path) -> None:
    batch = tmp_path / "datagen" / "b.binpack"
    batch.parent.mkdir()
    batch.write_bytes(b"x")
    started = time.time() - 100
    os.utime(batch, (started + 40, started + 40))
    state = mn.RunState(spent={"datagen": 10.0}, open_stage=["datagen", started])
    mn.settle_open_stage(state, tmp_path)
    assert state.spent["datagen"] == pytest.approx(50.0) and state.open_stage is None
