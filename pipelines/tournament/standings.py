"""The running standings a tournament prints every N games (``--rating-interval``, as
cutechess-cli's ``-ratinginterval``): each player's score and Elo with its interval from its
wins, draws and losses (the trinomial model of :mod:`pipelines.ratings.pair`), and, for an
SPRT, the LLR with its bounds.

>>> report(["a", "b"], {"a": (3, 2, 1), "b": (1, 2, 3)}, done=6, planned=10)
['[6/10] a vs b: +3 =2 -1, score 66.7%, Elo +120.4 [-93.6, +575.5] (95%)']
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pipelines.ratings.pair import pair_elo
from pipelines.sprt import SprtResult

Counts = tuple[int, int, int]     # wins, draws, losses


def player_counts(players: Sequence[str],
                  games: Iterable[tuple[str, str, float]]) -> dict[str, Counts]:
    """Wins, draws and losses of each player over finished games (white, black, white's
    score).

    >>> player_counts(["a", "b"], [("a", "b", 1.0), ("b", "a", 0.5)])
    {'a': (1, 1, 0), 'b': (0, 1, 1)}
    """
    counts = {p: [0, 0, 0] for p in players}
    for white, black, white_score in games:
        for player, score in ((white, white_score), (black, 1 - white_score)):
            counts[player][0 if score == 1 else 1 if score == 0.5 else 2] += 1
    return {p: (c[0], c[1], c[2]) for p, c in counts.items()}


def lost_on_time(game: Mapping[str, Any]) -> str | None:
    """The player who lost a finished game (a ``tournament_games`` row) on time, else None:
    the loser of a time forfeit, or, drawn because the opponent could not mate, the side whose
    measured time passed its budget.

    >>> lost_on_time({"white": "a", "black": "b", "termination": "time forfeit",
    ...               "result": "1-0"})
    'b'
    """
    if game.get("termination") != "time forfeit":
        return None
    if game.get("result") in ("1-0", "0-1"):
        return str(game["black"] if game["result"] == "1-0" else game["white"])
    for side in ("white", "black"):
        used, budget = game.get(f"{side}_time_s"), game.get(f"{side}_budget_s")
        if used is not None and budget is not None and used > budget:
            return str(game[side])
    return None


def elo_text(value: float) -> str:
    return f"{value:+.1f}" if math.isfinite(value) else ("+inf" if value > 0 else "-inf")


def describe(counts: Counts, confidence: float = 0.95) -> str:
    """``+3 =2 -1, score 66.7%, Elo +120.4 [-124.7, +inf] (95%)``."""
    wins, draws, losses = counts
    result = pair_elo(wins, draws, losses, confidence)
    return (f"+{wins} ={draws} -{losses}, score {result.score:.1%}, Elo {elo_text(result.elo)} "
            f"[{elo_text(result.lower)}, {elo_text(result.upper)}] ({confidence:.0%})")


def report(players: Sequence[str], counts: Mapping[str, Counts], done: int, planned: int,
           sprt: SprtResult | None = None,
           forfeits: Mapping[str, int] | None = None) -> list[str]:
    """The lines of one interval: two players as one match line (the first player's view,
    with the SPRT), more as one line per player against its opponents, best score first;
    ``forfeits``: games each player lost on time, shown when there are any.

    >>> report(["a", "b"], {"a": (3, 2, 1), "b": (1, 2, 3)}, 6, 10, forfeits={"b": 2})[0][-29:]
    '(95%); lost on time: a 0, b 2'
    """
    head = f"[{done}/{planned}]"
    lost = forfeits or {}
    if len(players) == 2:
        first, second = players
        line = f"{head} {first} vs {second}: {describe(counts[first])}"
        if any(lost.values()):
            line += f"; lost on time: {first} {lost.get(first, 0)}, {second} {lost.get(second, 0)}"
        return [line + (f"; {sprt.describe()}" if sprt is not None else "")]
    def points(name: str) -> float:
        wins, draws, losses = counts[name]
        return (wins + draws / 2) / max(1, wins + draws + losses)

    played = [p for p in players if sum(counts[p])]
    width = max(len(p) for p in played) if played else 0
    return [f"{head} standings:"] + [
        f"  {name:<{width}}  {describe(counts[name])}"
        + (f", {lost[name]} lost on time" if lost.get(name) else "")
        for name in sorted(played, key=points, reverse=True)]
