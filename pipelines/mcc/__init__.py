"""The experiments of paper 001 (Arenz, *Monte Carlo Chess*) as plain functions: the main
round robin (Tables 7 and 8), the epsilon sweeps (Tables 1 and 3), the KQK playout statistic,
the Réti study and the solver on mate problems. Round robins run through the tournament
pipeline and are rated with BayesElo against MCC = 0; the diagnostics land in the
``mcc_results`` table.

>>> main_round_robin(MccConfig.tiny()).engines[-1]
'mcts:variant=mcc#MCC'
"""
from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chess
from engines.mcts.tree import playout_batch

from engines.mcts import MctsConfig, MonteCarlo
from engines.stamps import content_id, utc_now
from pipelines.games import GamesOptions
from pipelines.ratings.bayeselo import RatingsConfig, RatingTable, fit
from pipelines.ratings.sources import record_ratings, tournament_games
from pipelines.tournament import TournamentConfig
from warehouse import Lake

#: The main experiment's players: rating name -> engine variant.
MAIN_PLAYERS = {"MCC_Combined": "combined", "MCC_DecisiveMoves": "decisive",
                "MCC_HP_SEE_0.4": "hp-see", "MCC_progressiveBias": "bias", "MCC": "mcc"}
#: Table 8: Elo, interval and score out of 100 of the thesis' main round robin.
TABLE_8 = {"MCC_Combined": (864, 186, 99.0), "MCC_DecisiveMoves": (336, 77, 59.0),
           "MCC_HP_SEE_0.4": (229, 73, 46.5), "MCC_progressiveBias": (85, 72, 28.5),
           "MCC": (0, 75, 17.0)}
EPSILONS = (0.0, 0.2, 0.4, 0.6, 0.8)
#: Tables 1 (eval) and 3 (SEE): Elo of each epsilon (MCC = epsilon 1 = 0) and its interval.
TABLE_1 = {0.6: (153, 62), 0.4: (151, 60), 0.2: (110, 62), 0.8: (26, 60), 0.0: (5, 61)}
TABLE_3 = {0.4: (332, 63), 0.6: (324, 61), 0.2: (326, 64), 0.0: (270, 63), 0.8: (260, 61)}
THESIS_SWEEPS = {"eval": TABLE_1, "see": TABLE_3}
#: KQK: the thesis saw 4,988 White mates in 1,000,000 uniform random playouts.
KQK_FEN = "8/8/8/4k3/8/8/8/4K2Q w - - 0 1"
THESIS_KQK_MATES = 4988
#: Réti's study (1921): White draws only with 1.Kg7 (the thesis misprints 1.Kg6).
RETI_FEN = "7K/8/k1P5/7p/8/8/8/8 w - - 0 1"
RETI_MOVE = "h8g7"


class MccError(ValueError):
    """An experiment that cannot run; the message names the file, position or setting."""


@dataclass(frozen=True)
class MccConfig:
    """How the round robins are played (the thesis: 5 minutes per side, no increment).

    movetime_ms: fixed time per move; 200 ms makes the 240 games of the main round robin
        last about an hour on two cores.
    rounds: game pairs per pairing (12 pairs: 24 games; the thesis played 25).
    concurrency: games at once (one per core).
    max_plies: a game still going after this many plies is adjudicated a draw.
    timemargin_ms: grace past the move time before a time forfeit (generous: on a loaded
        two-core machine four engine processes share the cores).
    """

    movetime_ms: int = field(default=200, metadata={"help": "time per move, milliseconds"})
    rounds: int = field(default=12, metadata={"help": "game pairs per pairing"})
    concurrency: int = field(default=2, metadata={"help": "games played at once"})
    max_plies: int = field(default=400, metadata={"help": "adjudicate a draw after this"})
    timemargin_ms: int = field(default=3000, metadata={
        "help": "grace past the move time before a time forfeit"})
    runner: GamesOptions = field(default_factory=GamesOptions, metadata={
        "help": "where the games are played (--cluster, --workers, ...; not part of the "
                "tournament's id)"})

    def __post_init__(self) -> None:
        for name in ("movetime_ms", "rounds", "concurrency", "max_plies", "timemargin_ms"):
            if getattr(self, name) < 1:
                raise MccError(f"{name} must be at least 1, got {getattr(self, name)!r}")

    @classmethod
    def tiny(cls) -> MccConfig:
        return cls(movetime_ms=20, rounds=1, concurrency=2, max_plies=60)


