"""pipelines.processes.die_with_parent in the process layouts chesslab is started in."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]

CHILD = """
import os, sys
{setup}
from pipelines.processes import die_with_parent
die_with_parent()
print(os.getpgrp() == os.getpid())
"""


def run_child(setup: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", CHILD.format(setup=setup)], env=env,
                          capture_output=True, text=True, timeout=60, check=False)


def test_a_plain_child_gets_its_own_process_group() -> None:
    done = run_child("")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


def test_a_session_leader_keeps_its_group_instead_of_failing() -> None:
    # under setsid (a CI runner, `setsid nohup chesslab ...`) setpgrp() is EPERM
    done = run_child("os.setsid()")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


GATED_PRELOAD = """
import time
from pathlib import Path
gate = Path({gate!r})
deadline = time.monotonic() + 30   # a bound for the old code, which waits here
while not (gate / "open").exists() and time.monotonic() < deadline:
    time.sleep(0.01)
(gate / "imported").touch()
"""

ROUTED_POOL = """
import os
from pathlib import Path
from pipelines.ingest.run import RoutedPool
gate = Path({gate!r})
pool = RoutedPool(2, preload=["gated_preload"])
print("imported before the pool returned:", (gate / "imported").exists())
(gate / "open").touch()
pool.starting.join()   # the thread that started the workers has ended: they live on
pids = {{pool.submit(n, os.getpid).result(timeout=60) for n in range(4)}}
print("workers:", len(pids), os.getpid() not in pids, (gate / "imported").exists())
pool.__exit__()
"""


def test_the_ingest_pool_returns_before_the_fork_server_has_imported(tmp_path: Path) -> None:
    # The main process hashes and cuts the file while the fork server imports (a few tenths
    # of a second); the workers, started from a thread, outlive it.
    (tmp_path / "gated_preload.py").write_text(GATED_PRELOAD.format(gate=str(tmp_path)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    done = subprocess.run([sys.executable, "-c", ROUTED_POOL.format(gate=str(tmp_path))],
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["imported before the pool returned: False",
                                        "workers: 2 True True"]
