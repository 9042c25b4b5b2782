"""Child processes that die with their parent.

Every process chesslab starts (engines, ingest pool workers, the temporary Prefect server)
runs in its own process group, so a Ctrl-C at the terminal reaches only chesslab, which ends
them itself, and asks Linux for ``SIGKILL`` when the thread that started it ends
(``prctl(PR_SET_PDEATHSIG)``), so a ``kill -9`` of chesslab leaves none of them behind.

>>> import subprocess
>>> child = subprocess.Popen(["true"], preexec_fn=die_with_parent)
>>> child.wait()
0
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal

PR_SET_PDEATHSIG = 1

try:  # resolved once here: a preexec function must not load libraries after fork
    _prctl = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
except (OSError, AttributeError):  # not Linux: children only get their own group
    _prctl = None


def die_with_parent() -> None:
    """Start a process group and ask for SIGKILL when the parent thread ends.

    Safe as a ``preexec_fn`` (runs between fork and exec) or a pool ``initializer``.
    """
    os.setpgrp()
    if _prctl is not None:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
