"""The console's stderr without Rust panic reports.

deltalake's Rust runtime reports some failures twice: as the Python exception chesslab turns
into its one-line error, and as a panic that Rust's default hook prints straight to file
descriptor 2 (a full disk: ``thread 'tokio-rt-worker' panicked at .../buffered.rs: Already
shut down``). :class:`PanicFilter` puts a pipe in front of descriptor 2 and relays everything
but those reports; ``-v`` (no filter) shows them.

With the filter on, ``RUST_BACKTRACE`` is set to 0 for the process, so a report is always the
``thread '...' panicked at`` line, the message and the ``note: run with `RUST_BACKTRACE=1```
line that ends it.
"""
from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
from collections.abc import Callable
from types import TracebackType

PANIC_PREFIX = b"thread '"
MAX_HEADER = 4096             # a longer line without a newline is not a report's first line
PANIC_START = re.compile(rb"^thread '[^']*'(?: \(\d+\))? panicked at ")
PANIC_END = re.compile(rb"^note: .*`RUST_BACKTRACE=")
MAX_PANIC_LINES = 200         # a report longer than this was not one: relay the rest
RELAY_JOIN_S = 2.0            # wait for the relay at exit (a child may still hold the pipe)


def whole_lines() -> None:
    """Standard output written a line at a time, each line in one write: with
    ``PYTHONUNBUFFERED=1`` (Docker images, CI runners, this machine) ``print`` writes its text
    and its newline apart, and a progress line relayed onto the same file in between glued
    two lines together (``... sha256 36b7...train: nnue@1 exported``)."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        with contextlib.suppress(ValueError, OSError):
            reconfigure(line_buffering=True, write_through=False)


class PanicFilter:
    """Relay file descriptor 2 through a pipe, dropping Rust panic reports (a context
    manager; only for the main thread of a command-line process)."""

    def __init__(self) -> None:
        self.saved_fd = -1
        self.thread: threading.Thread | None = None
        self.dropped: list[bytes] = []
        self.rust_backtrace: str | None = None

    def __enter__(self) -> PanicFilter:
        self.saved_fd = os.dup(2)
        self.rust_backtrace = os.environ.get("RUST_BACKTRACE")
        os.environ["RUST_BACKTRACE"] = "0"
        read_fd, write_fd = os.pipe()
        os.dup2(write_fd, 2)
        os.close(write_fd)
        self.thread = threading.Thread(target=self.relay, args=(read_fd,),
                                       name="chesslab-stderr", daemon=True)
        self.thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()
        if self.thread is None or not self.thread.is_alive():
            os.close(self.saved_fd)
        if self.rust_backtrace is None:
            os.environ.pop("RUST_BACKTRACE", None)
        else:
            os.environ["RUST_BACKTRACE"] = self.rust_backtrace

    def stop(self, wait_s: float = RELAY_JOIN_S) -> None:
        """Give descriptor 2 back to the console, once the relay has passed on what it has
        (also from a signal handler about to ``os._exit``)."""
        sys.stderr.flush()
        os.dup2(self.saved_fd, 2)      # closes our write end: the relay sees end of file
        if self.thread is not None:
            self.thread.join(wait_s)

    def relay(self, read_fd: int) -> None:
        stream = PanicStripper(self.forward)
        with os.fdopen(read_fd, "rb", buffering=0) as pipe:
            while chunk := pipe.read(65536):
                stream.feed(chunk)
        stream.close()
        self.dropped = stream.dropped

    def forward(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.saved_fd, view):]


class PanicStripper:
    """Passes bytes on as they come, except Rust panic reports (kept in ``dropped``) and the
    empty line Rust prints before one. Text that is not at the start of a line, or cannot
    begin a report, is passed on at once, so a progress bar redrawn in place still shows."""

    def __init__(self, out: Callable[[bytes], None]) -> None:
        self.out = out
        self.buffer = b""           # not passed on yet: may still open a report
        self.at_line_start = True
        self.panic: list[bytes] = []
        self.dropped: list[bytes] = []

    def feed(self, chunk: bytes) -> None:
        self.buffer += chunk
        while self.buffer:
            end = self.buffer.find(b"\n")
            if self.panic:
                if end < 0:
                    return
                self.in_panic(self.take(end + 1))
            elif not self.at_line_start:
                self.out(self.take(len(self.buffer) if end < 0 else end + 1))
                self.at_line_start = end >= 0
            elif end == 0:        # an empty line: dropped when a report follows it
                after = self.buffer[1:]
                if undecided(after):
                    return
                if PANIC_START.match(after):
                    self.dropped.append(self.take(1))
                else:
                    self.out(self.take(1))
            elif undecided(self.buffer):
                return
            elif end > 0 and PANIC_START.match(self.buffer):
                self.in_panic(self.take(end + 1))
            else:
                self.out(self.take(len(self.buffer) if end < 0 else end + 1))
                self.at_line_start = end >= 0

    def take(self, size: int) -> bytes:
        head, self.buffer = self.buffer[:size], self.buffer[size:]
        return head

    def in_panic(self, line: bytes) -> None:
        self.panic.append(line)
        if PANIC_END.match(line):
            self.dropped += self.panic
            self.panic = []
        elif len(self.panic) > MAX_PANIC_LINES:    # not a report after all
            self.out(b"".join(self.panic))
            self.panic = []

    def close(self) -> None:
        self.out(b"".join(self.panic) + self.buffer)
        self.panic, self.buffer = [], b""


def undecided(data: bytes) -> bool:
    """Whether ``data``, at the start of a line, may still turn out to open a report: it
    begins like one and its first line is not complete yet."""
    return (PANIC_PREFIX.startswith(data[:len(PANIC_PREFIX)]) and b"\n" not in data
            and len(data) < MAX_HEADER)


CONSOLE: list[PanicFilter] = []    # the stderr filter of the running command, if any


def exit_now(line: str, code: int) -> None:
    """Write ``line`` to stderr (past the running command's filter, once it has relayed what
    it holds) and exit with ``code`` without unwinding: for a signal handler."""
    for console in CONSOLE:
        console.stop(wait_s=0.2)
    os.write(2, f"{line}\n".encode())
    os._exit(code)
