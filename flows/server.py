"""chesslab's own temporary Prefect server, for commands run without ``PREFECT_API_URL``.

Prefect's ephemeral server outlives a killed command (four of ~214 MB piled up in one test),
so chesslab starts ``prefect server start`` itself: on a free loopback port, in its own
process group, killed by Linux when the command dies (``pipelines.processes``), with a record
``<home>/prefect/server-<command pid>-<port>.json`` (pid, port, command pid). Every step of
the command (``refresh`` and ``demo`` run two) uses that one server.

Each home's servers keep their database in the home (``<home>/prefect/prefect.db``), not in
Prefect's shared one: two homes served on one machine never see each other's deployments
and runs, and a ``serve`` restarted on a home finds the runs its predecessor left.

Before starting its own, a command ends every recorded server whose command is gone (a stale
record; its server can be alive only if something bypassed the parent-death signal). A
server of a command still running is left alone and not shared: it ends with that command,
which could be before this one.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from pipelines.processes import OWN_GROUP, orphan_safe

log = logging.getLogger(__name__)

STARTUP_TIMEOUT_S = 120.0
HEALTH_TIMEOUT_S = 2.0
DATABASE_SETTINGS = ("PREFECT_SERVER_DATABASE_CONNECTION_URL",
                     "PREFECT_API_DATABASE_CONNECTION_URL")


@dataclass(frozen=True)
class ServerRecord:
    """A temporary server: its pid, port and the pid of the command that started it."""

    pid: int
    port: int
    owner: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"


def records_folder(home: Path) -> Path:
    return home / "prefect"


def read_records(folder: Path) -> list[tuple[Path, ServerRecord]]:
    records = []
    for path in sorted(folder.glob("server-*.json")):
        try:
            records.append((path, ServerRecord(**json.loads(path.read_text()))))
        except (OSError, ValueError, TypeError):
            path.unlink(missing_ok=True)     # half-written by a killed command
    return records


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].startswith("Z")


def is_prefect_server(pid: int) -> bool:
    """The process ``pid`` runs ``prefect server start`` (guards against a reused pid)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"prefect" in argv and b"server" in argv


def end_stale(folder: Path) -> list[ServerRecord]:
    """End the servers whose command is gone and drop their records; the ones ended."""
    ended = []
    for path, record in read_records(folder):
        if alive(record.owner):
            continue
        if alive(record.pid) and is_prefect_server(record.pid):
            stop(record.pid)
            ended.append(record)
        path.unlink(missing_ok=True)
    for log_path in folder.glob("server-*.log"):   # the logs of killed commands' servers
        owner = log_path.stem.removeprefix("server-")
        if owner.isdigit() and not alive(int(owner)):
            log_path.unlink(missing_ok=True)
    return ended


def database_url(folder: Path) -> str:
    """The home's own Prefect database (SQLite, in the records folder).

    >>> database_url(Path("/data/home/prefect"))
    'sqlite+aiosqlite:////data/home/prefect/prefect.db'
    """
    return f"sqlite+aiosqlite:///{folder.resolve() / 'prefect.db'}"


