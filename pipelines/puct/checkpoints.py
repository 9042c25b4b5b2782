"""The checkpoints of one self-play run rated against each other (paper 004's evaluation):
a round robin of the run's ``policy_value`` versions, each searching with the PUCT engine
(``puct:model=policy_value@N``) and, with ``search_too``, also bare (its policy's top move,
``simulations=0``), from endgame starts (or an opening file, or the start position).

It is an ordinary tournament (``pipelines.tournament``: every game in the warehouse, a rerun
plays only the missing games) rated by BayesElo (``pipelines.ratings``: the table lands in
``ratings`` under the tournament's id; the players are named by their model version, and the
tournament's players carry the version in their engine identity). The report adds each
version's value-head figures from ``model_metrics``: the share of decisive predictions
(|v| > 0.5) of its last validation next to the share of decisive targets.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipelines.games.config import GamesOptions
from pipelines.puct.config import GAVIOTA_DIR
from pipelines.ratings import RatingTable
from pipelines.tournament import TournamentConfig
from warehouse import Lake, connect
from warehouse.catalog import named_query, query

ENDGAMES = "endgames"
BARE = "bare"


class CheckpointsError(ValueError):
    """Bad checkpoints input: names the run or option and the bad value."""


@dataclass(frozen=True)
class CheckpointsConfig:
    """``chesslab checkpoints RUN_ID``: the run's versions in a round robin."""

    run_id: str = field(default="", metadata={"help": "selfplay-train run (pv-...)"})
    search_too: bool = field(default=False, metadata={
        "help": "each version twice: searching and bare (its policy's top move)"})
    bare_only: bool = field(default=False, metadata={
        "help": "only the bare networks (no search): the nets alone"})
    every: int = field(default=1, metadata={
        "help": "every N-th round's version (the first and last always)"})
    rounds: int = field(default=2, metadata={
        "help": "game pairs per pairing (each pair: one start, colours reversed)"})
    nodes: int = field(default=64, metadata={"help": "PUCT simulations a move of the "
                                                     "searching players"})
    openings: str = field(default=ENDGAMES, metadata={
        "help": "'endgames' (random starts of --pieces, one per round), an .epd/.pgn/.bin "
                "file, or 'startpos'"})
    pieces: str = field(default="4-5", metadata={
        "help": "piece counts of endgame starts, kings included (3-piece starts are decided "
                "by the tablebase before a move)"})
    seed: int = field(default=1, metadata={"help": "seed of the endgame starts"})
    tablebases: str | None = field(default=None, metadata={
        "help": "tablebase folders that adjudicate (default: the Gaviota 3-piece tables of "
                "the gaviotatb package when installed; 'none': no adjudication)"})
    max_plies: int = field(default=200, metadata={"help": "plies after which a game is a "
                                                          "draw"})
    concurrency: int = field(default=0, metadata={"help": "games at once (0: the cores)"})
    runner: GamesOptions = field(default_factory=GamesOptions, metadata={
        "help": "where the games are played (the --cluster, --workers, ... options)"})

    def __post_init__(self) -> None:
        if not self.run_id:
            raise CheckpointsError("checkpoints: give a selfplay-train RUN_ID (pv-...)")
        for name in ("every", "rounds", "nodes", "max_plies"):
            if getattr(self, name) < 1:
                raise CheckpointsError(f"checkpoints: {name} must be at least 1, got "
                                       f"{getattr(self, name)!r}")
        if self.search_too and self.bare_only:
            raise CheckpointsError("checkpoints: --search-too and --bare-only exclude each "
                                   "other")

    def tablebase_folders(self) -> str | None:
        if self.tablebases is None:
            return GAVIOTA_DIR if any(Path(GAVIOTA_DIR).glob("*.gtb.cp4")) else None
        return None if self.tablebases.lower() == "none" else self.tablebases


@dataclass(frozen=True)
class Checkpoint:
    """A version of the run with its value-head figures (None when not recorded)."""

    round: int
    model_id: str
    decisive_share: float | None = None
    decisive_target_share: float | None = None
    policy_accuracy: float | None = None
    value_mse: float | None = None


def run_checkpoints(lake: Lake, run_id: str) -> list[Checkpoint]:
    """The run's versions by round; CheckpointsError when it has none."""
    rows = query(connect(lake), named_query("selfplay_run_checkpoints"),
                 {"run_id": run_id}).to_pylist()
    if not rows:
        raise CheckpointsError(f"checkpoints: run {run_id!r} has no policy_value version "
                               "(chesslab selfplay-train prints its run id)")
    return [Checkpoint(r["round"], r["model_id"], r["decisive_share"],
                       r["decisive_target_share"], r["policy_accuracy"], r["value_mse"])
            for r in rows]