# --------------------------------------------------------------------------------------------
# Round robins
# --------------------------------------------------------------------------------------------

def player_spec(name: str, variant: str, **switches: float) -> str:
    """A tournament spec of one Monte-Carlo variant under a rating name.

    >>> player_spec("MCC_HP_SEE_0.2", "hp-see", epsilon=0.2)
    'mcts:variant=hp-see,epsilon=0.2#MCC_HP_SEE_0.2'
    """
    options = "".join(f",{key}={value}" for key, value in switches.items())
    return f"mcts:variant={variant}{options}#{name}"


def round_robin(players: Iterable[str], config: MccConfig, event: str) -> TournamentConfig:
    return TournamentConfig(engines=tuple(players), rounds=config.rounds,
                            movetime_ms=config.movetime_ms, concurrency=config.concurrency,
                            max_plies=config.max_plies, timemargin_ms=config.timemargin_ms,
                            event=event, runner=config.runner)


def main_round_robin(config: MccConfig) -> TournamentConfig:
    """Table 7: Combined, DecisiveMoves, HP_SEE 0.4, ProgressiveBias and MCC."""
    players = [player_spec(name, variant) for name, variant in MAIN_PLAYERS.items()]
    return round_robin(players, config, "MCC main experiment (paper 001, Table 7)")


def epsilon_round_robin(kind: str, config: MccConfig) -> TournamentConfig:
    """Tables 1 (``eval``) and 3 (``see``): every epsilon and MCC (epsilon 1)."""
    if kind not in THESIS_SWEEPS:
        raise MccError(f"epsilon sweep of {kind!r}: expected one of {', '.join(THESIS_SWEEPS)}")
    players = [player_spec(sweep_name(kind, eps), f"hp-{kind}", epsilon=eps) for eps in EPSILONS]
    return round_robin([*players, player_spec("MCC", "mcc")], config,
                       f"MCC HP_{kind.upper()} epsilon sweep (paper 001)")


def sweep_name(kind: str, epsilon: float) -> str:
    return f"MCC_HP_{kind.upper()}_{epsilon:g}"


def rate_against_mcc(lake: Lake, tournament_id: str) -> RatingTable:
    """BayesElo of a round robin with MCC anchored at 0, recorded in ``ratings``."""
    games = tournament_games(lake, tournament_id)
    config = RatingsConfig(anchors={"MCC": 0.0})
    table = fit(games, config)
    record_ratings(lake, table, games, config, tournament_id, tournament_id)
    return table


def beside_thesis(table: RatingTable, thesis: Mapping[str, tuple[float, ...]]) -> str:
    """Our ratings and the thesis' side by side: Elo with interval, score per 100 games."""
    lines = [f"{'player':<22} {'Elo':>6} {'-':>5} {'+':>5} {'games':>5} {'score%':>7}"
             f"   {'thesis Elo':>12} {'score%':>7}"]
    for row in table.rows:
        ref = thesis.get(row.name)
        ref_text = f"{ref[0]:>6.0f} ±{ref[1]:<4.0f} {ref[2]:>7.1f}" if ref and len(ref) > 2 \
            else (f"{ref[0]:>6.0f} ±{ref[1]:<4.0f} {'':>7}" if ref else f"{'-':>12} {'':>7}")
        lines.append(f"{row.name:<22} {row.elo:>6.0f} {row.minus:>5.0f} {row.plus:>5.0f} "
                     f"{row.games:>5} {row.score_pct:>7.1f}   {ref_text}")
    return "\n".join(lines)


def sweep_reference(kind: str) -> dict[str, tuple[float, float]]:
    """The thesis' sweep table keyed by our player names."""
    table = {sweep_name(kind, eps): ref for eps, ref in THESIS_SWEEPS[kind].items()}
    return {**table, "MCC": (0, 61 if kind == "eval" else 77)}


# --------------------------------------------------------------------------------------------
# Diagnostics
# --------------------------------------------------------------------------------------------

def kqk_statistic(playouts: int = 1_000_000, seed: int = 1, fen: str = KQK_FEN,
                  repetition: int = 2, fifty: bool = True) -> dict[str, Any]:
    """Figure 6: uniform random playouts from a KQK position; White mates and win rate."""
    counts = playout_batch(MctsConfig(seed=seed, repetition=repetition, fifty=fifty),
                           playouts, fen)
    value = (counts["white_wins"] + 0.5 * counts["draws"]) / playouts
    return {**counts, "fen": fen, "seed": seed, "repetition": repetition, "fifty": fifty,
            "white_value": value}


