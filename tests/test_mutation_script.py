"""scripts/mutation.sh with a stand-in for mutmut: the copy it works in, the score it prints
from mutmut's results, and MUTATION_RESUME=1 continuing a stopped run (and refusing one made
from other sources); and once with mutmut itself, over tests that write the lake."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "mutation.sh"

# mutmut's two commands as the script uses them: ``run`` (counted in runs.log, in the copy)
# and ``results --all true`` (one "name: status" line a mutant)
FAKE_MUTMUT = """#!/usr/bin/env bash
case "$1" in
  run) echo "run $*" >> runs.log ;;
  results)
    echo "pipelines.models.registry.x_resolve__mutmut_1: killed"
    echo "pipelines.models.registry.x_resolve__mutmut_2: timeout"
    echo "pipelines.models.registry.x_resolve__mutmut_3: survived"
    echo "pipelines.models.registry.x_resolve__mutmut_4: segfault" ;;
esac
"""


def run(tmp: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), "registry"], capture_output=True, text=True,
                          env={**os.environ, "MUTATION_DIR": str(tmp / "work"),
                               "PYTHON": str(tmp / "bin" / "python"), **env},
                          check=False, timeout=120)


def fake_tools(tmp: Path) -> None:
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    mutmut = bin_dir / "mutmut"
    mutmut.write_text(FAKE_MUTMUT)
    mutmut.chmod(0o755)


def test_score_and_survivors_come_from_mutmuts_results(tmp_path: Path) -> None:
    fake_tools(tmp_path)
    done = run(tmp_path)
    assert done.returncode == 0, done.stderr
    # killed, timed out and crashed count as killed (hand count: 3 of 4)
    assert "score: 3/4 killed (75.0%)" in done.stdout
    work = tmp_path / "work" / "registry"
    assert (work / "survivors.txt").read_text() == \
        "pipelines.models.registry.x_resolve__mutmut_3\n"
    assert "only_mutate=\n    pipelines/models/registry.py" in (work / "setup.cfg").read_text()
    assert (work / "pipelines" / "models" / "registry.py").read_bytes() == \
        (ROOT / "pipelines" / "models" / "registry.py").read_bytes()


def test_a_file_and_its_tests_work_in_a_copy_named_after_the_file(tmp_path: Path) -> None:
    """``mutation.sh FILE.py TEST...``: the copy is named after the file (it was named after
    the first test), and mutates that file only."""
    fake_tools(tmp_path)
    done = subprocess.run(["bash", str(SCRIPT), "pipelines/formats/records.py",
                           "tests/pipelines/test_formats_text.py"], capture_output=True, text=True,
                          env={**os.environ, "MUTATION_DIR": str(tmp_path / "work"),
                               "PYTHON": str(tmp_path / "bin" / "python")},
                          check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["records"]
    assert "only_mutate=\n    pipelines/formats/records.py" in \
        (tmp_path / "work" / "records" / "setup.cfg").read_text()


def test_resume_continues_in_the_same_copy_and_a_fresh_run_starts_over(tmp_path: Path) -> None:
    fake_tools(tmp_path)
    work = tmp_path / "work" / "registry"
    assert run(tmp_path).returncode == 0
    resumed = run(tmp_path, MUTATION_RESUME="1")
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming the run in" in resumed.stdout
    assert len((work / "runs.log").read_text().splitlines()) == 2    # the first run's kept
    fresh = run(tmp_path)
    assert fresh.returncode == 0
    assert len((work / "runs.log").read_text().splitlines()) == 1    # a new copy


def test_a_resumed_run_of_named_mutants_runs_only_those_without_a_result(
        tmp_path: Path) -> None:
    """mutmut runs every mutant named on its command line again, finished or not; resumed,
    the script names only the mutants that match and have no result yet, and runs nothing
    when none is left."""
    import json

    fake_tools(tmp_path)
    work = tmp_path / "work" / "registry"
    only = {"MUTATION_ONLY": "pipelines.models.registry.x_resolve__mutmut_*"}
    assert run(tmp_path, **only).returncode == 0
    meta = work / "mutants" / "pipelines" / "models" / "registry.py.meta"
    meta.parent.mkdir(parents=True)
    codes = {"pipelines.models.registry.x_resolve__mutmut_1": 1,
             "pipelines.models.registry.x_resolve__mutmut_2": None,
             "pipelines.models.registry.x_resolve__mutmut_3": 0,
             "pipelines.models.registry.x_list_models__mutmut_1": None}
    meta.write_text(json.dumps({"exit_code_by_key": codes}))
    resumed = run(tmp_path, MUTATION_RESUME="1", **only)
    assert resumed.returncode == 0, resumed.stderr
    assert "1 mutants without a result" in resumed.stdout
    assert (work / "runs.log").read_text().splitlines()[1] == \
        "run run --max-children 2 pipelines.models.registry.x_resolve__mutmut_2"
    codes["pipelines.models.registry.x_resolve__mutmut_2"] = 1
    meta.write_text(json.dumps({"exit_code_by_key": codes}))
    finished = run(tmp_path, MUTATION_RESUME="1", **only)
    assert finished.returncode == 0, finished.stderr
    assert "0 mutants without a result" in finished.stdout
    assert "score: 3/4 killed" in finished.stdout                 # the results still read
    assert len((work / "runs.log").read_text().splitlines()) == 2  # mutmut not run again


def test_resume_of_a_copy_made_from_other_sources_is_refused(tmp_path: Path) -> None:
    fake_tools(tmp_path)
    work = tmp_path / "work" / "registry"
    assert run(tmp_path).returncode == 0
    (work / ".source").write_text("0123456789abcdef\n")     # as if registry.py had changed
    refused = run(tmp_path, MUTATION_RESUME="1")
    assert refused.returncode == 2
    assert "was made from other sources" in refused.stderr
    assert len((work / "runs.log").read_text().splitlines()) == 1    # nothing run, nothing lost


@pytest.mark.slow
def test_a_mutant_the_lake_tests_cannot_tell_apart_survives(tmp_path: Path) -> None:
    """Real mutmut over the registry's ``list_models``, whose test writes the lake. Run in
    mutmut's default isolation (each mutant forked from the process that ran the clean tests),
    deltalake panicked in every mutant ("Forked process detected") and every mutant counted
    as killed, so modules tested through the lake scored 100%. With the fork server a mutant
    the tests cannot tell apart survives: DuckDB's named parameters are case-insensitive
    (checked here), so ``{"KIND": kind}`` for ``{"kind": kind}`` changes nothing."""
    import duckdb

    assert duckdb.connect().execute("select $kind", {"KIND": 7}).fetchone() == (7,)
    done = subprocess.run(
        ["bash", str(SCRIPT), "registry"], capture_output=True, text=True, check=False,
        env={**os.environ, "MUTATION_DIR": str(tmp_path),
             "MUTATION_ONLY": "pipelines.models.registry.x_list_models__mutmut_*"},
        timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    survivors = (tmp_path / "registry" / "survivors.txt").read_text().split()
    assert survivors, done.stdout
    mutated = (tmp_path / "registry" / "mutants" / "pipelines" / "models" / "registry.py"
               ).read_text()
    for name in survivors:
        body = mutated.split(f"def {name.rsplit('.', 1)[1]}(", 1)[1].split("\ndef ", 1)[0]
        assert '{"KIND": kind}' in body, (name, body)
    killed = [line for line in done.stdout.splitlines() if line.startswith("score:")]
    assert killed and not killed[0].startswith("score: 0/"), done.stdout
