"""From a search's ``info depth`` lines to one label per completed depth.

Stockfish prints one ``info depth k ...`` line at the end of each iteration of its iterative
deepening (plus ``lowerbound``/``upperbound`` lines from aspiration windows after 3 s). The
last exact line of depth k is what a fresh ``go depth k`` search would have reported, so one
search to depth 7 gives the labels of depths 1 to 7.

>>> line = ("info depth 5 seldepth 3 multipv 1 score cp -10 wdl 5 980 15 nodes 442 "
...         "time 2 pv e7e5 b1c3")
>>> result = parse_info(line)
>>> (result.depth, result.score_cp, result.wdl, result.pv)
(5, -10, (5, 980, 15), ('e7e5', 'b1c3'))
"""
from __future__ import annotations

from dataclasses import dataclass

Depth = int


@dataclass(frozen=True)
class DepthResult:
    """One iteration's report, in the side to move's point of view."""

    depth: Depth
    seldepth: int | None = None
    score_cp: int | None = None
    score_mate: int | None = None
    wdl: tuple[int, int, int] | None = None
    nodes: int | None = None
    time_ms: int | None = None
    pv: tuple[str, ...] = ()
    bound: bool = False

    @property
    def best_move(self) -> str | None:
        return self.pv[0] if self.pv else None


INT_FIELDS = {"seldepth", "nodes", "time"}


def parse_info(line: str) -> DepthResult:
    """Parse one ``info depth ...`` line (unknown tokens are skipped)."""
    tokens = line.split()
    values: dict[str, object] = {"depth": int(tokens[2])}
    i = 3
    while i < len(tokens):
        token = tokens[i]
        if token == "score":
            kind, value = tokens[i + 1], int(tokens[i + 2])
            values["score_cp" if kind == "cp" else "score_mate"] = value
            i += 3
            while i < len(tokens) and tokens[i] in ("lowerbound", "upperbound"):
                values["bound"] = True
                i += 1
        elif token == "wdl":
            values["wdl"] = (int(tokens[i + 1]), int(tokens[i + 2]), int(tokens[i + 3]))
            i += 4
        elif token == "pv":
            values["pv"] = tuple(tokens[i + 1:])
            break
        elif token in INT_FIELDS:
            values["time_ms" if token == "time" else token] = int(tokens[i + 1])
            i += 2
        else:
            i += 1
    return DepthResult(**values)  # type: ignore[arg-type]


def completed_depths(info: list[str], wanted: tuple[Depth, ...], *,
                     last_is_complete: bool) -> dict[Depth, DepthResult]:
    """The last exact (non-bound) report of each ``wanted`` depth whose iteration completed.

    With ``go depth D`` every reported depth completed (``last_is_complete``); with
    ``go nodes N`` the search may stop inside its last iteration, which still prints a line,
    so a depth counts only when a deeper line follows it.
    """
    last_line: dict[Depth, str] = {}
    deepest = 0
    for line in info:
        depth = int(line.split(" ", 3)[2])
        deepest = max(deepest, depth)
        if " score " in line and "bound" not in line:
            last_line[depth] = line
    return {
        depth: parse_info(last_line[depth]) for depth in wanted
        if depth in last_line and (last_is_complete or depth < deepest)
    }


def terminal_result(info: list[str]) -> DepthResult:
    """A mated or stalemated side to move: Stockfish prints ``info depth 0 score ...``."""
    for line in info:
        if line.startswith("info depth 0 "):
            result = parse_info(line)
            break
    else:
        result = DepthResult(depth=0, score_cp=0)
    mated = result.score_mate is not None
    wdl = (0, 0, 1000) if mated else (0, 1000, 0)
    return DepthResult(depth=0, score_cp=result.score_cp, score_mate=result.score_mate,
                       wdl=wdl, nodes=0, seldepth=0, time_ms=result.time_ms or 0)
