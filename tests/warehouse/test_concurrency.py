"""Concurrent writers and killed writers: separate processes over one Delta table."""
from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow.dataset as ds
import pytest
from deltalake import DeltaTable

from warehouse import Lake, connect
from warehouse.commits import WRITE_LOCK, write_lock

ROOT = Path(__file__).resolve().parents[2]
# A writer process: `rounds` commits of `count` labels at depths 5 and 6, round r with keys
# from first + r * step (step 0: the same keys every round), then prints "done". With a
# seventh argument "barrier" it imports everything and builds its first batch, prints "ready"
# and waits for a line on stdin before writing: writers released together (see `start_together`).
WRITER = """
import sys
from warehouse import Lake
home, first, count, rounds, step = sys.argv[1], *map(int, sys.argv[2:6])
if sys.argv[6:] == ["barrier"]:
    from warehouse.schema import conform
    from warehouse.tables import table
    conform(table("labels"), [{"position_key": 1, "engine_id": "sf", "depth": 5}])
    print("ready", flush=True)
    sys.stdin.readline()
for r in range(rounds):
    start = first + r * step
    Lake(home).write("labels", [
        {"position_key": k, "engine_id": "sf", "depth": d, "score_cp": k % 100}
        for k in range(start, start + count) for d in (5, 6)])
print("done", flush=True)
"""


def writer(home: Path, first: int, count: int, rounds: int = 1,
           step: int = 0, barrier: bool = False) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(home), str(first), str(count),
                             str(rounds), str(step), *(["barrier"] if barrier else [])],
                            cwd=ROOT, text=True, stdin=subprocess.PIPE if barrier else None,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def start_together(procs: list[subprocess.Popen[str]]) -> None:
    """A barrier: wait until every writer started with ``barrier=True`` is ready (imports
    done, waiting on stdin), then release them all at once, so that they reach the table
    before any of them has created it, however loaded the machine is."""
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()   # communicate() closes it


def raw_rows(lake: Lake) -> int:
    """Rows in the files of the current version, as any Parquet reader counts them."""
    return ds.dataset([str(p) for p in lake.parts("labels")]).count_rows()


def test_processes_writing_overlapping_keys_at_once_store_each_once(home: Path) -> None:
    """Three processes write overlapping keys at once: each key lands once."""
    Lake(home).write("labels", [{"position_key": 0, "engine_id": "sf", "depth": 5}])
    procs = [writer(home, first, 200, rounds=2) for first in (1, 101, 151)]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    lake = Lake(home)
    assert raw_rows(lake) == 1 + 2 * 350   # keys 1..350 at two depths, plus key 0
    count = connect(lake).execute(
        "select count(*), count(distinct (position_key, depth)) from labels").fetchone()
    assert count == (701, 701)


def test_a_writer_killed_mid_write_leaves_no_partial_commit(home: Path) -> None:
    """kill -9 while committing batches of 2 * 3000 rows: the table holds whole batches only,
    and a rerun of the same writes completes them without storing any key twice."""
    lake = Lake(home)
    proc = writer(home, 1, 3000, rounds=12, step=3000)
    deadline = time.monotonic() + 120
    while lake.version("labels") < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert raw_rows(lake) % 6000 == 0 and raw_rows(lake) < 72000
    rerun = writer(home, 1, 3000, rounds=12, step=3000)
    assert rerun.communicate(timeout=300)[0].strip() == "done"
    assert raw_rows(lake) == 72000
    assert connect(lake).execute("select count(distinct (position_key, depth)) from labels"
                                 ).fetchone() == (72000,)


def test_three_processes_writing_the_same_keys_store_each_once(home: Path) -> None:
    """Three processes released together (a barrier) write the same 300 keys at two depths
    twice over into a table that does not exist yet: one of them creates it (one CREATE
    TABLE in the log, under the lock), and the lock makes each writer see what the one before
    it committed, so 600 rows land, each once, all in the first commit: the five writes after
    it find nothing new and commit nothing."""
    procs = [writer(home, 1, 300, rounds=2, barrier=True) for _ in range(3)]
    start_together(procs)
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0 and out.strip() == "done", err
    lake = Lake(home)
    assert raw_rows(lake) == 600
    assert connect(lake).execute("select count(distinct (position_key, depth)), sum(score_cp) "
                                 "from labels").fetchone() == (600, 2 * sum(k % 100 for k in range(1, 301)))
    history = DeltaTable(str(lake.table_dir("labels"))).history()
    assert sorted(commit["operation"] for commit in history) == ["CREATE TABLE", "WRITE"]
    assert lake.version("labels") == 1   # create, then one commit: later writes add nothing