def server_environment(folder: Path) -> dict[str, str]:
    """The environment of a temporary server: no UI, the home's own database."""
    env = {k: v for k, v in os.environ.items() if k not in DATABASE_SETTINGS}
    return {**env, "PREFECT_UI_ENABLED": "false",
            DATABASE_SETTINGS[0]: database_url(folder)}


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=HEALTH_TIMEOUT_S) as response:
            return response.status == 200
    except OSError:
        return False


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def failure_reason(log_path: Path) -> str:
    """The line of a server's log that says why it stopped: its last exception line
    (``OSError: [Errno 28] No space left on device``), else "" (the other lines are its
    banner and its access log: no reason).

    >>> import tempfile
    >>> log = Path(tempfile.mkdtemp()) / "server.log"
    >>> _ = log.write_text("Traceback (most recent call last):\\n  File x\\n"
    ...                    "sqlite3.OperationalError: database or disk is full\\n\\n")
    >>> failure_reason(log)
    'sqlite3.OperationalError: database or disk is full'
    """
    try:
        lines = [line.strip() for line in
                 log_path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError as exc:
        return f"its log is unreadable ({exc.strerror})"
    errors = [line for line in lines if re.match(r"^[\w.]*(Error|Exception)\b.*:", line)]
    return errors[-1][:300] if errors else ""


class ServerStartError(RuntimeError):
    """The temporary server did not answer: why, and where its log is."""


def not_started_reason(status: int | None, log_path: Path) -> str:
    """Why a server did not start: still starting at the deadline (``status`` None: a busy
    machine), or exited (its log's last exception line, never a line of its banner).

    >>> import tempfile
    >>> log = Path(tempfile.mkdtemp()) / "server.log"
    >>> _ = log.write_text("The dashboard is disabled. Set `PREFECT_UI_ENABLED=1` to "
    ...                    "re-enable it.\\n")
    >>> not_started_reason(None, log)
    'it did not answer within 120 s (on a busy machine it starts slowly)'
    >>> not_started_reason(1, log)
    'it exited with status 1 and no error line'
    """
    if status is None:
        return (f"it did not answer within {STARTUP_TIMEOUT_S:g} s (on a busy machine it "
                f"starts slowly)")
    reason = failure_reason(log_path)
    return f"it exited with status {status}" + (f": {reason}" if reason else
                                                " and no error line")


def start(folder: Path, services: bool = False
          ) -> tuple[subprocess.Popen[bytes], ServerRecord, Path]:
    """Start a server and write its record (after it answers, so a record means a server).
    Its services (the scheduler above all) run only when asked: ``chesslab serve`` needs
    them, a command's flows do not."""
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log_path = folder / f"server-{os.getpid()}.log"
    with open(log_path, "wb") as log_file:
        process = subprocess.Popen(
            orphan_safe([sys.executable, "-m", "prefect", "server", "start", "--host",
                         "127.0.0.1", "--port", str(port),
                         *([] if services else ["--no-services"])]),
            stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT,
            **OWN_GROUP, env=server_environment(folder))
    record = ServerRecord(process.pid, port, os.getpid())
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not healthy(record.url):
        if process.poll() is not None or time.monotonic() > deadline:
            reason = not_started_reason(process.poll(), log_path)
            stop(process.pid)
            raise ServerStartError(f"the temporary Prefect server did not start: {reason} "
                                   f"(log: {log_path})")
        time.sleep(0.2)
    path = folder / f"server-{os.getpid()}-{port}.json"
    temporary = path.with_name("." + path.name)
    temporary.write_text(json.dumps(asdict(record)))
    temporary.rename(path)
    return process, record, path


def stop(pid: int) -> None:
    """End a server's process group: SIGTERM, then SIGKILL after two seconds."""
    for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 2.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)
        deadline = time.monotonic() + wait
        while alive(pid) and time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
            time.sleep(0.05)
        if not alive(pid):
            return


#: What to do when the temporary server does not start, by who asked for it.
RUN_ADVICE = ("run the command without --prefect (in this process), or set PREFECT_API_URL "
              "to a running Prefect server ('prefect server start')")
SERVE_ADVICE = ("set PREFECT_API_URL to a running Prefect server ('prefect server start') and "
                "start chesslab serve again")


@contextlib.contextmanager
def temporary_server(home: Path, services: bool = False,
                     advice: str = RUN_ADVICE) -> Iterator[str]:
    """The API URL of a healthy temporary server for the duration of the block; one that
    does not start is a :class:`ServerStartError` that says why and ``advice``."""
    folder = records_folder(home)
    for record in end_stale(folder):
        log.info("ended a stale temporary Prefect server (pid %d)", record.pid)
    try:
        process, record, path = start(folder, services)
    except ServerStartError as exc:
        raise ServerStartError(f"{exc}; {advice}") from None
    try:
        yield record.url
    finally:
        path.unlink(missing_ok=True)
        stop(process.pid)
        process.wait()
        (folder / f"server-{os.getpid()}.log").unlink(missing_ok=True)
