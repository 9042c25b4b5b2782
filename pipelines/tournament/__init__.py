"""Tournaments between engines: round robin or gauntlet, game pairs from openings, limits,
adjudication, forfeits, resumable, every game recorded in the warehouse.

>>> from pipelines.tournament import TournamentConfig, run_tournament
"""
from pipelines.tournament.config import TimeControl, TournamentConfig, TournamentError
from pipelines.tournament.runner import TournamentSummary, resolve_players, run_tournament

__all__ = ["TimeControl", "TournamentConfig", "TournamentError", "TournamentSummary",
           "resolve_players", "run_tournament"]
