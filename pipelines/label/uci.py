"""A minimal UCI driver over raw pipes, fast enough to match a bare loop around Stockfish.

python-chess's asyncio engine costs an event loop round trip per line; labelling sends
thousands of short searches, so this driver writes commands and reads whole chunks of the
engine's output with ``select`` (which also gives every read a deadline).

Kh2 is White's only legal move here (g1 and g2 touch the black king on f2):

>>> engine = UciClient("/usr/games/stockfish", {"Threads": "1"})
>>> engine.search("8/8/8/8/8/8/5k2/7K w - -", "go depth 3", timeout_s=30).bestmove
'h1h2'
>>> engine.quit()
"""
from __future__ import annotations

import logging
import os
import select
import subprocess
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

from pipelines.processes import OWN_GROUP, orphan_safe

log = logging.getLogger(__name__)

HANDSHAKE_TIMEOUT_S = 30.0
QUIT_GRACE_S = 1.0
READ_CHUNK = 1 << 16


class EngineError(RuntimeError):
    """The engine process misbehaved: it died, hung or spoke something other than UCI."""


class EngineCrashed(EngineError):
    """The engine exited (or closed its output) in the middle of a command."""


class EngineTimeout(EngineError):
    """The engine did not answer before the deadline."""


@dataclass(frozen=True)
class SearchOutput:
    """What one ``go`` printed: every ``info depth`` line and the ``bestmove`` token."""

    info: list[str]
    bestmove: str | None   # None for "bestmove (none)": the side to move has no legal move
    seconds: float         # waited for this output


class UciClient:
    """The client side of UCI: one engine process (Stockfish) that we drive, spoken to line
    by line (:class:`engines.uci.UciEngine` is the other side, our engines' front end).

    ``options`` are sent with ``setoption`` after the handshake; ``name`` is the engine's
    ``id name``. Any failure raises :class:`EngineError` and leaves the process killed.
    """

    def __init__(self, path: str, options: Mapping[str, str]) -> None:
        self.path = path
        self.options = dict(options)
        try:
            self.process = subprocess.Popen(
                orphan_safe([path]), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, bufsize=0, **OWN_GROUP)
        except OSError as exc:
            raise EngineError(f"cannot start engine {path!r}: {exc.strerror or exc}") from None
        self._fd = self.process.stdout.fileno()  # type: ignore[union-attr]
        self._pending = b""
        self._lines: deque[str] = deque()
        self.name = ""
        self._handshake()

    def __repr__(self) -> str:
        return f"UciClient({self.path!r}, pid={self.process.pid})"

    def _handshake(self) -> None:
        deadline = time.monotonic() + HANDSHAKE_TIMEOUT_S
        try:
            self.send("uci")
            for line in self._read_until("uciok", deadline):
                if line.startswith("id name "):
                    self.name = line[len("id name "):].strip()
            self.send(*(f"setoption name {k} value {v}" for k, v in self.options.items()))
            self.send("isready")
            self._read_until("readyok", deadline)
        except EngineError:
            self.kill()
            raise

    def send(self, *commands: str) -> None:
        """Write commands, one per line, in a single write."""
        if not commands:
            return
        try:
            self.process.stdin.write(("\n".join(commands) + "\n").encode())  # type: ignore[union-attr]
        except (BrokenPipeError, ValueError, OSError):
            raise EngineCrashed(self._death_note("while writing")) from None

    def search(self, fen: str, go: str, timeout_s: float) -> SearchOutput:
        """A fresh search (``ucinewgame``) of ``fen`` with ``go`` (e.g. ``go depth 7``).

        The process is killed on a timeout or a crash, so the caller restarts it.
        """
        self.start_search(fen, go)
        return self.finish_search(timeout_s)

    def start_search(self, fen: str, go: str) -> None:
        """Send a search without waiting for it.

        Searches can be queued: Stockfish's ``ucinewgame`` waits for the running search to
        finish, so queued ones run one after the other and their outputs arrive in order.
        """
        try:
            self.send("ucinewgame", "isready", f"position fen {fen}", go)
        except EngineError:
            self.kill()
            raise

    def finish_search(self, timeout_s: float) -> SearchOutput:
        """Read the oldest queued search's output up to ``bestmove``, within ``timeout_s``."""
        started = time.monotonic()
        deadline = started + timeout_s
        try:
            self._read_until("readyok", deadline)
            return self._read_search(started, deadline)
        except EngineError:
            self.kill()
            raise

    def new_game(self, timeout_s: float) -> None:
        """``ucinewgame``, then wait for the engine to be ready (a game's searches follow)."""
        try:
            self.send("ucinewgame", "isready")
            self._read_until("readyok", time.monotonic() + timeout_s)
        except EngineError:
            self.kill()
            raise

    def go(self, position: str, go: str, timeout_s: float) -> SearchOutput:
        """One search inside a game: ``position`` (a ``position ...`` command) and ``go``, no
        ``ucinewgame`` (the hash carries over from the game's earlier moves)."""
        started = time.monotonic()
        deadline = started + timeout_s
        try:
            self.send(position, go)
            return self._read_search(started, deadline)
        except EngineError:
            self.kill()
            raise

    def _read_search(self, started: float, deadline: float) -> SearchOutput:
        """The ``info depth`` lines up to ``bestmove`` and its move."""
        info: list[str] = []
        while True:
            line = self._read_line(deadline)
            if line.startswith("info depth "):
                info.append(line)
            elif line.startswith("bestmove"):
                words = line.split()
                move = words[1] if len(words) > 1 else "(none)"
                best = None if move in ("(none)", "0000") else move
                return SearchOutput(info, best, time.monotonic() - started)

    def _read_until(self, token: str, deadline: float) -> list[str]:
        lines: list[str] = []
        while True:
            line = self._read_line(deadline)
            if line == token:
                return lines
            lines.append(line)

    def _read_line(self, deadline: float) -> str:
        while not self._lines:
            remaining = deadline - time.monotonic()
            ready = select.select([self._fd], [], [], remaining)[0] if remaining > 0 else []
            if not ready:
                raise EngineTimeout(f"engine {self.path!r} (pid {self.process.pid}) gave no "
                                    f"answer in time")
            chunk = os.read(self._fd, READ_CHUNK)
            if not chunk:
                raise EngineCrashed(self._death_note("while reading"))
            *lines, self._pending = (self._pending + chunk).split(b"\n")
            self._lines.extend(line.decode(errors="replace").rstrip("\r") for line in lines)
        return self._lines.popleft()

    def _death_note(self, doing: str) -> str:
        try:
            code = self.process.wait(timeout=QUIT_GRACE_S)
        except subprocess.TimeoutExpired:
            code = None
        return f"engine {self.path!r} (pid {self.process.pid}) died {doing} (exit code {code})"

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """Kill the process and reap it (never raises)."""
        if self.process.poll() is None:
            self.process.kill()
        self._close()

    def quit(self) -> None:
        """Ask the engine to quit; kill it if it does not within a second."""
        if self.process.poll() is None:
            try:
                self.send("quit")
                self.process.wait(timeout=QUIT_GRACE_S)
            except (EngineError, subprocess.TimeoutExpired):
                self.process.kill()
        self._close()

    def _close(self) -> None:
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()  # type: ignore[union-attr]
            except OSError:
                pass
        try:
            self.process.wait(timeout=QUIT_GRACE_S)
        except subprocess.TimeoutExpired:
            log.warning("engine %s did not exit after kill", self.path)
