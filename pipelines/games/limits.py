"""What a game's moves are searched under: a time control, a move time, node or depth limits,
and the grace the engines get before a forfeit.

>>> TimeControl.parse("40/60+0.6")
TimeControl(moves=40, seconds=60.0, increment=0.6)
>>> TimeControl.parse("10+0.1").pgn_tag()
'10+0.1'
>>> Limits(TimeControl.parse("40/10+0.1")).scaled(2.0).tc
TimeControl(moves=40, seconds=20.0, increment=0.2)
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from pipelines.games.config import GamesError

TC_PATTERN = re.compile(r"^(?:(\d+)/)?(\d+(?:\.\d+)?)(?:\+(\d+(?:\.\d+)?))?$")


@dataclass(frozen=True)
class TimeControl:
    """``moves/seconds+increment`` as cutechess writes it (moves 0: the whole game)."""

    moves: int
    seconds: float
    increment: float

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        match = TC_PATTERN.match(text.strip())
        if not match:
            raise GamesError(f"bad time control {text!r}: use moves/seconds+increment, "
                             "e.g. 40/60+0.6 or 10+0.1")
        moves, seconds, increment = match.groups()
        tc = cls(int(moves or 0), float(seconds), float(increment or 0))
        if tc.seconds <= 0 and tc.increment <= 0:
            raise GamesError(f"bad time control {text!r}: no time at all")
        return tc

    def pgn_tag(self) -> str:
        base = f"{self.seconds:g}" + (f"+{self.increment:g}" if self.increment else "")
        return f"{self.moves}/{base}" if self.moves else base


@dataclass(frozen=True)
class Limits:
    """The search limits of every move of a game and how long to wait for one.

    ``tc`` (clocks) and ``movetime_ms`` exclude each other; ``nodes`` and ``depth`` go with
    either or stand alone. ``timemargin_ms``: grace past the clock or the move time before a
    time forfeit; ``move_timeout_s``: the longest wait for a move without either."""

    tc: TimeControl | None = None
    movetime_ms: int | None = None
    nodes: int | None = None
    depth: int | None = None
    timemargin_ms: int = 300
    move_timeout_s: float = 60.0

    def scaled(self, scale: float | None) -> Limits:
        """The clock (or move time) ``scale`` times as long, to 6 significant digits; limits
        in nodes or depth need no scaling (None: these limits)."""
        if scale is None:
            return self
        changes: dict[str, object] = {}
        if self.tc is not None:
            moves = f"{self.tc.moves}/" if self.tc.moves else ""
            changes["tc"] = TimeControl.parse(f"{moves}{self.tc.seconds * scale:.6g}"
                                              f"+{self.tc.increment * scale:.6g}")
        if self.movetime_ms:
            changes["movetime_ms"] = max(1, round(self.movetime_ms * scale))
        return dataclasses.replace(self, **changes) if changes else self  # type: ignore[arg-type]
