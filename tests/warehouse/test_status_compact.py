"""`chesslab status` and `chesslab compact` on a small warehouse whose contents the test wrote
itself, so every count they print is known in advance."""
from __future__ import annotations

from pathlib import Path

import pytest

from flows.cli import main
from warehouse import Lake
from warehouse.tables import REGISTRY

FENS = ["rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -",
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -",
        "8/8/8/8/8/8/8/K6k w - -",
        "4k3/8/8/8/8/8/4P3/4K3 b - -"]


def fill(lake: Lake) -> None:
    """Four positions written in two commits; sf-15.1 labels three of them at depth 5 and
    one at depth 6, in three commits (so labels has three files per depth at most)."""
    lake.write("positions", [{"position_key": k, "fen": FENS[k - 1]} for k in (1, 2)])
    lake.write("positions", [{"position_key": k, "fen": FENS[k - 1]} for k in (3, 4)])
    lake.write("engines", [{"engine_id": "sf-15.1-abcd1234", "name": "Stockfish",
                            "version": "15.1"}])
    for keys, depth in (([1, 2], 5), ([3], 5), ([1], 6)):
        lake.write("labels", [{"position_key": k, "engine_id": "sf-15.1-abcd1234",
                               "depth": depth, "score_cp": 10 * k} for k in keys])


def rows(lake: Lake, name: str) -> list[dict[str, object]]:
    return sorted(lake.read(name).to_pylist(),
                  key=lambda row: (row["position_key"], row.get("depth", 0)))


def table_lines(out: str) -> dict[str, list[str]]:
    """The rows of status's first table, by table name: [rows, parts]."""
    return {fields[0]: fields[1:] for line in out.splitlines()
            if (fields := line.split()) and fields[0] in REGISTRY and len(fields) == 3}


def test_status_prints_rows_parts_and_coverage(home: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Rows and part files per table, every table listed (empty ones 0 and 0), and the
    labelled positions per engine and depth with their share of the 4 positions."""
    fill(Lake(home))
    assert main(["--home", str(home), "status"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"home: {home}"
    rows = table_lines(out)
    assert set(rows) == set(REGISTRY)
    assert rows["positions"] == ["4", "2"]
    assert rows["engines"] == ["1", "1"]
    assert rows["labels"] == ["4", "3"]    # depth 5 in two files, depth 6 in one
    assert all(rows[name] == ["0", "0"] for name in REGISTRY
               if name not in ("positions", "engines", "labels"))
    coverage = out.split("labelled positions per engine and depth:")[1].splitlines()
    assert [line.split() for line in coverage[3:]] == [
        ["Stockfish", "15.1", "sf-15.1-abcd1234", "5", "3", "75"],
        ["Stockfish", "15.1", "sf-15.1-abcd1234", "6", "1", "25"]]


def test_status_of_a_missing_or_empty_warehouse(home: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """No home: one line naming it, exit 2. A warehouse with no table yet: every table at 0
    rows in 0 files, and no label coverage."""
    assert main(["--home", str(home), "status"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"chesslab status: error: no warehouse at {home}") and "\n" not in err
    (home / "lake").mkdir(parents=True)
    assert main(["--home", str(home), "status"]) == 0
    out = capsys.readouterr().out
    assert set(table_lines(out)) == set(REGISTRY)
    assert all(counts == ["0", "0"] for counts in table_lines(out).values())
    assert out.rstrip().endswith("(none yet)")


def test_compact_merges_files_and_vacuums_the_old_ones(home: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    """`compact positions labels --retain-hours 0`: positions' two files become one, each
    depth of labels one file; the files no version needs are deleted from disk; every row
    is still there; the derived position_facts and label_counts (3 groups of labels; no
    label has a best move, so label_depth_pairs has no row, and nothing changed since
    position_facts was computed, so label_counts_overlay has none) are computed; a second
    compact has nothing to do and prints nothing."""
    lake = Lake(home)
    fill(lake)
    before = {name: rows(lake, name) for name in ("positions", "labels")}
    assert main(["--home", str(home), "compact", "positions", "labels",
                 "--retain-hours", "0"]) == 0
    assert capsys.readouterr().out.splitlines() == ["positions: 2 files -> 1",
                                                    "labels: 3 files -> 2",
                                                    "position_facts: 4 rows kept (derived)",
                                                    "label_counts: 3 rows kept (derived)"]
    for name in ("positions", "labels"):
        assert rows(lake, name) == before[name], name
        on_disk = sorted(p for p in lake.table_dir(name).rglob("*.parquet")
                         if "_delta_log" not in p.parts)     # not the log's checkpoints
        assert on_disk == lake.parts(name), name
    assert main(["--home", str(home), "compact", "--retain-hours", "0"]) == 0
    assert capsys.readouterr().out == ""


def test_compact_keeps_files_time_travel_needs(home: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """With the default retention (168 hours) the merged files are still on disk, so the
    version before the compaction can still be read."""
    lake = Lake(home)
    fill(lake)
    version = lake.version("positions")
    assert main(["--home", str(home), "compact", "positions"]) == 0
    assert capsys.readouterr().out.splitlines() == ["positions: 2 files -> 1",
                                                    "position_facts: 4 rows kept (derived)",
                                                    "label_counts: 3 rows kept (derived)"]
    assert len([p for p in lake.table_dir("positions").rglob("*.parquet")
                if "_delta_log" not in p.parts]) == 3
    assert lake.read("positions", version=version).num_rows == 4
