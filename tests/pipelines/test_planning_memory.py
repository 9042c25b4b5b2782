"""Planning a run takes memory for its batch, not for the warehouse (issue 35 §3).

Each measurement runs in a child process that imports everything first, resets its peak RSS
(``/proc/self/clear_refs``), plans, and reports the peak above what it held before
(``VmHWM``; ``getrusage``'s ``ru_maxrss`` would carry the parent's peak over ``exec``): the
same work on a home ten times bigger must stay within a bound that does not scale with the
warehouse. No time is asserted. Planning ``label --limit 500`` once grouped every candidate
position with its FEN in DuckDB: about 340 bytes per position stored (230 MB at 54k positions,
1.25 GB at 3.1M), 120 MB more here for the bigger home; now about 9 MB more.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pytest

from pipelines.label import LabelConfig, pending_positions
from warehouse import Lake

SMALL, BIG = 25_000, 250_000
# FENs as long as real ones (random boards: planning never parses them)
PIECES = "pnbrqkPNBRQK11111111"

CHILD = textwrap.dedent("""
    import json, sys
    from pipelines.label import LabelConfig, pending_positions
    from warehouse import Lake, connect

    def status(field):
        line = next(l for l in open("/proc/self/status") if l.startswith(field + ":"))
        return int(line.split()[1]) * 1024

    connect(Lake(sys.argv[1])).close()          # DuckDB and the views loaded once
    open("/proc/self/clear_refs", "w").write("5")   # the peak (VmHWM) starts again here
    before = status("VmRSS")
    planned = pending_positions(Lake(sys.argv[1]), LabelConfig(depths=(7, 8), limit=500),
                                "memory-test-engine")
    print(json.dumps({"planned": len(planned), "first": planned[0].position_key,
                      "grown": status("VmHWM") - before}))
""")


def random_fen(rng: random.Random) -> str:
    board = "/".join("".join(rng.choice(PIECES) for _ in range(8)) for _ in range(8))
    return f"{board} {rng.choice('wb')} KQkq -"


def fill(lake: Lake, count: int, seed: int, step: int = 5000) -> int:
    """``count`` positions with random keys and distinct FENs, written in commits of ``step``
    (files of the same size in a small home and a big one: DuckDB's scan buffers grow with
    the row groups, up to about 50,000 rows); returns the least key."""
    rng = random.Random(seed)
    boards = [random_fen(rng) for _ in range(997)]
    least = 2**64
    for start in range(0, count, step):
        keys = [rng.getrandbits(64) for _ in range(min(step, count - start))]
        least = min(least, *keys)
        lake.write("positions", pa.table({
            "position_key": pa.array(keys, pa.uint64()),
            "fen": [f"{boards[i % 997]} 0 {i}" for i in range(start, start + len(keys))],
            "source_id": pa.repeat("memory-test", len(keys)),
            "first_seen": pa.repeat(pa.scalar(datetime.now(UTC), pa.timestamp("us", "UTC")),
                                    len(keys))}))
    return least


def planning_growth(home: Path) -> dict[str, int]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-c", CHILD, str(home)], capture_output=True,
                          text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_label_planning_memory_does_not_grow_with_the_warehouse(tmp_path: Path) -> None:
    small_home, big_home = tmp_path / "small", tmp_path / "big"
    small_least = fill(Lake(small_home), SMALL, seed=1)
    big_least = fill(Lake(big_home), BIG, seed=2)
    small, big = planning_growth(small_home), planning_growth(big_home)
    # the plan itself is right: 500 positions from the least key up
    assert (small["planned"], small["first"]) == (500, small_least)
    assert (big["planned"], big["first"]) == (500, big_least)
    # 225,000 more positions stored: the old plan's peak grew by 120 MB more (530 B each)
    assert big["grown"] < small["grown"] + 30 * 2**20, (small, big)


def test_label_planning_in_process_matches_python(tmp_path: Path) -> None:
    """The top-N plan gives the same positions and depths as a plain Python plan: the first
    ``limit`` keys missing a depth, some depths already labelled."""
    lake = Lake(tmp_path / "home")
    rng = random.Random(5)
    keys = sorted({rng.getrandbits(64) for _ in range(3000)})
    lake.write("positions", pa.table({
        "position_key": pa.array(keys, pa.uint64()), "fen": [random_fen(rng) for _ in keys],
        "source_id": pa.repeat("t", len(keys)),
        "first_seen": pa.repeat(pa.scalar(datetime.now(UTC), pa.timestamp("us", "UTC")),
                                len(keys))}))
    done = {(k, d) for k in keys[:400] for d in (5, 6) if rng.random() < 0.6}
    lake.write("labels", [{"position_key": k, "engine_id": "e", "depth": d, "score_cp": 1,
                           "white_cp": 1, "run_id": "r", "labelled_at": datetime.now(UTC)}
                          for k, d in sorted(done)])
    planned = pending_positions(lake, LabelConfig(depths=(5, 6), limit=150), "e")
    wanted = [(k, tuple(d for d in (5, 6) if (k, d) not in done)) for k in keys]
    wanted = [(k, depths) for k, depths in wanted if depths][:150]
    assert [(p.position_key, p.depths) for p in planned] == wanted


@pytest.mark.parametrize("limit", [1, 7])
def test_label_planning_limit_counts_positions_not_pairs(tmp_path: Path, limit: int) -> None:
    """With several depths missing per position, the limit is still a number of positions."""
    lake = Lake(tmp_path / "home")
    fill(lake, 100, seed=3)
    planned = pending_positions(lake, LabelConfig(depths=(4, 5, 6), limit=limit), "e")
    assert len(planned) == limit and all(p.depths == (4, 5, 6) for p in planned)
