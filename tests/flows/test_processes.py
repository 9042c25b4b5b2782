"""Processes and signals of a command run: kill -9 leaves no engine, pool worker or temporary
Prefect server behind (issue 8: four servers of ~214 MB piled up), a stale server record is
ended, and Ctrl-C stops a Prefect run with one line and exit 130, the rerun completing it."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flows.server import ServerRecord, end_stale
from warehouse import Lake, connect

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample" / "games.pgn.zst"


def process_table() -> dict[int, tuple[int, str, str]]:
    """pid -> (parent pid, state, command line) of every process, from /proc."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(") ", 1)[1].split()
            argv = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError):
            continue
        table[int(entry.name)] = (int(stat[1]), stat[0], argv)
    return table


def descendants(pid: int) -> dict[int, str]:
    """Every living descendant of ``pid`` with its command line."""
    table = process_table()
    found, frontier = {}, [pid]
    while frontier:
        parent = frontier.pop()
        for child, (ppid, state, argv) in table.items():
            if ppid == parent and state != "Z" and child not in found:
                found[child] = argv
                frontier.append(child)
    return found


def living(pids: Iterator[int] | list[int]) -> list[int]:
    table = process_table()
    return [pid for pid in pids if pid in table and table[pid][1] != "Z"]


def wait_for(condition, timeout: float, step: float = 0.1) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return False


def environment(tmp_path: Path) -> dict[str, str]:
    """The command's environment: its own Prefect home, no user API (so chesslab starts its
    temporary server)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    env["PREFECT_HOME"] = str(tmp_path / "prefect_home")
    return env


def chesslab(home: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "flows.cli", "--home", str(home), *args]


@pytest.fixture
def positions(home: Path, stockfish_path: str,
              selfplay_positions: list[dict[str, object]]) -> list[dict[str, object]]:
    rows = selfplay_positions[:300]
    Lake(home).write("positions", rows)
    return rows


def test_kill_9_of_a_prefect_label_run_leaves_no_child(home: Path, tmp_path: Path,
                                                       positions: list[dict[str, object]]) -> None:
    """`chesslab label` (Prefect, two engines) killed with SIGKILL once it writes labels: its
    engines and its temporary Prefect server die with it."""
    run = subprocess.Popen(chesslab(home, "label", "--prefect", "--depths", "10,11", "--workers", "2",
                                    "--flush-seconds", "0.2"),
                           cwd=ROOT, env=environment(tmp_path),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: Lake(home).parts("labels") or run.poll() is not None, 240)
        children = descendants(run.pid)
    finally:
        run.kill()
    run.wait()
    assert any("stockfish" in argv for argv in children.values()), children
    assert any("prefect server start" in argv for argv in children.values()), children
    assert wait_for(lambda: not living(list(children)), 15), \
        {pid: children[pid] for pid in living(list(children))}


def test_kill_9_of_an_ingest_pool_leaves_no_worker(home: Path, tmp_path: Path) -> None:
    """`chesslab ingest --no-prefect --workers 2` killed once its pool runs: the fork server
    and both workers die with it."""
    run = subprocess.Popen(chesslab(home, "ingest", str(SAMPLE), "--no-prefect", "--workers",
                                    "2", "--chunk-games", "1", "--pool-from-mb", "0"),
                           cwd=ROOT, env=environment(tmp_path),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children: dict[int, str] = {}

    def pool_running() -> bool:
        # The snapshot that shows the pool, not a later one: a worker between two chunks
        # may be gone for a moment.
        children.clear()
        children.update(descendants(run.pid))
        return len(children) >= 3 or run.poll() is not None

    try:
        assert wait_for(pool_running, 120, step=0.02)
    finally:
        run.kill()
    run.wait()
    assert len(children) >= 3, children      # the fork server and two workers
    assert wait_for(lambda: not living(list(children)), 15), \
        {pid: children[pid] for pid in living(list(children))}


def test_stale_server_record_is_ended(tmp_path: Path) -> None:
    """A recorded server whose command is gone is ended and its record dropped; one whose
    command still runs is left alone."""
    folder = tmp_path / "prefect"
    folder.mkdir()
    # The stale server says which signal ended it: end_stale reaps a child of its own
    # process (waitpid), so the exit status Popen.wait sees may be lost to it.
    signals = tmp_path / "signals"
    script = ("import pathlib, signal, sys, time\n"
              "path = pathlib.Path(sys.argv[1])\n"
              "def ended(number, frame):\n"
              "    path.write_text(signal.Signals(number).name)\n"
              "    sys.exit(0)\n"
              "signal.signal(signal.SIGTERM, ended)\n"
              "path.write_text('ready')\n"
              "time.sleep(120)\n")
    stale = subprocess.Popen([sys.executable, "-c", script, str(signals), "prefect", "server"],
                             start_new_session=True)
    assert wait_for(lambda: signals.exists() and signals.read_text() == "ready", 30)
    gone = subprocess.Popen(["true"])
    gone.wait()
    (folder / "server-1-1.json").write_text(
        f'{{"pid": {stale.pid}, "port": 1, "owner": {gone.pid}}}')
    (folder / "server-2-2.json").write_text(
        f'{{"pid": {stale.pid}, "port": 2, "owner": {os.getpid()}}}')
    try:
        ended = end_stale(folder)
        assert ended == [ServerRecord(stale.pid, 1, gone.pid)]
        stale.wait(timeout=10)
        assert signals.read_text() == "SIGTERM"
        assert sorted(p.name for p in folder.iterdir()) == ["server-2-2.json"]
    finally:
        stale.kill()


@pytest.mark.parametrize("runner_flags", [["--prefect"], []], ids=["prefect", "local"])
def test_ctrl_c_exits_130_in_one_line_and_rerun_completes(
        home: Path, tmp_path: Path, positions: list[dict[str, object]],
        runner_flags: list[str]) -> None:
    """SIGINT to `chesslab label` once labels are written (under Prefect it used to hang for
    ~72 s with 100+ lines of tracebacks): exit 130 with the one line `chesslab: interrupted`
    after the progress lines, no engine or server left; the rerun labels what is missing."""
    command = chesslab(home, "label", "--depths", "9,10", "--workers", "2",
                       "--flush-seconds", "0.2", *runner_flags)
    env = environment(tmp_path)
    run = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for(lambda: Lake(home).parts("labels") or run.poll() is not None, 240)
        children = descendants(run.pid)
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=60)
    finally:
        run.kill()
    assert run.returncode == 130, err
    others = [line for line in err.splitlines() if not line.startswith("label: ")]
    assert others == ["chesslab: interrupted"], err
    assert wait_for(lambda: not living(list(children)), 15)

    rerun = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert [line for line in rerun.stderr.splitlines() if not line.startswith("label: ")] \
        == [], rerun.stderr   # nothing else: no log record left unsent when the server stops
    con = connect(Lake(home))
    assert con.execute("select count(*) from labels").fetchone() == (2 * len(positions),)
    done_now = int(rerun.stdout.split(" labels written")[0].rsplit(" ", 1)[1])
    assert 0 < done_now < 2 * len(positions)
