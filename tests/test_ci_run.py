"""Issue 48 §3: ``.ci/run``'s comment said pytest ran 901 tests when 1,549 were collected.
Every run now ends with the counts and the time (tests/conftest.py), and ``.ci/run`` adds the
time of the whole run; no count is written down to go stale."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUMMARY = re.compile(r"^chesslab: (\d+) tests? collected, (\d+) deselected, (\d+) run, "
                     r"(\d+) skipped; (\d+\.\d s|\d+ min \d+ s)$", re.MULTILINE)


def test_ci_run_writes_down_no_count_of_tests() -> None:
    text = (ROOT / ".ci" / "run").read_text()
    assert not re.search(r"\d[\d,]*\s+(slow\s+)?tests", text)
    assert "exec " not in text     # the script outlives pytest, to print the run's time


def test_every_pytest_run_ends_with_its_counts_and_time() -> None:
    """Two tests of test_sprt.py's forty: all collected, the others deselected, 2 run."""
    target = "tests/pipelines/test_sprt.py"
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--no-header",
         target, "-k", "pentanomial_counts_game_pairs or bad_input_is_refused"],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, "CHESSLAB_CI": ""},
        check=True).stdout
    match = SUMMARY.search(out)
    assert match is not None, out
    collected, deselected, run, skipped = map(int, match.groups()[:4])
    assert (run, skipped) == (2, 0) and deselected == collected - 2 > 30


def test_ci_run_passes_on_its_arguments_and_prints_its_time(tmp_path: Path) -> None:
    """``.ci/run`` under a stand-in test script: CHESSLAB_CI=1 and every test (slow ones too)
    asked for, the stand-in's exit status kept, and the time of the whole run printed."""
    (tmp_path / ".ci").mkdir()
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / ".ci" / "run", tmp_path / ".ci" / "run")
    (tmp_path / "scripts" / "test.sh").write_text(
        'echo "CHESSLAB_CI=$CHESSLAB_CI args:$(printf \' [%s]\' "$@")"\nexit 3\n')
    done = subprocess.run(["bash", str(tmp_path / ".ci" / "run"), "tests/x.py"],
                          capture_output=True, text=True)
    assert done.returncode == 3
    lines = done.stdout.splitlines()
    assert lines[0] == "CHESSLAB_CI=1 args: [-q] [-m] [slow or not slow] [tests/x.py]"
    assert re.fullmatch(r"ci: exit 3 after \d+ min \d+ s \(ruff, mypy and pytest\)", lines[1])
