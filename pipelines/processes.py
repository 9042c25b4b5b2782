"""Child processes that die with their parent.

Every process chesslab starts (engines, ingest pool workers, the temporary Prefect server)
runs in its own process group, so a Ctrl-C at the terminal reaches only chesslab, which ends
them itself, and asks Linux for ``SIGKILL`` when the thread that started it ends
(``PR_SET_PDEATHSIG``), so a ``kill -9`` of chesslab leaves none of them behind.

Programs are started with :func:`orphan_safe` and :data:`OWN_GROUP`: util-linux's ``setpriv
--pdeathsig KILL`` sets the death signal and execs the program, and ``process_group=0`` is done
by the C fork code. No Python runs between fork and exec: a ``preexec_fn`` does, which crashes
the child (SIGSEGV) once the parent has threads of the Delta Lake runtime or DuckDB.

>>> import subprocess
>>> subprocess.run(orphan_safe(["true"]), **OWN_GROUP).returncode
0
"""
from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import shutil
import signal
import time
from collections.abc import Sequence
from typing import Any

PR_SET_PDEATHSIG = 1

_prctl: Any
try:  # resolved once, at import
    _prctl = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
except (OSError, AttributeError):  # not Linux: children only get their own group
    _prctl = None


#: util-linux's setpriv, which sets the parent-death signal and execs (None: not installed).
SETPRIV = shutil.which("setpriv")
#: Popen arguments that start the child in its own process group (C-level, fork-safe).
OWN_GROUP: dict[str, Any] = {"process_group": 0}


def orphan_safe(command: Sequence[str]) -> list[str]:
    """``command`` run so that it gets SIGKILL when the starting thread ends. A program that
    cannot be run raises here, as ``Popen`` itself would (FileNotFoundError, PermissionError),
    rather than as a child that exits 127.

    >>> orphan_safe(["true"])[-2:]
    ['--', 'true']
    >>> orphan_safe(["/no/such/engine"])
    Traceback (most recent call last):
    FileNotFoundError: [Errno 2] No such file or directory: '/no/such/engine'
    """
    program = shutil.which(command[0]) if command else None
    if program is None:
        name = command[0] if command else ""
        code = errno.EACCES if name and os.path.exists(name) else errno.ENOENT
        raise OSError(code, os.strerror(code), name)
    if SETPRIV is None:
        return list(command)
    return [SETPRIV, "--pdeathsig", "KILL", "--", *command]


def die_with_parent() -> None:
    """Start a process group and ask for SIGKILL when the parent thread ends.

    For a process that runs Python anyway: a pool worker's ``initializer``, a fork server's
    preload. Never a ``preexec_fn`` (see the module docstring). A session leader (started by
    ``setsid``) already leads its own process group and may not start another: it keeps it.
    """
    if os.getsid(0) != os.getpid():
        os.setpgrp()
    set_death_signal()


def set_death_signal() -> None:
    """Ask for SIGKILL when the parent thread ends (no new process group: a process whose
    parent ends it with its group, as ``chesslab serve``'s runs)."""
    if _prctl is not None:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def children(pid: int | None = None) -> list[int]:
    """The living (not zombie) direct children of ``pid`` (default: this process), from /proc.

    >>> import subprocess, sys
    >>> child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    >>> child.pid in children()
    True
    >>> child.kill(); child.wait()
    -9
    >>> child.pid in children()
    False
    """
    parent = os.getpid() if pid is None else pid
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(") ", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == parent and fields[0] != "Z":
            found.append(int(entry))
    return sorted(found)


def end_children(grace_s: float = 2.0) -> list[int]:
    """End this process's children, each with its process group when it leads one (the
    temporary Prefect server, a served flow run): SIGTERM, then SIGKILL to those still
    alive after ``grace_s``. The pids that were running. Safe in a signal handler (no lock
    is taken)."""
    running = children()

    def signal_all(sig: int, pids: list[int]) -> None:
        for pid in pids:
            try:
                if os.getpgid(pid) == pid:
                    os.killpg(pid, sig)
                else:
                    os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                continue

    signal_all(signal.SIGTERM, running)
    deadline = time.monotonic() + grace_s
    while (left := [p for p in children() if p in running]) and time.monotonic() < deadline:
        time.sleep(0.05)
    signal_all(signal.SIGKILL, left)
    return running


def forkserver_pool(workers: int, preload: Sequence[str]) -> Any:
    """A ``ProcessPoolExecutor`` of ``workers`` processes from a fork server that imports
    ``preload`` once. Never a plain fork: the lake's runtime does not survive a fork after
    use, and the caller may run threads. The fork server, its resource tracker and every
    worker die with this process (``pipelines.die_with_parent``), even after a ``kill -9``.

    The fork server is started here, by the calling thread (it dies when that thread ends),
    without waiting for its imports: the pool's workers may then be started from another
    thread (the first one waits for the imports), one that may end before the pool does.
    """
    import multiprocessing
    import multiprocessing.forkserver
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["pipelines.die_with_parent", *preload])
    multiprocessing.forkserver.ensure_running()
    return ProcessPoolExecutor(max_workers=workers, mp_context=context,
                               initializer=die_with_parent)
