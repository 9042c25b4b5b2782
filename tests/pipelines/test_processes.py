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