def chosen(checkpoints: list[Checkpoint], every: int) -> list[Checkpoint]:
    """Every ``every``-th checkpoint, the first and the last always.

    >>> [c.round for c in chosen([Checkpoint(r, f"m@{r}") for r in range(1, 7)], 2)]
    [1, 3, 5, 6]
    """
    picked = checkpoints[::every]
    if picked[-1] != checkpoints[-1]:
        picked.append(checkpoints[-1])
    return picked


def player_name(model_id: str, bare: bool) -> str:
    return f"{model_id}/{BARE}" if bare else model_id


def player_specs(checkpoints: list[Checkpoint], config: CheckpointsConfig) -> list[str]:
    """The players as engine specs named by version (``#policy_value@3``, ``.../bare``)."""
    specs = []
    for c in checkpoints:
        if not config.bare_only:
            specs.append(f"puct:model={c.model_id}#{player_name(c.model_id, False)}")
        if config.search_too or config.bare_only:
            specs.append(f"puct:simulations=0,model={c.model_id}"
                         f"#{player_name(c.model_id, True)}")
    return specs


def openings_file(lake: Lake, config: CheckpointsConfig) -> str | None:
    """The start positions' file: endgame starts written once under the home (the same
    options give the same file, so the same tournament), a given file, or none."""
    if config.openings == "startpos":
        return None
    if config.openings != ENDGAMES:
        return config.openings
    from pipelines.puct.endgames import parse_pieces, write_endgames

    pieces = parse_pieces(config.pieces)
    tag = "-".join(str(p) for p in pieces)
    path = lake.home / "endgames" / f"checkpoints-{config.seed}-{config.rounds}-{tag}.epd"
    if not path.is_file():
        write_endgames(path, config.rounds, config.seed, pieces)
    return str(path)


def tournament_config(lake: Lake, config: CheckpointsConfig,
                      checkpoints: list[Checkpoint]) -> TournamentConfig:
    players = player_specs(checkpoints, config)
    if len(players) < 2:
        raise CheckpointsError(f"checkpoints: run {config.run_id!r} has one version and no "
                               "bare player to play it: use --search-too or train another "
                               "round")
    return TournamentConfig(
        engines=tuple(players), rounds=config.rounds, openings=openings_file(lake, config),
        nodes=config.nodes, tablebases=config.tablebase_folders(), max_plies=config.max_plies,
        concurrency=config.concurrency, runner=config.runner, progress=False,
        event=f"chesslab checkpoints {config.run_id}")


@dataclass(frozen=True)
class CheckpointsReport:
    run_id: str
    tournament_id: str
    games: int
    checkpoints: list[Checkpoint]
    ratings: RatingTable | None

    def rows(self) -> list[dict[str, Any]]:
        """One row per player: the version, searching or bare, its rating and the value
        head's figures."""
        by_name = self.ratings.by_name() if self.ratings else {}
        out = []
        for c in self.checkpoints:
            for bare in (False, True):
                rating = by_name.get(player_name(c.model_id, bare))
                if rating is None:
                    continue
                out.append({"round": c.round, "player": rating.name, "elo": rating.elo,
                            "plus": rating.plus, "minus": rating.minus,
                            "games": rating.games, "score": rating.score,
                            "draws": rating.draws, **dataclasses.asdict(c)})
        return out

    def __str__(self) -> str:
        lines = [f"checkpoints of {self.run_id}: tournament {self.tournament_id}, "
                 f"{self.games} games (BayesElo, 95% intervals; decisive: share of |v| > 0.5 "
                 "in the last validation, target's share in brackets)",
                 f"{'round':>5}  {'player':<24} {'Elo':>7} {'+':>6} {'-':>6} {'games':>6} "
                 f"{'score':>6} {'draws':>6}  {'decisive':>8}"]
        for row in self.rows():
            decisive = ("n/a" if row["decisive_share"] is None else
                        f"{row['decisive_share']:.2f} ({row['decisive_target_share']:.2f})")
            score = row["score"] / row["games"] if row["games"] else 0.0
            lines.append(f"{row['round']:>5}  {row['player']:<24} {row['elo']:>7.1f} "
                         f"{row['plus']:>6.1f} {row['minus']:>6.1f} {row['games']:>6} "
                         f"{score:>6.2f} {row['draws']:>6}  {decisive:>8}")
        return "\n".join(lines)


__all__ = ["BARE", "Checkpoint", "CheckpointsConfig", "CheckpointsError", "CheckpointsReport",
           "chosen", "player_specs", "run_checkpoints", "tournament_config"]
