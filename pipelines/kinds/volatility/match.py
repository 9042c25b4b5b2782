"""Paper 003's match (section 4.6), recorded against the model version: the alpha-beta engine
at a fixed depth (7 in the paper) against two challengers that each choose per move between
depth - 1 and depth: the net chooser (algorithm 2 with the model) and a random chooser that
stops early as often as the net does on the validation split (Table 4.1's flagged share at
the model's threshold). The SPRT of the clock variant against the plain time manager is
``chesslab evaluate volatility@N --against alphabeta --tc 10+0.1 --sprt 0,10`` (the evaluate
step deploys volatility models as ``alphabeta:volatility=volatility@N``).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from pipelines.models.registry import record_event, resolve_model
from pipelines.ratings.bayeselo import pair_counts
from pipelines.ratings.pair import pair_elo
from pipelines.ratings.sources import tournament_games
from pipelines.tournament import TournamentConfig, run_tournament
from warehouse import Lake, connect

BASELINE, NET, RANDOM = "fixed-depth", "net-chooser", "random-chooser"


class MatchError(ValueError):
    """The match cannot be played: names the model."""


@dataclass(frozen=True)
class MatchConfig:
    """Limits of the paper's match (the paper: depth 7, over 1,000 games per challenger)."""

    depth: int = 7
    rounds: int = 50                 # game pairs per challenger
    openings: str | None = None
    opening_plies: int = 8
    max_plies: int = 300
    concurrency: int = 0
    engine: str = "alphabeta"        # the engine spec all three players start from
    extra: dict[str, Any] = field(default_factory=dict)   # more TournamentConfig values

    def __post_init__(self) -> None:
        if self.depth < 2:
            raise MatchError(f"depth: must be at least 2, got {self.depth!r}")
        if self.rounds < 1:
            raise MatchError(f"rounds: must be at least 1, got {self.rounds!r}")


@dataclass(frozen=True)
class ChallengerResult:
    name: str
    wins: int
    draws: int
    losses: int
    score: float
    elo: float | None


def stop_rate(lake: Lake, model_id: str) -> float:
    """The share of validation positions the model stops early on (at its threshold)."""
    rows = connect(lake).sql("select flagged_share from volatility_evaluations where "
                             "model_id = $model", params={"model": model_id}).fetchall()
    if not rows:
        raise MatchError(f"model {model_id!r}: no volatility_evaluations row (train it with "
                         "chesslab train volatility)")
    return float(rows[0][0])


def players(engine: str, model_id: str, rate: float) -> tuple[str, str, str]:
    joiner = "," if ":" in engine else ":"
    return (f"{engine}#{BASELINE}", f"{engine}{joiner}volatility={model_id}#{NET}",
            f"{engine}{joiner}volatility=random:{rate:.6f}#{RANDOM}")


def paper_match(lake: Lake, model: str, config: MatchConfig = MatchConfig(),
                progress: Any = None) -> dict[str, Any]:
    """Play (or resume) the gauntlet and record an ``evaluated`` event; returns its payload."""
    model_id = resolve_model(lake, model).model_id
    rate = stop_rate(lake, model_id)
    tournament = TournamentConfig(
        engines=players(config.engine, model_id, rate), format="gauntlet",
        rounds=config.rounds, depth=config.depth, openings=config.openings,
        opening_plies=config.opening_plies, max_plies=config.max_plies,
        concurrency=config.concurrency, event=f"paper 003 match: {model_id}", progress=False,
        **config.extra)
    summary = run_tournament(tournament, lake, progress)
    counts = pair_counts(tournament_games(lake, summary.tournament_id))
    payload = {"match": "paper-003-section-4.6", "tournament_id": summary.tournament_id,
               "depth": config.depth, "random_stop_rate": rate,
               "challengers": [asdict(challenger_result(counts, name))
                               for name in (NET, RANDOM)]}
    record_event(lake, model_id, "evaluated", payload)
    return payload


def challenger_result(counts: dict[tuple[str, str], list[int]], name: str) -> ChallengerResult:
    """The challenger's W/D/L against the fixed-depth player and its Elo difference."""
    first, second = sorted((name, BASELINE))
    key = (first, second)
    wins, draws, losses = counts.get(key, [0, 0, 0])
    if key[0] != name:
        wins, losses = losses, wins
    games = wins + draws + losses
    elo = pair_elo(wins, draws, losses).elo if games and 0 < wins + draws / 2 < games else None
    return ChallengerResult(name, wins, draws, losses,
                            (wins + draws / 2) / games if games else 0.0, elo)
