"""The Delta log stays short to load: chesslab's tables checkpoint every CHECKPOINT_INTERVAL
commits, and a lake reuses its loaded table (brought up to date) instead of loading the log
again, without missing another writer's commit or a table made again in the same folder."""
from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from warehouse import Lake
from warehouse.commits import CHECKPOINT_INTERVAL, CHECKPOINT_PROPERTY
from warehouse.schema import storage_schema, to_storage
from warehouse.tables import table


def positions(keys: list[int]) -> list[dict[str, object]]:
    return [{"position_key": key, "fen": f"8/8/8/8/8/8/8/K6k w - - {key}"} for key in keys]


def checkpoints(folder: Path) -> list[int]:
    """The versions the table's log has a checkpoint of (Delta's file names)."""
    return sorted(int(p.name.split(".")[0])
                  for p in (folder / "_delta_log").glob("*.checkpoint.parquet"))


def test_a_table_chesslab_creates_checkpoints_every_interval(home: Path) -> None:
    """The table is created with delta.checkpointInterval; after that many commits its log
    has a checkpoint (deltalake's default, 100, would have none yet), and each later load
    replays fewer than that many commits; the rows are all there."""
    lake = Lake(home)
    for key in range(1, 2 * CHECKPOINT_INTERVAL + 2):
        assert lake.write("positions", positions([key])) == 1
    folder = lake.table_dir("positions")
    delta = DeltaTable(str(folder))
    assert delta.metadata().configuration[CHECKPOINT_PROPERTY] == str(CHECKPOINT_INTERVAL)
    assert CHECKPOINT_INTERVAL < 100
    # version 0 creates the table, versions 1.. are the writes; Delta checkpoints a version
    # v with (v + 1) % interval == 0
    assert checkpoints(folder) == [CHECKPOINT_INTERVAL - 1, 2 * CHECKPOINT_INTERVAL - 1]
    assert lake.read("positions").num_rows == 2 * CHECKPOINT_INTERVAL + 1


def test_a_table_made_without_the_interval_gets_it_at_its_next_write(home: Path) -> None:
    """A table an older chesslab made (no checkpoint property) is given it by its next
    write (one commit), and its rows are kept."""
    lake = Lake(home)
    spec = table("positions")
    folder = lake.table_dir("positions")
    folder.mkdir(parents=True)
    DeltaTable.create(str(folder), schema=storage_schema(spec.schema), name="positions")
    write_deltalake(str(folder), to_storage(
        pa.Table.from_pylist(positions([1]), schema=spec.schema)), mode="append")
    assert CHECKPOINT_PROPERTY not in DeltaTable(str(folder)).metadata().configuration
    assert lake.write("positions", positions([1, 2])) == 1
    delta = DeltaTable(str(folder))
    assert delta.metadata().configuration[CHECKPOINT_PROPERTY] == str(CHECKPOINT_INTERVAL)
    assert sorted(lake.read("positions").column("position_key").to_pylist()) == [1, 2]


def test_a_lake_sees_another_writers_commit(home: Path) -> None:
    """The lake's loaded table is brought up to date: a commit by another writer (deltalake
    directly, as another process would; and a lake on another thread) is seen by the next
    version, parts and read, and a keyed write does not store its key again."""
    lake = Lake(home)
    lake.write("positions", positions([1]))
    assert lake.version("positions") == 1 and len(lake.parts("positions")) == 1
    spec = table("positions")
    write_deltalake(str(lake.table_dir("positions")), to_storage(
        pa.Table.from_pylist(positions([2]), schema=spec.schema)), mode="append")
    assert lake.version("positions") == 2 and len(lake.parts("positions")) == 2
    assert lake.write("positions", positions([2, 3])) == 1     # 2 is stored: only 3
    other = threading.Thread(target=lambda: Lake(home).write("positions", positions([4])))
    other.start()
    other.join()
    assert lake.version("positions") == 4
    assert lake.write("positions", positions([4, 5])) == 1
    assert sorted(lake.read("positions").column("position_key").to_pylist()) == [1, 2, 3, 4, 5]


def test_a_table_made_again_in_its_folder_is_loaded_again(home: Path) -> None:
    """A table folder deleted and written again (another table, the same versions) is not
    mistaken for the table the lake had loaded."""
    lake = Lake(home)
    lake.write("positions", positions([1]))
    lake.write("positions", positions([2]))
    assert lake.version("positions") == 2
    shutil.rmtree(lake.table_dir("positions"))
    assert lake.version("positions") == -1 and lake.parts("positions") == []
    lake.write("positions", positions([7]))
    lake.write("positions", positions([8]))
    assert lake.version("positions") == 2
    assert sorted(lake.read("positions").column("position_key").to_pylist()) == [7, 8]


def test_a_writers_own_commits_do_not_reload_its_table(home: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A lake's commits (a keyed staged write, a plain append) move its cached table to the
    version they made: the next write brings it up to date from there, and the table's log
    is loaded once per table, not once per write (the cache kept the mark of the version
    before the commit, and took the table for another one)."""
    loads: list[str] = []

    class Counted(DeltaTable):
        def __init__(self, table_uri: str, *args: Any, **kwargs: Any) -> None:
            loads.append(Path(table_uri).name)
            super().__init__(table_uri, *args, **kwargs)

    for module in ("warehouse.lake", "warehouse.commits", "warehouse.tablecache"):
        monkeypatch.setattr(f"{module}.DeltaTable", Counted)   # where the lake loads tables
    lake = Lake(home)

    def write(key: int) -> None:
        assert lake.write("positions", positions([key, key + 100])) == 2
        lake.write("ingest_errors", [{"source_id": "s", "path": "p", "kind": "bad_tag",
                                      "message": f"m{key}"}])

    write(1)    # each table created and loaded (the table's creation counts too)
    first = sorted(loads)
    assert set(first) == {"ingest_errors", "positions"}
    for key in range(2, 6):
        write(key)
    assert sorted(loads) == first
    assert lake.version("positions") == 5 and lake.version("ingest_errors") == 5
    assert sorted(lake.read("positions").column("position_key").to_pylist()) == \
        [*range(1, 6), *range(101, 106)]
    assert lake.read("ingest_errors").num_rows == 5
