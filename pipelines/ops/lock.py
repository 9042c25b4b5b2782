"""One scheduled job at a time per warehouse: an exclusive ``flock`` on
``<home>/ops/<job>.lock``. A second run of the same job (two schedules firing, a trigger
during a scheduled run) waits for the first and then finds its work done; the kernel releases
the lock of a killed run."""
from __future__ import annotations

import contextlib
import fcntl
import logging
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger(__name__)


@contextlib.contextmanager
def job_lock(home: Path, job: str) -> Iterator[None]:
    """Hold ``job``'s lock of ``home`` for the block (waiting while another run holds it)."""
    folder = home / "ops"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{job}.lock", "a+b") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("%s: another run holds %s; waiting for it", job, handle.name)
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
