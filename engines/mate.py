"""Mate scores, one scale for every engine: a side that mates in ``p`` plies scores
``MATE - p`` (the mated side ``-(MATE - p)``), so shorter mates score higher and every mate
scores above any centipawn value. The compiled alpha-beta search
(:mod:`engines.alphabeta.search`) reads its constants from here at import.

UCI reports a mate in moves (``score mate 3``; negative when the side to move is mated):

>>> split_score(MATE - 5), split_score(-(MATE - 4)), split_score(35)
((None, 3), (None, -2), (35, None))
>>> mate_moves(5), mate_moves(-4)
(3, -2)
>>> mate_value(3) == MATE - 6 and mate_value(-2) == -(MATE - 4)
True
"""
from __future__ import annotations

#: The score of mate on the board (the mated side's view: ``-MATE``); a mate in p plies
#: scores ``MATE - p``.
MATE = 32000
#: Scores beyond +-MATE_BOUND are mate distances (no search runs 1,000 plies deep).
MATE_BOUND = MATE - 1000


def mate_moves(mate_plies: int) -> int:
    """UCI ``score mate`` of a proven distance in plies (negative: the mover is mated).

    >>> mate_moves(1), mate_moves(3), mate_moves(-2)
    (1, 2, -1)
    """
    return (mate_plies + 1) // 2 if mate_plies > 0 else -((-mate_plies) // 2)


def split_score(score: int) -> tuple[int | None, int | None]:
    """(score_cp, score_mate) of a score on this scale: centipawns, or a mate in moves."""
    if score > MATE_BOUND:
        return None, mate_moves(MATE - score)
    if score < -MATE_BOUND:
        return None, mate_moves(-(MATE + score))
    return score, None


def mate_value(score_mate: int) -> int:
    """A UCI mate in moves back on this scale, the longest mate the moves allow (a mate in
    3 moves is 5 or 6 plies: ``MATE - 6``); compares mates with centipawn scores."""
    sign = 1 if score_mate > 0 else -1
    return sign * (MATE - 2 * abs(score_mate))


__all__ = ["MATE", "MATE_BOUND", "mate_moves", "split_score", "mate_value"]