def reti_study(variant: str = "combined", max_iterations: int = 200_000, seed: int = 1,
               chunk: int = 500, fen: str = RETI_FEN, move: str = RETI_MOVE) -> dict[str, Any]:
    """Figure 7: iterations and seconds until ``move`` becomes the most visited root move
    and stays so to the end of the budget (None: it was not the choice at the end)."""
    engine = MonteCarlo(MctsConfig.variant(variant, seed=seed))
    tree = engine.tree
    tree.set_root(chess.Board(fen))
    start = time.monotonic()
    found_at: tuple[int, float] | None = None
    while tree.iterations < max_iterations:
        if tree.run(chunk) == 0:
            break
        best = tree.lines(1)[0]["move"].uci()
        if best != move:
            found_at = None
        elif found_at is None:
            found_at = (tree.iterations, time.monotonic() - start)
    return {"variant": variant, "seed": seed, "fen": fen, "move": move,
            "iterations": tree.iterations, "seconds": time.monotonic() - start,
            "playouts": tree.playouts, "iterations_to_move": found_at and found_at[0],
            "seconds_to_move": found_at and found_at[1],
            "final_move": tree.lines(1)[0]["move"].uci()}


def mate_problems(path: str | Path) -> list[tuple[str, chess.Board, int]]:
    """(id, board, dm) of every EPD line with a ``dm`` opcode; MccError naming the line."""
    problems = []
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            board, ops = chess.Board.from_epd(line)
        except ValueError as exc:
            raise MccError(f"{path}:{number}: bad EPD {line!r}: {exc}") from None
        if "dm" not in ops:
            raise MccError(f"{path}:{number}: no dm opcode in {line!r}")
        problems.append((str(ops.get("id", f"line {number}")), board, int(str(ops["dm"]))))
    return problems


def solve(board: chess.Board, variant: str = "solver", max_iterations: int = 300_000,
          seed: int = 1, hash_mb: int = 256) -> tuple[int | None, int]:
    """The first mate the solver proves (moves) and the iterations it took (fewer than
    ``max_iterations`` without a mate when the tree of ``hash_mb`` MB filled)."""
    engine = MonteCarlo(MctsConfig.variant(variant, seed=seed, hash_mb=hash_mb))
    mate, iterations = None, 0
    for result in engine.iterate(board, max_depth=64, max_nodes=max_iterations):
        mate, iterations = result.score_mate, result.nodes
        if mate is not None:
            break
    return mate, iterations


def solver_suite(path: str | Path, variant: str = "solver", max_iterations: int = 300_000,
                 seed: int = 1, hash_mb: int = 256) -> list[dict[str, Any]]:
    """The solver on every mate problem of an EPD file: proven distance against ``dm``."""
    rows = []
    for name, board, dm in mate_problems(path):
        start = time.monotonic()
        mate, iterations = solve(board, variant, max_iterations, seed, hash_mb)
        rows.append({"id": name, "fen": board.fen(), "dm": dm, "mate": mate,
                     "iterations": iterations, "seconds": time.monotonic() - start,
                     "exact": mate == dm})
    return rows


# --------------------------------------------------------------------------------------------
# The warehouse
# --------------------------------------------------------------------------------------------

def run_id(*parts: object) -> str:
    return content_id(parts)


def record(lake: Lake, experiment: str, variant: str, fen: str, seed: int, budget: int,
           label: str, figures: Mapping[str, tuple[float | None, float | None]]) -> int:
    """Write ``{metric: (value, expected)}`` of one measurement to ``mcc_results``."""
    rid = run_id(experiment, variant, fen, seed, budget, label)
    now = utc_now()
    rows = [{"run_id": rid, "experiment": experiment, "label": label, "variant": variant,
             "fen": fen, "seed": seed, "budget": budget, "metric": metric, "value": value,
             "expected": expected, "recorded_at": now}
            for metric, (value, expected) in figures.items()]
    lake.write("mcc_results", rows)
    return len(rows)


__all__ = ["EPSILONS", "KQK_FEN", "MAIN_PLAYERS", "MccConfig", "MccError", "RETI_FEN",
           "RETI_MOVE", "TABLE_8", "THESIS_KQK_MATES", "beside_thesis", "epsilon_round_robin",
           "kqk_statistic", "main_round_robin", "mate_problems", "player_spec",
           "rate_against_mcc", "record", "reti_study", "solve", "solver_suite",
           "sweep_reference"]
