"""The tournament step's configuration: players, openings, the games' limits and
adjudication rules (:mod:`pipelines.games.limits`, :mod:`pipelines.games.adjudication`), an
SPRT, and where the games are played.

>>> config = TournamentConfig.tiny(tc="40/60+0.6", nodes=None)
>>> config.limits.tc, config.pgn_time_control()
(TimeControl(moves=40, seconds=60.0, increment=0.6), '40/60+0.6')
>>> TournamentConfig.tiny(tc="40/")
Traceback (most recent call last):
...
pipelines.tournament.config.TournamentError: bad time control '40/': use moves/seconds+increment, e.g. 40/60+0.6 or 10+0.1
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal

from engines.config_choices import choice_problem
from pipelines.games.adjudication import Adjudication
from pipelines.games.config import GamesError, GamesOptions
from pipelines.games.limits import Limits, TimeControl
from pipelines.sprt import SprtConfig, SprtError, SprtModel

Format = Literal["round-robin", "gauntlet"]
OpeningOrder = Literal["sequential", "random"]


class TournamentError(ValueError):
    """Bad tournament input: names the option, file or engine and the bad value."""


#: The most players an event name lists before it says how many more there are.
EVENT_NAMES = 6


def default_event(format: Format, names: list[str]) -> str:
    """The Event tag of a tournament given none: its players, so two matches' games are told
    apart in a PGN viewer.

    >>> default_event("round-robin", ["nnue", "hce"])
    'nnue vs hce'
    >>> default_event("gauntlet", ["nnue", "sf@1800", "sf@2000"])
    'nnue gauntlet: sf@1800, sf@2000'
    >>> default_event("round-robin", list("abcdefgh"))
    'round robin: a, b, c, d, e, f and 2 more'
    """
    if len(names) == 2:
        return f"{names[0]} vs {names[1]}"
    listed = names[1:] if format == "gauntlet" else names
    shown = ", ".join(listed[:EVENT_NAMES]) + \
        (f" and {len(listed) - EVENT_NAMES} more" if len(listed) > EVENT_NAMES else "")
    return f"{names[0]} gauntlet: {shown}" if format == "gauntlet" else f"round robin: {shown}"


def field_help(text: str, **extra: object) -> dict[str, object]:
    return {"help": text, **extra}


@dataclass(frozen=True)
class TournamentConfig:
    """A tournament: players, openings, limits, adjudication, concurrency.

    Everything but ``concurrency``, ``runner``, ``progress``, ``rating_interval`` goes into
    the tournament id, so running the same command again resumes the same tournament. An
    SPRT's ``rounds`` stay out of it too (but with a Polyglot book): they only cap the match,
    which the SPRT stops at its verdict, so the same SPRT with more rounds continues where the
    last run stopped.
    """

    engines: tuple[str, ...] = field(default=(), metadata=field_help(
        "players as engine specs, comma-separated (alphabeta:eval=hce, stockfish@1350, "
        "uci:PATH, xboard:PATH, ...)"))
    engines_file: str | None = field(default=None, metadata=field_help(
        "TOML file naming players ([players.NAME] spec/command/protocol/options/elo)"))
    format: Format = field(default="round-robin", metadata=field_help(
        "round-robin or gauntlet (the first engine against each of the others)",
        flag="--type"))
    rounds: int = field(default=1, metadata=field_help(
        "game pairs per pairing (each pair: same opening, colours reversed); an SPRT's "
        "cap, which a rerun may raise to continue it"))
    openings: str | None = field(default=None, metadata=field_help(
        "opening file: .epd, .pgn (first --opening-plies plies) or Polyglot .bin"))
    opening_plies: int = field(default=8, metadata=field_help(
        "plies taken from each PGN game, or walked in a Polyglot book"))
    opening_order: OpeningOrder = field(default="sequential", metadata=field_help(
        "sequential or random (shuffled with --seed)"))
    seed: int = field(default=1, metadata=field_help("seed of opening order and book walks"))
    tc: str | None = field(default=None, metadata=field_help(
        "time control moves/seconds+increment (40/60+0.6, 10+0.1)"))
    movetime_ms: int | None = field(default=None, metadata=field_help("fixed time per move"))
    nodes: int | None = field(default=None, metadata=field_help("node limit per move"))
    depth: int | None = field(default=None, metadata=field_help("depth limit per move"))
    timemargin_ms: int = field(default=300, metadata=field_help(
        "grace past the clock (or movetime) before a time forfeit"))
    move_timeout_s: float = field(default=60.0, metadata=field_help(
        "longest wait for a move without a clock (nodes/depth limits) before a forfeit"))
    resign_moves: int = field(default=0, metadata=field_help(
        "resign adjudication: moves in a row both engines see --resign-score against one "
        "side (0: off)"))
    resign_score: int = field(default=600, metadata=field_help("resign threshold, centipawns"))
    draw_move_number: int = field(default=0, metadata=field_help(
        "draw adjudication from this move number (0: off)"))
    draw_moves: int = field(default=8, metadata=field_help(
        "draw adjudication: moves in a row both engines stay within --draw-score"))
    draw_score: int = field(default=10, metadata=field_help("draw threshold, centipawns"))
    tablebases: str | None = field(default=None, metadata=field_help(
        "Syzygy or Gaviota tablebase folders (os.pathsep-separated) to adjudicate with"))
    max_plies: int = field(default=600, metadata=field_help(
        "plies after which a game is adjudicated a draw"))
    concurrency: int = field(default=0, metadata=field_help(
        "games played at once (0: the number of cores)"))
    sprt_elo0: float | None = field(default=None, metadata=field_help(
        "run as an SPRT (two players): Elo of H0"))
    sprt_elo1: float | None = field(default=None, metadata=field_help("SPRT Elo of H1"))
    sprt_alpha: float = field(default=0.05, metadata=field_help("SPRT alpha"))
    sprt_beta: float = field(default=0.05, metadata=field_help("SPRT beta"))
    sprt_model: SprtModel = field(default="normalized", metadata=field_help(
        "SPRT Elo model: normalized or logistic"))
    sprt_stop: bool = field(default=True, metadata=field_help(
        "stop at the SPRT's verdict; --no-sprt-stop plays every round (a comparison at a "
        "fixed number of games) and still records the verdict"))
    sprt_sweep: int = field(default=0, metadata=field_help(
        "stop the SPRT once its first N game pairs were all won (H1) or all lost (H0) by the "
        "first player: a broken engine (the GSPRT needs 147 won pairs at normalized 0,5); by "
        "chance at most 4^-N between equal engines; 0: off"))
    event: str = field(default="", metadata=field_help(
        "PGN Event tag (default: the players, as 'A vs B', 'A gauntlet: B, C' or 'round "
        "robin: A, B, C')"))
    progress: bool = field(default=True, metadata=field_help("print a line per finished game"))
    rating_interval: int = field(default=10, metadata=field_help(
        "every N finished games, print the running score, the Elo with its 95% interval "
        "and, for an SPRT, the LLR (as cutechess-cli's -ratinginterval; 0: never; with "
        "--progress)"))

    runner: GamesOptions = field(default_factory=GamesOptions, metadata=field_help(
        "where the games are played (the --cluster, --workers, ... options)"))

    def __post_init__(self) -> None:
        problem = (choice_problem(self) or self.players_problem() or self.limits_problem()
                   or self.pace_problem() or self.sprt_problem())
        if problem:
            raise TournamentError(problem)

    def players_problem(self) -> str | None:
        """Fewer than two engines, rounds or opening plies below their least."""
        if len(self.engines) < 2:
            return f"need at least two engines, got {list(self.engines)!r}"
        for name, least in (("rounds", 1), ("opening_plies", 0)):
            if getattr(self, name) < least:
                return f"{name} too small: {getattr(self, name)!r}"
        return None

    def limits_problem(self) -> str | None:
        """No limit, a clock and a move time both, a bad time control, a limit not above 0."""
        if self.tc is None and not (self.movetime_ms or self.nodes or self.depth):
            return "give a limit: --tc, --movetime-ms, --nodes or --depth"
        if self.tc is not None and self.movetime_ms:
            return "--tc and --movetime-ms exclude each other"
        return self.time_control_problem() or self.move_limit_problem()

    def time_control_problem(self) -> str | None:
        """Why ``tc`` is no moves/seconds+increment (None: it is, or there is none)."""
        try:
            if self.tc is not None:
                TimeControl.parse(self.tc)
        except GamesError as exc:
            return str(exc)
        return None

    def move_limit_problem(self) -> str | None:
        """The first of the move time, nodes and depth given as 0 or less."""
        for name in ("movetime_ms", "nodes", "depth"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                return f"{name} must be positive, got {value!r}"
        return None

    def pace_problem(self) -> str | None:
        """A negative rating interval, concurrency or time margin; no move timeout."""
        if self.sprt_sweep < 0:
            return f"sprt_sweep must be >= 0, got {self.sprt_sweep!r}"
        if self.rating_interval < 0:
            return f"rating_interval must be >= 0, got {self.rating_interval!r}"
        if self.concurrency < 0 or self.move_timeout_s <= 0 or self.timemargin_ms < 0:
            return "concurrency, move timeout and time margin must be >= 0"
        return None

    def sprt_problem(self) -> str | None:
        """One SPRT bound only, an SPRT of more than two engines, bounds it cannot test."""
        if (self.sprt_elo0 is None) != (self.sprt_elo1 is None):
            return "an SPRT needs both --sprt-elo0 and --sprt-elo1"
        if self.sprt_elo0 is None or self.sprt_elo1 is None:
            return None
        if len(self.engines) != 2:
            return f"an SPRT needs exactly two engines, got {len(self.engines)}"
        try:   # game pairs: the bounds the normalized model can test, before any game
            SprtConfig(self.sprt_elo0, self.sprt_elo1, self.sprt_alpha, self.sprt_beta,
                       self.sprt_model).check_cells(5)
        except SprtError as exc:
            return str(exc)
        return None

    @property
    def time_control(self) -> TimeControl | None:
        return TimeControl.parse(self.tc) if self.tc else None

    @property
    def limits(self) -> Limits:
        """What every move is searched under: what a batch of the games takes."""
        return Limits(self.time_control, self.movetime_ms, self.nodes, self.depth,
                      self.timemargin_ms, self.move_timeout_s)

    @property
    def adjudication(self) -> Adjudication:
        """The games' adjudication rules: what a batch of the games takes."""
        return Adjudication(self.resign_moves, self.resign_score, self.draw_move_number,
                            self.draw_moves, self.draw_score, self.tablebases, self.max_plies)

    @property
    def workers(self) -> int:
        return self.concurrency or os.cpu_count() or 1

    @property
    def is_sprt(self) -> bool:
        return self.sprt_elo0 is not None

    def pgn_time_control(self) -> str:
        if self.tc:
            return TimeControl.parse(self.tc).pgn_tag()
        if self.movetime_ms:
            return f"{self.movetime_ms / 1000:g}/move"
        return "-"

    @classmethod
    def tiny(cls, engines: tuple[str, ...] = ("stockfish?Threads=1&Hash=16#sf_a",
                                               "stockfish?Threads=1&Hash=16#sf_b"),
             **overrides: object) -> TournamentConfig:
        """A few fast games at fixed nodes: the preset the tests run."""
        values: dict[str, object] = dict(engines=engines, rounds=1, nodes=2000, concurrency=2,
                                         move_timeout_s=10.0, max_plies=200, progress=False,
                                         draw_move_number=20, draw_moves=4, draw_score=20,
                                         resign_moves=3, resign_score=500)
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]
