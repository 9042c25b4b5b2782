"""The ingest's cached DuckDB connections (one per process and thread)."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from pipelines.ingest import lookup


def test_connections_are_per_thread_and_closed_before_a_fork() -> None:
    """A cached connection is never shared by two threads, and none crosses a fork: a child
    that inherited one could hang on locks held by DuckDB's threads at the fork."""
    main = lookup.connection()
    assert lookup.connection() is main
    assert main.execute("select 6 * 7").fetchall() == [(42,)]
    other: list[object] = []
    worker = threading.Thread(target=lambda: other.append(lookup.connection()))
    worker.start()
    worker.join()
    assert other[0] is not main
    pid = os.fork()
    if pid == 0:  # the child: nothing cached may have come along
        os._exit(len(lookup._CONNECTIONS))
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    assert lookup.connection() is not main
    assert lookup.connection().execute("select 1").fetchall() == [(1,)]
    lookup.close_connections()


def test_an_ended_threads_connection_is_closed_when_the_next_is_opened() -> None:
    """``chesslab serve`` runs every flow on new threads: their connections must not pile up."""
    lookup.close_connections()
    worker = threading.Thread(target=lookup.connection)
    worker.start()
    worker.join()
    assert [owner[1] for owner in lookup._CONNECTIONS] == [worker.ident]
    lookup.connection()
    assert [owner[1] for owner in lookup._CONNECTIONS] == [threading.get_ident()]
    lookup.close_connections()


WORKER_IMPORTS = """
import sys, tempfile
import pipelines.die_with_parent, pipelines.ingest.games   # the fork server's preload
print("duckdb" in sys.modules)
from pipelines.ingest import lookup
import pyarrow as pa
found = lookup.stored_lookup("ingest_stored_games", {
    "batch_games": pa.table({"game_id": ["a", "b"]}),
    "known_games": pa.table({"game_id": ["b", "c"], "source_id": ["s", "s"]}),
    "committed_sources": pa.table({"source_id": ["s"]})}, {})
print(found.column("game_id").to_pylist(), "duckdb" in sys.modules)
"""


def test_the_ingest_workers_import_duckdb_only_for_a_lookup() -> None:
    # 0.1 s of the fork server's imports, on the critical path of a two-worker ingest; a
    # fresh warehouse never needs a lookup (the key index answers)
    root = Path(__file__).parents[2]
    done = subprocess.run([sys.executable, "-c", WORKER_IMPORTS], capture_output=True,
                          text=True, timeout=120, check=False,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "['b']", "True"]
