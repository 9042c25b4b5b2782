"""One style for the progress of long work: what is done out of what, its rate and the time
left, as whole lines that read the same on a console, in a log file and in Prefect's logs.

>>> progress_line("label", 250, 1000, "positions", 10.0, "500 labels, 0 errors")
'label: 250/1,000 positions (25%), 25 positions/s, ETA 30 s; 500 labels, 0 errors'
>>> progress_line("ingest big.pgn.zst", 3 << 20, None, "bytes", 4.0)
'ingest big.pgn.zst: 3.1 MB, 786 kB/s'

A :class:`Meter` prints such a line at most every ``every_s`` seconds for work measured as it
goes (the bytes of a file read so far, the rows of a snapshot written so far). Lines are
handed to a ``report`` callable (a step's progress: stderr and the run's logs), never drawn
over each other with ``\\r``.
"""
from __future__ import annotations

import time
from collections.abc import Callable

#: Seconds between two lines of a :class:`Meter` (the first comes after this too: work that
#: ends sooner shows none).
EVERY_S = 10.0

Report = Callable[[str], None]


def count(value: float) -> str:
    """A count with thousands separators, or one decimal below 10.

    >>> count(1234567), count(2.345), count(12.5)
    ('1,234,567', '2.3', '12')
    """
    if value < 10 and value != int(value):
        return f"{value:.1f}"
    return f"{round(value):,}"


def size(value: float) -> str:
    """Bytes in kB, MB or GB (powers of 1000, as disks are sold).

    >>> size(999), size(2_500_000), size(3.2e9)
    ('999 B', '2.5 MB', '3.2 GB')
    """
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= scale:
            return f"{value / scale:.{1 if value < 100 * scale else 0}f} {unit}"
    return f"{value:.0f} B"


def duration(seconds: float) -> str:
    """A time span as a person reads it.

    >>> duration(42.4), duration(190), duration(7260), duration(90000)
    ('42 s', '3 min 10 s', '2 h 01 min', '25 h 00 min')
    """
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def rate(done: float, seconds: float, unit: str) -> str:
    """Per second, or per minute when under one a second (games at a slow time control).

    >>> rate(30, 10, "games"), rate(3, 60, "games"), rate(5e6, 2, "bytes")
    ('3.0 games/s', '3.0 games/min', '2.5 MB/s')
    """
    per_second = done / seconds if seconds > 0 else 0.0
    if unit == "bytes":
        return f"{size(per_second)}/s"
    if 0 < per_second < 1:
        return f"{per_second * 60:.1f} {unit}/min"
    return f"{per_second:.1f} {unit}/s" if per_second < 10 else f"{count(per_second)} {unit}/s"


def eta(done: float, total: float | None, seconds: float) -> str | None:
    """The time left at the rate so far; None while unknown (no total, nothing done yet).

    >>> eta(25, 100, 10), eta(0, 100, 10), eta(5, None, 10)
    ('30 s', None, None)
    """
    if total is None or done <= 0 or seconds <= 0:
        return None
    return duration(seconds * max(0.0, total - done) / done)


def progress_line(step: str, done: float, total: float | None, unit: str, seconds: float,
                  details: str = "", earlier: float = 0) -> str:
    """``STEP: DONE/TOTAL UNIT (P%), RATE, ETA T; DETAILS`` (the parts that are known).
    ``earlier``: of ``done``, what an earlier run did (not this run's rate).

    >>> progress_line("tournament 1f2e", 60, 100, "games", 120, "workers: local 20", 40)
    'tournament 1f2e: 60/100 games (60%), 10.0 games/min, ETA 4 min 00 s; workers: local 20'
    """
    amount = (f"{size(done)}/{size(total)}" if total is not None else size(done)) \
        if unit == "bytes" else \
        (f"{count(done)}/{count(total)} {unit}" if total is not None else f"{count(done)} {unit}")
    parts = [amount + (f" ({100 * done / total:.0f}%)" if total else "")]
    now = done - earlier
    if seconds > 0 and now > 0:
        parts.append(rate(now, seconds, unit))
    left = eta(now, None if total is None else total - earlier, seconds)
    if left is not None and done < (total or 0):
        parts.append(f"ETA {left}")
    return f"{step}: {', '.join(parts)}" + (f"; {details}" if details else "")


class Meter:
    """Progress of one piece of long work, reported at most every ``every_s`` seconds.

    >>> lines = []
    >>> meter = Meter("export", "rows", 400, lines.append, every_s=0)
    >>> meter.update(100, "written to out.txt")
    >>> lines[0].startswith("export: 100/400 rows (25%), ")
    True
    """

    def __init__(self, step: str, unit: str, total: float | None, report: Report,
                 every_s: float | None = None) -> None:
        self.step, self.unit, self.total, self.report = step, unit, total, report
        self.every_s = EVERY_S if every_s is None else every_s
        self.started = time.monotonic()
        self.last = self.started

    def update(self, done: float, details: str = "") -> None:
        """A line when ``every_s`` has passed since the last one."""
        now = time.monotonic()
        if now - self.last < self.every_s:
            return
        self.last = now
        self.report(progress_line(self.step, done, self.total, self.unit, now - self.started,
                                  details))


def no_report(line: str) -> None:
    """A report that shows nothing (work run where no one reads its progress)."""
    return None
