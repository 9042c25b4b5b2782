"""Evaluating a model: a plan of two tournaments, the tournaments as units, a summary with the
Elo against the baseline, the SPRT verdict and the rating on the Stockfish ladder, and the
model events it leaves.

1. an SPRT match of the candidate against the baseline (``pipelines.tournament`` stops it at
   the GSPRT's verdict, at most ``max_games`` games in pairs), rated by BayesElo with the
   baseline anchored at 0, so the lineage query starts from it even without a ladder;
2. a gauntlet of the candidate against the ladder rungs ``stockfish@ELO``, rated by BayesElo
   with every rung anchored at its ``UCI_Elo`` (``pipelines.ratings``).

Both are ordinary tournaments in the warehouse (resumable: running the same evaluation again
plays only the missing games). A registry model then gets an ``evaluated`` event with the
figures and, when the SPRT accepted H1, a ``promoted`` event (``KIND@best`` moves to it).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from engines.registry import expand_ladder
from pipelines.evaluate.config import EvaluateConfig, EvaluateError
from pipelines.evaluate.models import (
    default_baseline,
    is_self_baseline,
    record_model_event,
    resolve_candidate,
)
from pipelines.ratings import RatingsConfig, pair_counts, pair_elo
from pipelines.ratings.report import rate_tournament
from pipelines.ratings.sources import tournament_games
from pipelines.tournament import TournamentConfig, TournamentSummary, resolve_players
from warehouse import Lake


@dataclass(frozen=True)
class EvaluationPlan:
    """The candidate (a model id, or None for a bare spec) and the two tournaments."""

    config: EvaluateConfig
    model_id: str | None
    candidate: str               # the candidate's player name in both tournaments
    match: TournamentConfig
    gauntlet: TournamentConfig | None
    baseline: str = ""           # the baseline's engine spec (given or the kind's default)

    @property
    def searches_itself(self) -> bool:
        """The baseline is the model's own bare network: the match measures its search."""
        return is_self_baseline(self.model_id, self.baseline)


@dataclass(frozen=True)
class Evaluation:
    """The figures of an evaluation (Elo values None where a perfect score makes them
    infinite). ``passed``: the SPRT accepted H1."""

    model_id: str | None
    candidate: str
    against: str
    match_tournament: str
    games: int
    wins: int
    draws: int
    losses: int
    elo: float | None
    elo_lower: float | None
    elo_upper: float | None
    los: float
    sprt_decision: str
    sprt_llr: float
    sprt_bounds: tuple[float, float]
    sprt_elo: tuple[float, float]
    sprt_counts: tuple[int, ...]
    ladder_tournament: str | None = None
    ladder_elo: float | None = None
    ladder_plus: float | None = None
    ladder_minus: float | None = None
    ladder_games: int = 0
    sprt_alpha: float = 0.05
    sprt_beta: float = 0.05
    sprt_model: str = "normalized"

    @property
    def passed(self) -> bool:
        return self.sprt_decision == "H1"

    def payload(self) -> dict[str, Any]:
        """The ``evaluated`` event's payload."""
        return {**asdict(self), "passed": self.passed}

    def __str__(self) -> str:
        elo = "n/a" if self.elo is None else f"{self.elo:+.1f}"
        text = (f"{self.candidate} vs {self.against}: +{self.wins} ={self.draws} "
                f"-{self.losses}, Elo {elo} [{fmt(self.elo_lower)}, {fmt(self.elo_upper)}], "
                f"SPRT elo0={self.sprt_elo[0]:g} elo1={self.sprt_elo[1]:g} "
                f"alpha={self.sprt_alpha:g} beta={self.sprt_beta:g} ({self.sprt_model} Elo) "
                f"{self.sprt_decision} (LLR {self.sprt_llr:.2f} in [{self.sprt_bounds[0]:.2f}, "
                f"{self.sprt_bounds[1]:.2f}])")
        if self.ladder_tournament is not None:
            text += (f"; ladder rating {fmt(self.ladder_elo)} +{fmt(self.ladder_plus)} "
                     f"-{fmt(self.ladder_minus)} over {self.ladder_games} games")
        return text


def fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


# --------------------------------------------------------------------------------------------
# Plan
# --------------------------------------------------------------------------------------------

def ladder_players(ladder: str) -> tuple[str, ...]:
    """``1800-2600/200`` -> the Stockfish rungs (a spec with ``@`` is taken as it is).

    >>> ladder_players("1350,1500")
    ('stockfish@1350', 'stockfish@1500')
    """
    if not ladder.strip():
        return ()
    text = ladder if "@" in ladder else f"stockfish@{ladder}"
    return tuple(expand_ladder(text))


