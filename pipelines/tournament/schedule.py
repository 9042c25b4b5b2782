"""Who plays whom, with which colours and opening, and the tournament's id.

Games come in pairs: in round ``r`` each pairing plays opening ``r`` twice, the first player
White in game 0 and Black in game 1. Slots are ordered round by round, so a tournament stopped
early is still balanced between pairings.

>>> slots = schedule(["a", "b", "c"], "gauntlet", rounds=1, openings=2)
>>> [(s.white, s.black, s.key) for s in slots]
[('a', 'b', '0:0:0'), ('b', 'a', '0:0:1'), ('a', 'c', '1:0:0'), ('c', 'a', '1:0:1')]
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence

from engines.registry import EngineSpec, own_version
from engines.stamps import content_id
from pipelines.games.game import Slot
from pipelines.tournament.config import TournamentConfig


def pairings(players: Sequence[str], format: str) -> list[tuple[str, str]]:
    if format == "gauntlet":
        return [(players[0], other) for other in players[1:]]
    return list(itertools.combinations(players, 2))


def schedule(players: Sequence[str], format: str, rounds: int, openings: int) -> list[Slot]:
    slots = []
    pairs = pairings(players, format)
    for rnd in range(rounds):
        for index, (first, second) in enumerate(pairs):
            opening = rnd % openings
            slots.append(Slot(index, rnd, 0, first, second, opening))
            slots.append(Slot(index, rnd, 1, second, first, opening))
    return slots


def rounds_only_cap(config: TournamentConfig) -> bool:
    """An SPRT's rounds only cap it (the GSPRT's verdict is the other stopping rule): round r
    plays opening r mod n whatever the number of rounds, so a rerun with more rounds continues
    the same games. A Polyglot book is walked once per round, so there the number of rounds
    decides the openings and stays part of the identity.

    >>> rounds_only_cap(TournamentConfig.tiny(sprt_elo0=0, sprt_elo1=10))
    True
    >>> rounds_only_cap(TournamentConfig.tiny())
    False
    """
    book = (config.openings or "").lower().endswith(".bin")
    return config.is_sprt and not book


def tournament_id(config: TournamentConfig, players: Sequence[EngineSpec],
                  openings_digest: str | None) -> str:
    """A hash of what decides the games: rerunning the same command resumes the tournament
    (an SPRT's with more rounds too: :func:`rounds_only_cap`)."""
    identity = {
        # an own engine's code revision too: a rebuilt engine starts a new tournament
        "players": [[p.name, p.setup_hash] + ([own_version()] if p.kind == "own" else [])
                    for p in players],
        "format": config.format, "rounds": None if rounds_only_cap(config) else config.rounds,
        "openings": openings_digest, "opening_plies": config.opening_plies,
        "opening_order": config.opening_order, "seed": config.seed,
        "limits": [config.tc, config.movetime_ms, config.nodes, config.depth],
        "adjudication": [config.resign_moves, config.resign_score, config.draw_move_number,
                         config.draw_moves, config.draw_score, config.tablebases,
                         config.max_plies],
        "sprt": [config.sprt_elo0, config.sprt_elo1, config.sprt_alpha, config.sprt_beta,
                 config.sprt_model],
    }
    return content_id(identity)
