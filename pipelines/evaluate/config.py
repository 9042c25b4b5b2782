"""The evaluate step's configuration and errors."""
from __future__ import annotations

from dataclasses import dataclass, field

from pipelines.games.config import GamesOptions
from pipelines.sprt import SprtConfig, SprtError
from pipelines.tournament.config import TournamentConfig


class EvaluateError(ValueError):
    """Bad evaluation input: names the model, engine or option and the bad value."""


@dataclass(frozen=True)
class EvaluateConfig:
    """``chesslab evaluate``: an SPRT match of a model's engine against a baseline, then a
    gauntlet against the Stockfish ladder, rated with the rungs as anchors.

    The candidate is a registry model (``model``, resolved to its engine spec) or an explicit
    engine spec (``spec``, no model events). Limits, openings and concurrency are those of
    ``chesslab tournament``; both tournaments are resumable as tournaments are.
    """

    model: str | None = field(default=None, metadata={
        "help": "model to evaluate: KIND@VERSION or KIND@latest"})
    spec: str | None = field(default=None, metadata={
        "help": "evaluate this engine spec instead of a registry model (no model events)"})
    against: str | None = field(default=None, metadata={
        "help": "baseline engine spec of the SPRT match (default: alphabeta:eval=hce; for a "
                "policy_value model the same checkpoint bare, puct:simulations=0,model=...)"})
    sprt: tuple[float, ...] = field(default=(0.0, 10.0), metadata={
        "help": "SPRT bounds elo0,elo1 (normalised Elo, as fishtest). Wider than the 0,2 of "
                "'chesslab sprt' (fishtest's, for a small change) on purpose: a new model is "
                "tested for a large gain within --max-games; at a true +100 Elo with 40% draws "
                "0,10 stops after about 320 games on average, 0,2 after about 1,540"})
    sprt_alpha: float = field(default=0.05, metadata={"help": "SPRT alpha"})
    sprt_beta: float = field(default=0.05, metadata={"help": "SPRT beta"})
    max_games: int = field(default=400, metadata={
        "help": "games of the SPRT match at most (in pairs; it stops at a verdict); not part "
                "of the match's identity: a rerun with a larger cap continues the same match"})
    ladder: str = field(default="1800-2600/200", metadata={
        "help": "Stockfish UCI_Elo rungs LOW-HIGH/STEP or A,B,... ('' skips the gauntlet)"})
    ladder_rounds: int = field(default=2, metadata={"help": "game pairs against each rung"})
    tc: str | None = field(default=None, metadata={
        "help": "time control moves/seconds+increment (10+0.1)"})
    nodes: int | None = field(default=None, metadata={"help": "node limit per move"})
    depth: int | None = field(default=None, metadata={"help": "depth limit per move"})
    openings: str | None = field(default=None, metadata={
        "help": "opening file: .epd, .pgn or Polyglot .bin"})
    opening_plies: int = field(default=8, metadata={
        "help": "plies taken from each PGN game, or walked in a Polyglot book"})
    max_plies: int = field(default=600, metadata={
        "help": "plies after which a game is adjudicated a draw"})
    tablebases: str | None = field(default=None, metadata={
        "help": "Syzygy or Gaviota tablebase folders that adjudicate (e.g. "
                "/usr/share/gaviotatb/gtb4 for endgame starts)"})
    concurrency: int = field(default=0, metadata={
        "help": "games played at once (0: the number of cores)"})
    sprt_stop: bool = field(default=True, metadata={
        "help": "stop the match at the SPRT's verdict; --no-sprt-stop plays --max-games (a "
                "comparison at a fixed number of games), the verdict still recorded"})
    promote: bool = field(default=True, metadata={
        "help": "mark the model promoted when the SPRT accepts H1"})
    runner: GamesOptions = field(default_factory=GamesOptions, metadata={
        "help": "where the games are played (the --cluster, --workers, ... options)"})

    def __post_init__(self) -> None:
        if (self.model is None) == (self.spec is None):
            raise EvaluateError("evaluate: give a MODEL (KIND@VERSION) or --spec SPEC, "
                                f"not {'both' if self.model else 'neither'}")
        if len(self.sprt) != 2 or not self.sprt[1] > self.sprt[0]:
            raise EvaluateError(f"evaluate: --sprt wants elo0,elo1 with elo1 > elo0, got "
                                f"{','.join(f'{v:g}' for v in self.sprt)!r}")
        try:
            SprtConfig(self.sprt[0], self.sprt[1], self.sprt_alpha,
                       self.sprt_beta).check_cells(5)
        except SprtError as exc:
            raise EvaluateError(f"evaluate: --sprt {','.join(f'{v:g}' for v in self.sprt)}: "
                                f"{exc}") from None
        if self.max_games < 2 or self.ladder_rounds < 1:
            raise EvaluateError(f"evaluate: max_games must be >= 2 and ladder_rounds >= 1, "
                                f"got {self.max_games!r} and {self.ladder_rounds!r}")
        self.tournament("candidate", ("baseline",))   # checks limits and the rest

    def tournament(self, candidate: str, opponents: tuple[str, ...],
                   **overrides: object) -> TournamentConfig:
        """A tournament of ``candidate`` against ``opponents`` under this config's limits."""
        values: dict[str, object] = dict(
            engines=(candidate, *opponents), tc=self.tc, nodes=self.nodes, depth=self.depth,
            openings=self.openings, opening_plies=self.opening_plies,
            max_plies=self.max_plies, tablebases=self.tablebases,
            concurrency=self.concurrency, runner=self.runner, progress=False)
        values.update(overrides)
        try:
            return TournamentConfig(**values)  # type: ignore[arg-type]
        except ValueError as exc:
            raise EvaluateError(f"evaluate: {exc}") from None

    @classmethod
    def tiny(cls, **overrides: object) -> EvaluateConfig:
        """A few fast games at fixed nodes, two ladder rungs: the preset the tests run."""
        values: dict[str, object] = dict(
            against="alphabeta:eval=hce-simple,hash=1", sprt=(0.0, 200.0), sprt_alpha=0.2,
            sprt_beta=0.2, max_games=8, ladder="1350,1500", ladder_rounds=1, nodes=1000,
            max_plies=160, concurrency=2)
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]
