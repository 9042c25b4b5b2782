"""From a search's ``info depth`` lines to one label per completed depth.

Stockfish prints one ``info depth k ...`` line at the end of each iteration of its iterative
deepening (plus ``lowerbound``/``upperbound`` lines from aspiration windows after 3 s). The
last exact line of depth k is what a fresh ``go depth k`` search would have reported, so one
search to depth 7 gives the labels of depths 1 to 7. Now and then (1 position in 300 to 2,000)
a finished iteration's last line is a bound: its score is then a bound on the true score, and
the depth is labelled with it and the bound's kind (``bound``: lower or upper, from the side
to move's point of view), never skipped (a skipped depth would be searched again by every run).

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
class InfoIteration:
    """One completed iteration as a driven engine's ``info depth`` line reports it (text
    moves, as printed), in the side to move's point of view. Our own engines' reports are
    :class:`engines.search_report.SearchReport`."""

    depth: Depth
    seldepth: int | None = None
    score_cp: int | None = None
    score_mate: int | None = None
    wdl: tuple[int, int, int] | None = None
    nodes: int | None = None
    time_ms: int | None = None
    pv: tuple[str, ...] = ()
    bound: str | None = None   # 'lower' or 'upper' when the score is a bound, else None

    @property
    def best_move(self) -> str | None:
        return self.pv[0] if self.pv else None


INT_FIELDS = {"seldepth", "nodes", "time"}
BOUNDS = {"lowerbound": "lower", "upperbound": "upper"}


def parse_info(line: str) -> InfoIteration:
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
            while i < len(tokens) and tokens[i] in BOUNDS:
                values["bound"] = BOUNDS[tokens[i]]
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
    return InfoIteration(**values)  # type: ignore[arg-type]


def completed_depths(info: list[str], wanted: tuple[Depth, ...], *,
                     last_is_complete: bool) -> dict[Depth, InfoIteration]:
    """The report of each ``wanted`` depth whose iteration completed: its last exact line, or,
    when it has none, its last bound line (the result then says which bound).

    With ``go depth D`` every reported depth completed (``last_is_complete``); with
    ``go nodes N`` the search may stop inside its last iteration, which still prints a line,
    so a depth counts only when a deeper line follows it.
    """
    exact: dict[Depth, str] = {}
    bound: dict[Depth, str] = {}
    deepest = 0
    for line in info:
        depth = int(line.split()[2])
        deepest = max(deepest, depth)
        if " score " in line:
            (bound if "bound" in line else exact)[depth] = line
    return {
        depth: parse_info(exact.get(depth) or bound[depth]) for depth in wanted
        if (depth in exact or depth in bound) and (last_is_complete or depth < deepest)
    }


def terminal_result(info: list[str]) -> InfoIteration:
    """A mated or stalemated side to move: Stockfish prints ``info depth 0 score ...``."""
    result = parse_info(next((line for line in info if line.startswith("info depth 0 ")),
                             "info depth 0 score cp 0"))   # no line: a draw
    mated = result.score_mate is not None
    wdl = (0, 0, 1000) if mated else (0, 1000, 0)
    return InfoIteration(depth=0, score_cp=result.score_cp, score_mate=result.score_mate,
                       wdl=wdl, nodes=0, seldepth=0, time_ms=result.time_ms or 0)
