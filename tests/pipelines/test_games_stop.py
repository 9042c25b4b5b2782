"""A batch's stop watch: it waits on the run's event at the scheduler instead of asking it."""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from distributed import Client, Event, LocalCluster

from pipelines.games import cluster as games_cluster
from pipelines.games.cluster import StopWatch


@pytest.fixture
def client() -> Iterator[tuple[Client, Counter[str]]]:
    """A client of an in-process cluster whose scheduler counts the event requests it
    answers."""
    with LocalCluster(n_workers=1, processes=False, threads_per_worker=2,
                      dashboard_address=None) as local, Client(local) as c:
        asked: Counter[str] = Counter()
        handlers = local.scheduler.handlers
        for name in ("event_wait", "event_is_set"):
            handlers[name] = counted(handlers[name], name, asked)
        yield c, asked


def counted(handler: Any, name: str, asked: Counter[str]) -> Any:
    async def count(*args: Any, **kwargs: Any) -> Any:
        asked[name] += 1
        return await handler(*args, **kwargs)
    return count


def watch_for(name: str, seconds: float) -> tuple[int, bool]:
    """On a worker: read a batch's watch every 10 ms for ``seconds``; (reads, whether set)."""
    watch, reads, end = StopWatch(name), 0, time.monotonic() + seconds
    try:
        while time.monotonic() < end and not watch():
            reads += 1
            time.sleep(0.01)
        return reads, watch()
    finally:
        watch.close()


def test_a_playing_batch_asks_the_scheduler_nothing_until_the_stop(
        client: tuple[Client, Counter[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    c, asked = client
    monkeypatch.setattr(games_cluster, "STOP_WAIT_S", 1.0)
    Event("run-1", client=c)
    reads, stopped = c.submit(watch_for, "run-1", 2.5, pure=False).result(timeout=30)
    assert not stopped and reads > 10
    # about 2.5 s of reads: three waits of a second each at the scheduler, no polling (the
    # old poller asked every half second: 5 asks, and one per read without its cache)
    assert asked["event_is_set"] == 0 and asked["event_wait"] <= 3


def test_a_set_event_stops_the_batch_at_once(client: tuple[Client, Counter[str]]) -> None:
    c, _ = client
    event = Event("run-2", client=c)
    watching = c.submit(watch_for, "run-2", 20.0, pure=False)
    time.sleep(1.0)
    set_at = time.monotonic()
    event.set()
    reads, stopped = watching.result(timeout=30)
    assert stopped and reads > 5
    assert time.monotonic() - set_at < 10       # not the 20 s the batch would have run


class Orphaned:
    """An event whose scheduler is gone: every wait fails."""

    def wait(self, timeout: float | None = None) -> bool:
        raise OSError("scheduler gone")


def test_a_watch_without_a_scheduler_counts_as_stopped() -> None:
    """An orphaned batch stops its engines: the wait that fails is taken as the stop."""
    watch = StopWatch("run-3", event=Orphaned())
    try:
        for _ in range(500):
            if watch():
                break
            time.sleep(0.01)
        assert watch()
    finally:
        watch.close()


def watched_twice(name: str) -> tuple[bool, bool, bool]:
    """On a worker: a watch whose event is set after several timed-out waits, and one whose
    event is never set, closed; (the first's thread a daemon, the set event seen, the
    second's thread still alive a few waits after its close)."""
    import threading

    def thread_of(watch_name: str) -> threading.Thread:
        return next(t for t in threading.enumerate() if t.name == f"chesslab-stop-{watch_name}")

    first = StopWatch(name)
    thread = thread_of(name)
    time.sleep(0.7)                                   # three waits of 0.2 s timed out
    Event(name).set()
    end = time.monotonic() + 5
    while not first() and time.monotonic() < end:
        time.sleep(0.01)
    first.close()
    second = StopWatch(f"{name}-never")
    second_thread = thread_of(f"{name}-never")
    second.close()
    second_thread.join(timeout=5)
    return thread.daemon, first(), second_thread.is_alive()


def test_the_watch_waits_again_after_each_timeout_and_ends_after_its_close(
        client: tuple[Client, Counter[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    """The waits at the scheduler time out and are made again while the batch plays (a
    stop set after some is still seen); a closed watch's thread ends after its current wait
    (not a thread left waiting for ever on each batch's event), and it never keeps a worker
    process from exiting (a daemon)."""
    c, _ = client
    monkeypatch.setattr(games_cluster, "STOP_WAIT_S", 0.2)
    assert c.submit(watched_twice, "run-4", pure=False).result(timeout=30) == \
        (True, True, False)