def plan_evaluation(lake: Lake, config: EvaluateConfig) -> EvaluationPlan:
    """Resolve the candidate and build both tournaments; EvaluateError (one line) on a model
    that is not in the registry or a spec that names no engine."""
    model_id, spec = resolve_candidate(lake, config.model) if config.model \
        else (None, str(config.spec))
    player = f"{spec}#{model_id}" if model_id else spec
    c = config
    kind = model_id.split("@", 1)[0] if model_id else None
    baseline = c.against or default_baseline(kind, model_id)
    match = c.tournament(player, (baseline,), rounds=max(1, c.max_games // 2),
                         sprt_elo0=c.sprt[0], sprt_elo1=c.sprt[1], sprt_alpha=c.sprt_alpha,
                         sprt_beta=c.sprt_beta, sprt_stop=c.sprt_stop,
                         event=f"chesslab evaluate {model_id or spec}: SPRT")
    rungs = ladder_players(c.ladder)
    gauntlet = c.tournament(player, rungs, format="gauntlet", rounds=c.ladder_rounds,
                            event=f"chesslab evaluate {model_id or spec}: ladder") \
        if rungs else None
    try:   # every player checked and its models resolved and loaded before the first game
        candidate = resolve_players(match, lake)[0].name
        if gauntlet is not None:
            resolve_players(gauntlet, lake)
    except (ValueError, LookupError) as exc:
        raise EvaluateError(f"evaluate {model_id or spec}: {exc}") from None
    return EvaluationPlan(config, model_id, candidate, match, gauntlet, baseline)


# --------------------------------------------------------------------------------------------
# Summary
# --------------------------------------------------------------------------------------------

def match_figures(lake: Lake, plan: EvaluationPlan, match: TournamentSummary) -> dict[str, Any]:
    """W/D/L, Elo and its interval of the candidate in the SPRT match."""
    games = tournament_games(lake, match.tournament_id)
    against = next(g.black if g.white == plan.candidate else g.white for g in games)
    key = tuple(sorted((plan.candidate, against)))
    counts = pair_counts(games)[key]   # type: ignore[index]
    wins, draws, losses = counts if key[0] == plan.candidate else counts[::-1]
    pair = pair_elo(wins, draws, losses)
    return dict(against=against, games=pair.games, wins=wins, draws=draws, losses=losses,
                elo=finite(pair.elo), elo_lower=finite(pair.lower),
                elo_upper=finite(pair.upper), los=pair.los)


def ladder_figures(lake: Lake, plan: EvaluationPlan,
                   gauntlet: TournamentSummary) -> dict[str, Any]:
    """The candidate's BayesElo rating with the rungs anchored (the table is recorded)."""
    table = rate_tournament(lake, gauntlet.tournament_id)   # the rungs anchored
    row = table.by_name()[plan.candidate]
    return dict(ladder_tournament=gauntlet.tournament_id, ladder_elo=row.elo,
                ladder_plus=row.plus, ladder_minus=row.minus, ladder_games=row.games)


def summarize(lake: Lake, plan: EvaluationPlan, match: TournamentSummary,
              gauntlet: TournamentSummary | None) -> Evaluation:
    if match.sprt is None or not match.already_done + match.played:
        raise EvaluateError(f"evaluate {plan.candidate}: the SPRT match has no games")
    sprt, c = match.sprt, plan.config
    figures = match_figures(lake, plan, match)
    # The match's own table, the baseline anchored at 0: an evaluation without a ladder
    # still leaves a rating row that joins to the model.
    rate_tournament(lake, match.tournament_id, RatingsConfig(anchors={figures["against"]: 0.0}))
    ladder = ladder_figures(lake, plan, gauntlet) if gauntlet is not None else {}
    return Evaluation(
        model_id=plan.model_id, candidate=plan.candidate, match_tournament=match.tournament_id,
        sprt_decision=sprt.decision, sprt_llr=sprt.llr,
        sprt_bounds=(sprt.lower_bound, sprt.upper_bound), sprt_elo=(c.sprt[0], c.sprt[1]),
        sprt_counts=sprt.counts, sprt_alpha=c.sprt_alpha, sprt_beta=c.sprt_beta,
        sprt_model=sprt.config.model if sprt.config else "normalized", **figures, **ladder)


def record_evaluation(lake: Lake, plan: EvaluationPlan, evaluation: Evaluation) -> list[str]:
    """The model's ``evaluated`` event, and ``promoted`` when it passed (and promotion is on,
    and the baseline was not its own bare network: search beating the same net unsearched
    ranks it against no other version); returns the events written (none for a bare spec)."""
    if plan.model_id is None:
        return []
    record_model_event(lake, plan.model_id, "evaluated",
                       {**evaluation.payload(), "baseline": plan.baseline,
                        "search_vs_bare": plan.searches_itself})
    if not (evaluation.passed and plan.config.promote) or plan.searches_itself:
        return ["evaluated"]
    record_model_event(lake, plan.model_id, "promoted", {
        "by": "evaluate", "against": evaluation.against,
        "sprt_tournament": evaluation.match_tournament, "elo": evaluation.elo,
        "ladder_elo": evaluation.ladder_elo})
    return ["evaluated", "promoted"]