# A writer that stays up for several rounds: it prints "ready", then for each home read from
# stdin writes 10 labels at depths 5 and 6 into that home's labels table and prints "done".
REPEAT_WRITER = """
import sys
from warehouse import Lake
from warehouse.schema import conform
from warehouse.tables import table
conform(table("labels"), [{"position_key": 1, "engine_id": "sf", "depth": 5}])
print("ready", flush=True)
for line in sys.stdin:
    Lake(line.strip()).write("labels", [
        {"position_key": k, "engine_id": "sf", "depth": d} for k in range(1, 11) for d in (5, 6)])
    print("done", flush=True)
"""


def test_writers_released_together_create_a_new_table_once(tmp_path: Path) -> None:
    """Three writer processes are released together (a barrier: each has imported everything
    and waits on its stdin) onto a home whose labels table does not exist yet, 12 times over,
    a fresh home each time: every table has one CREATE TABLE and one WRITE in its log. Before
    tables were created under the write lock, two writers that both found no table each
    committed a CREATE TABLE (two table ids, version 2): most of these rounds did that."""
    procs = [subprocess.Popen([sys.executable, "-c", REPEAT_WRITER], cwd=ROOT, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
             for _ in range(3)]
    try:
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        for round_ in range(12):
            home = tmp_path / f"home{round_}"
            for proc in procs:   # the barrier: all wait on stdin, released one line each
                assert proc.stdin is not None
                proc.stdin.write(f"{home}\n")
                proc.stdin.flush()
            for proc in procs:
                assert proc.stdout is not None and proc.stdout.readline().strip() == "done"
            lake = Lake(home)
            history = DeltaTable(str(lake.table_dir("labels"))).history()
            assert sorted(commit["operation"] for commit in history) == \
                ["CREATE TABLE", "WRITE"], f"round {round_}"
            assert raw_rows(lake) == 20
    finally:
        for proc in procs:
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout=60)


def test_threads_writing_the_same_keys_store_each_once(home: Path) -> None:
    """Threads of one process take the same lock (one open file each): each key once."""
    rows = [{"position_key": k, "fen": f"fen {k}"} for k in range(1, 2001)]
    stored: list[int] = []
    threads = [threading.Thread(target=lambda: stored.append(Lake(home).write("positions", rows)))
               for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert sorted(stored) == [0, 0, 0, 2000]
    assert ds.dataset([str(p) for p in Lake(home).parts("positions")]).count_rows() == 2000


HOLDER = """
import sys, time
from pathlib import Path
from warehouse.commits import write_lock
with write_lock(Path(sys.argv[1])):
    print("locked", flush=True)
    time.sleep(600)
"""


def test_a_lock_held_by_a_killed_writer_does_not_block_the_next(home: Path) -> None:
    """A process holding the write lock is killed with -9: the kernel releases the lock and
    the next write goes through (while it lived, the lock was really held)."""
    lake = Lake(home)
    lake.write("labels", [{"position_key": 1, "engine_id": "sf", "depth": 5}])
    folder = lake.table_dir("labels")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder)], cwd=ROOT, text=True,
                              stdout=subprocess.PIPE)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    with open(folder / WRITE_LOCK, "a") as handle, pytest.raises(BlockingIOError):
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    late = writer(home, 1, 10)
    assert late.communicate(timeout=120)[0].strip() == "done"
    assert raw_rows(lake) == 20
    with write_lock(folder):   # free again after the writer finished
        pass


def distinct_and_rows(lake: Lake, name: str, key: str) -> tuple[int, int]:
    """(distinct keys, rows) in the files of the table's current version."""
    rows = lake.read(name, columns=[key]).column(key)
    return len(rows.unique()), len(rows)


