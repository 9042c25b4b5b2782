"""A killed import of training data resumes without duplicates: kill -9 `chesslab ingest` of a
JSONL file once batches are committed; the same command resumes after the last committed batch
(it says so) and ends with the rows, counts and sources row a clean import gives."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.dataset as ds

from engines.core.position import CoreBoard
from flows.ingest import INGEST, IngestJob
from flows.step import run_step
from pipelines.ingest import IngestConfig
from warehouse import Lake, connect

ROOT = Path(__file__).resolve().parents[2]


def evaluation_file(path: Path, positions: int, seed: int) -> Path:
    """Lichess evaluation lines of distinct positions (two evals each), every 500th line bad."""
    rng, seen, lines = random.Random(seed), set(), []
    while len(lines) < positions:
        board = CoreBoard()
        for _ in range(rng.randrange(10, 100)):
            moves = board.legal_moves()
            if not moves:
                break
            board.push(rng.choice(moves))
            fen = board.epd()
            if fen in seen:
                continue
            seen.add(fen)
            score = rng.randrange(-500, 500)
            evals = [{"pvs": [{"cp": score, "line": "a1a1"}], "knodes": 7, "depth": 20},
                     {"pvs": [{"cp": score + 3, "line": "a1a1"}], "knodes": 1, "depth": 12}]
            lines.append(json.dumps({"fen": fen, "evals": evals}) if len(lines) % 500 != 499
                         else "{broken json")
    path.write_text("\n".join(lines[:positions]) + "\n")
    return path


def rows_in_files(lake: Lake, table: str) -> int:
    """Rows in the table's current files, as any Parquet reader counts them."""
    return ds.dataset([str(p) for p in lake.parts(table)]).count_rows()


def test_a_killed_import_resumes_after_its_last_commit(tmp_path: Path) -> None:
    path = evaluation_file(tmp_path / "evals.jsonl", 12_000, 5)
    home = tmp_path / "home"
    command = [sys.executable, "-m", "flows.cli", "--home", str(home), "ingest", "--no-prefect",
               "--workers", "1", "--flush-records", "1000", "--block-bytes", "65536", str(path)]
    run = subprocess.Popen(command, cwd=ROOT, start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lake = Lake(home)
    deadline = time.monotonic() + 120
    while lake.version("ingest_progress") < 2 and run.poll() is None \
            and time.monotonic() < deadline:
        time.sleep(0.01)
    os.killpg(run.pid, signal.SIGKILL)
    run.wait()
    assert lake.version("sources") < 0, "the import finished before it was killed"
    committed = connect(lake).execute("select max(line) from ingest_progress").fetchone()[0]
    assert 0 < committed < 12_000
    rerun = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert "resuming after line" in rerun.stderr
    clean = Lake(tmp_path / "clean")
    [expected] = run_step(INGEST, IngestJob((path,), IngestConfig(workers=1)), clean)
    assert (expected.records, expected.labels, expected.errors) == (12_000, 23_952, 24)
    con = connect(lake)
    source = con.execute("select records, labels, errors, new_positions, duplicates "
                         "from sources").fetchone()
    assert source == (expected.records, expected.labels, expected.errors,
                      expected.new_positions, expected.duplicates)
    for table, count in (("labels", expected.labels), ("positions", expected.new_positions),
                         ("ingest_errors", expected.errors)):
        assert rows_in_files(lake, table) == count, table
    assert con.execute("select count(distinct (position_key, depth)) from labels").fetchone() \
        == (expected.labels,)