def test_a_killed_and_rerun_ingest_stores_each_row_once(home: Path) -> None:
    """kill -9 of `chesslab ingest` (two worker processes) once games are committed; the
    rerun completes the file and no position, game or move is in the files twice."""
    command = [sys.executable, "-m", "flows.cli", "--home", str(home), "ingest", "--no-prefect",
               "--workers", "2", "--chunk-games", "40", "--flush-games", "80", "--pool-from-mb", "0",
               str(ROOT / "data" / "sample" / "games.pgn.zst")]
    run = subprocess.Popen(command, cwd=ROOT, start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lake = Lake(home)
    deadline = time.monotonic() + 120
    while lake.version("moves") < 2 and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(run.pid, signal.SIGKILL)
    run.wait()
    assert lake.version("sources") <= 0, "the ingest finished before it was killed"
    rerun = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    games = distinct_and_rows(lake, "games", "game_id")
    assert games == (400, 400)
    positions = distinct_and_rows(lake, "positions", "position_key")
    assert positions[0] == positions[1] > 10000
    moves = connect(lake).execute(
        "select count(*), count(distinct (game_id, ply)) from moves").fetchone()
    assert moves[0] == moves[1] == ds.dataset([str(p) for p in lake.parts("moves")]).count_rows()


def test_two_label_runs_at_once_store_each_label_once(home: Path, stockfish_path: str,
        selfplay_positions: list[dict[str, object]]) -> None:
    """Two `chesslab label` processes over the same positions at the same time: whichever
    labels a position first stores it, the other's write stores nothing for it."""
    lake = Lake(home)
    lake.write("positions", selfplay_positions[:60])
    command = [sys.executable, "-m", "flows.cli", "--home", str(home), "label", "--no-prefect",
               "--depths", "3,4", "--workers", "1", "--batch-size", "10",
               "--engine", stockfish_path]
    runs = [subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for _ in range(2)]
    for run in runs:
        assert run.wait(timeout=300) == 0, run.communicate()[1]
    rows = lake.read("labels", columns=["position_key", "depth"]).to_pylist()
    assert len(rows) == 120
    assert len({(r["position_key"], r["depth"]) for r in rows}) == 120


# A process that writes through Lake and queries the warehouse, then reports its threads: the
# unnamed native ones (DuckDB's, Arrow's: named as the process) with no DuckDB open (its
# key scanner and connection closed), and again at the very end of its exit (an atexit
# handler registered first runs last, after the warehouse's own).
THREADS_AT_EXIT = """
import atexit, os, sys

def unnamed() -> int:
    tasks = [open(f"/proc/self/task/{t}/comm").read().strip() for t in os.listdir("/proc/self/task")]
    return tasks.count(open("/proc/self/comm").read().strip())

atexit.register(lambda: print("exit", unnamed(), flush=True))
from warehouse import Lake, connect
from warehouse.catalog import query
from warehouse.dedupe import close_key_scanner
lake = Lake(sys.argv[1])
lake.write("labels", [{"position_key": k, "engine_id": "sf", "depth": 5} for k in range(50)])
lake.write("labels", [{"position_key": k, "engine_id": "sf", "depth": 5} for k in range(99)])
close_key_scanner()
print("closed", unnamed(), flush=True)
con = connect(lake)
assert query(con, "select count(*) as n from labels").to_pylist() == [{"n": 99}]
con.close()
"""


def test_no_duckdb_thread_is_alive_at_exit(home: Path) -> None:
    """Issue 48 (a process that wrote through Lake aborted at exit, "terminate called without
    an active exception", a thread still alive at interpreter shutdown): a warehouse query
    parsed its SQL with ``duckdb.extract_statements``, which opens DuckDB's module-wide
    default connection, a database with a thread per core that nothing closed, so its
    threads ran on while the interpreter shut down. At exit a process that wrote and queried
    has no more such threads than once every DuckDB it opened was closed."""
    run = subprocess.run([sys.executable, "-c", THREADS_AT_EXIT, str(home)], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    counts = dict(line.split() for line in run.stdout.split("\n") if line)
    assert int(counts["exit"]) <= int(counts["closed"]), counts


# A writer for the race below: the WRITER's barrier and writes, then a query, then exit.
QUERYING_WRITER = WRITER + """
from warehouse import connect
from warehouse.catalog import query
con = connect(Lake(home))
assert query(con, "select count(*) as n from labels").to_pylist() == [{"n": 600}]
"""
BURNER = "import time\nend = time.monotonic() + 600\nwhile time.monotonic() < end:\n    pass\n"


@pytest.mark.slow
def test_writers_racing_to_create_a_table_exit_0_every_time(tmp_path: Path) -> None:
    """Issue 48: three writers racing to create one table, two CPU-bound processes beside
    them, aborted at exit once in 20 runs (exit 134). Twenty rounds of that race, each writer
    also querying the warehouse before it exits: every one of the 60 exits is 0, with no
    word on its errors."""
    burners = [subprocess.Popen([sys.executable, "-c", BURNER]) for _ in range(2)]
    try:
        for round_ in range(20):
            home = tmp_path / f"home{round_}"
            procs = [subprocess.Popen([sys.executable, "-c", QUERYING_WRITER, str(home), "1",
                                       "300", "2", "0", "barrier"], cwd=ROOT, text=True,
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE) for _ in range(3)]
            start_together(procs)
            for proc in procs:
                out, err = proc.communicate(timeout=300)
                assert (proc.returncode, out.strip(), err) == (0, "done", ""), round_
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
