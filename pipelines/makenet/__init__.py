"""``chesslab make-net`` (issue 47 §3): from an empty or existing home and a time budget to a
promoted net, as plain functions a flow strings together.

A run makes its data in rounds (:mod:`pipelines.datagen`: an engine plays itself, every
searched position a label, written as binpack batches), merges each round's batches into one
shard file and ingests it, stops making data when what is left of the budget is what
training the data made so far takes (estimated from the trainer's measured speed), trains the
NNUE on the run's labels, then evaluates the net against the hand-crafted evaluation (an SPRT
match, promoting it when the test accepts). The budget (``hours``) covers data, ingest and
training: the net is *made* within it; the evaluation after is sized by ``eval_games``.

Every stage is resumable: the run is named by its config (:func:`run_id`), its batches,
shards and the time it has spent are in its folder (``HOME/make-net/<run>/``,
:class:`RunState`), training resumes its checkpoint, the evaluation's match resumes as
tournaments do. Every stage is recorded in ``net_run_events`` with what it made.
"""
from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from engines.stamps import content_id
from pipelines.games.config import GamesOptions
from pipelines.kinds.nnue.config import Arch

Progress = Callable[[str], None]
RUN_FOLDER = "make-net"
STATE_FILE = "state.json"
#: The openings the evaluation plays from: the bundled set (outside every training run).
BUNDLED_OPENINGS = Path(__file__).resolve().parents[2] / "data" / "openings.epd"
#: Seconds of fixed cost around training: the snapshot's query, the encoding, the export.
TRAIN_OVERHEAD_S = 120.0
#: Positions/s the snapshot's query and the encoding add per position (measured: ~300k/s).
PREPARE_RATE = 300_000.0
#: Positions/s assumed of a first data round (its own rate is used after it): on the high
#: side, so a first round sizes its game numbers generously.
FIRST_DATA_RATE = 4000.0
#: Positions a game gives, about (Stockfish at depth 6 from 8 random plies: 100).
POSITIONS_PER_GAME = 100


class MakeNetError(ValueError):
    """Bad make-net input: names the option and the bad value."""


@dataclass(frozen=True)
class MakeNetConfig:
    """``chesslab make-net``: data generation, ingest, training, evaluation and promotion of
    an NNUE in one resumable command, within a time budget."""

    hours: float = field(default=4.0, metadata={
        "help": "wall-clock hours to make the net: data generation, ingest and training (the "
                "evaluation after is sized by --eval-games); a resumed run counts the time "
                "it already spent"})
    engine: str = field(default="/usr/games/stockfish", metadata={
        "help": "the data's engine: a UCI binary or a chesslab engine spec (datagen --engine)"})
    depth: int | None = field(default=None, metadata={
        "help": "search depth of every data move (default: 6 unless --nodes is given)"})
    nodes: int | None = field(default=None, metadata={
        "help": "nodes searched for every data move, instead of a depth"})
    round_minutes: float = field(default=15.0, metadata={
        "help": "minutes of data generation between two ingests (and resume points of the "
                "time spent)"})
    batch_games: int = field(default=256, metadata={
        "help": "games per unit of work handed to a worker (datagen --batch-games)"})
    seed: int = field(default=1, metadata={"help": "seed of the games' random starts"})
    arch: Arch = field(default="psq768", metadata={"help": "the net (train nnue --arch)"})
    hidden: int = field(default=256, metadata={"help": "psq768's accumulator width per side"})
    epochs: int = field(default=10, metadata={"help": "passes over the training data"})
    batch_size: int = field(default=16384, metadata={"help": "positions per optimiser step"})
    learning_rate: float = field(default=1e-3, metadata={"help": "Adam's step size"})
    lr_decay: float = field(default=0.9, metadata={
        "help": "the learning rate is multiplied by this after every epoch"})
    eval_lambda: float = field(default=1.0, metadata={
        "help": "target = lambda * score + (1 - lambda) * game result (train nnue)"})
    eval_games: int = field(default=400, metadata={
        "help": "games of the evaluation's SPRT match at most (0: no evaluation)"})
    tc: str = field(default="2+0.02", metadata={
        "help": "the evaluation's time control"})
    openings: str | None = field(default=None, metadata={
        "help": "the evaluation's openings (default: the bundled data/openings.epd)"})
    sprt: tuple[float, ...] = field(default=(0.0, 10.0), metadata={
        "help": "the evaluation's SPRT bounds elo0,elo1; the net is promoted when it accepts"})
    against: str = field(default="alphabeta:eval=hce", metadata={
        "help": "the evaluation's baseline engine"})
    eval_stop: bool = field(default=True, metadata={
        "help": "stop the evaluation at the SPRT's verdict; --no-eval-stop plays all "
                "--eval-games (an Elo with a tighter interval)"})
    runner: GamesOptions = field(default_factory=GamesOptions, metadata={
        "help": "where games are played (--cluster, --workers)"})

    def __post_init__(self) -> None:
        if not 0 < self.hours <= 24 * 30:
            raise MakeNetError(f"make-net: --hours must be in (0, 720], got {self.hours!r}")
        if not self.round_minutes > 0:
            raise MakeNetError(f"make-net: --round-minutes must be positive, got "
                               f"{self.round_minutes!r}")
        if self.eval_games < 0 or self.eval_games == 1:
            raise MakeNetError(f"make-net: --eval-games must be 0 or at least 2, got "
                               f"{self.eval_games!r}")
        for name in ("batch_games", "epochs", "batch_size"):
            if getattr(self, name) < 1:
                raise MakeNetError(f"make-net: --{name.replace('_', '-')} must be at least 1, "
                                   f"got {getattr(self, name)!r}")

    @property
    def budget_s(self) -> float:
        return self.hours * 3600.0

    @property
    def opening_file(self) -> str:
        return self.openings or str(BUNDLED_OPENINGS)

    def identity(self) -> dict[str, Any]:
        """What names the run: everything but the budget and where games are played, so the
        same command resumes it with another budget or on a cluster."""
        values = asdict(self)
        for name in ("hours", "runner", "round_minutes", "eval_stop"):
            values.pop(name)
        return values


def run_id(config: MakeNetConfig) -> str:
    """``make-net-`` and a hash of the config's identity."""
    return f"make-net-{content_id(config.identity())[:10]}"


@dataclass
class RunState:
    """What a run has done, in its folder: seconds spent per stage, the batch files merged into
    shards, the shards ingested, the training's epochs (fixed at its start, so a resumed
    training is the same run), the model, whether the data is complete."""

    spent: dict[str, float] = field(default_factory=dict)
    merged: list[str] = field(default_factory=list)
    shards: list[str] = field(default_factory=list)
    ingested: list[str] = field(default_factory=list)
    positions: int = 0
    engine_id: str = ""
    label_depth: int = 0
    data_done: bool = False
    open_stage: list[Any] | None = None     # [stage, wall time it started] while it runs
    epochs: int | None = None
    model: str | None = None
    evaluated: bool = False

    @property
    def spent_s(self) -> float:
        return sum(self.spent.values())

    def add(self, stage: str, seconds: float) -> None:
        self.spent[stage] = self.spent.get(stage, 0.0) + seconds


def state_path(home: Path, run: str) -> Path:
    return home / RUN_FOLDER / run / STATE_FILE


def load_state(home: Path, run: str) -> RunState:
    path = state_path(home, run)
    if not path.is_file():
        return RunState()
    known = {f.name for f in fields(RunState)}
    return RunState(**{k: v for k, v in json.loads(path.read_text()).items() if k in known})


def save_state(home: Path, run: str, state: RunState) -> None:
    """The state under a temporary name, renamed: whole or the previous one."""
    path = state_path(home, run)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(asdict(state), indent=1))
    os.replace(tmp, path)


def merge_batches(batches: Sequence[Path], shard: Path) -> Path:
    """The batch files' bytes, concatenated into one binpack ``shard`` (a binpack file is a
    sequence of whole blocks, so the concatenation is one: Stockfish and nnue-pytorch read it
    as it is), whole or absent."""
    tmp = shard.with_name(f".{shard.name}.tmp")
    with open(tmp, "wb") as out:
        for batch in batches:
            out.write(batch.read_bytes())
    os.replace(tmp, shard)
    return shard


def unmerged(folder: Path, state: RunState) -> list[Path]:
    """The run's batch files not yet in a shard, in their order."""
    done = set(state.merged)
    return sorted(p for p in folder.glob("*.binpack") if p.name not in done)


def open_stage(home: Path, run: str, state: RunState, stage: str) -> None:
    """Mark ``stage`` as running since now (saved): a killed run counts its time on resume."""
    state.open_stage = [stage, time.time()]
    save_state(home, run, state)


def close_stage(home: Path, run: str, state: RunState, stage: str, seconds: float) -> None:
    state.add(stage, seconds)
    state.open_stage = None
    save_state(home, run, state)


def settle_open_stage(state: RunState, folder: Path) -> None:
    """A stage a kill interrupted counts the time from its start to the newest file it wrote
    in the run's folder (a batch, a checkpoint): time spent that a resume must not give
    again."""
    if not state.open_stage:
        return
    stage, started = state.open_stage
    newest = max((p.stat().st_mtime for p in folder.rglob("*") if p.is_file()
                  and p.name != STATE_FILE), default=started)
    state.add(stage, max(0.0, newest - started))
    state.open_stage = None


def round_games(config: MakeNetConfig, batches: Path, seconds: float, data_rate: float) -> int:
    """The game numbers a data round may reach: the batches made so far and twice those the
    round is expected to make (a round stops by time; missing batches are played first)."""
    made = len(list(batches.glob("*.binpack"))) if batches.is_dir() else 0
    expected = data_rate * seconds / (POSITIONS_PER_GAME * config.batch_games)
    return (made + 2 * int(expected) + 4) * config.batch_games


def round_line(config: MakeNetConfig, state: RunState, seconds: float, data_rate: float,
               train_rate: float) -> str:
    """Where the run stands before a data round, with the time the net will be made in."""
    left = config.budget_s - state.spent_s
    data_left = left - training_seconds(state.positions + int(data_rate * seconds),
                                        config.epochs, train_rate)
    return (f"make-net: data round {len(state.shards) + 1}: {state.positions:,} positions so "
            f"far ({data_rate:,.0f}/s); this round {clock(seconds)}, data for about "
            f"{clock(max(data_left, seconds))} more, then training; the net in about "
            f"{clock(left)}")


def training_seconds(positions: int, epochs: int, rate: float) -> float:
    """What training ``positions`` (all labels: the quiet filter keeps fewer) for ``epochs``
    takes at ``rate`` positions/s, with the snapshot, the encoding and the export."""
    return TRAIN_OVERHEAD_S + positions / PREPARE_RATE + positions * epochs / max(rate, 1.0)


def next_round_seconds(config: MakeNetConfig, state: RunState, data_rate: float,
                       train_rate: float) -> float:
    """How long the next data round may run (0: the data is made): a round, or less where
    the budget left must still train the data made by its end.

    >>> config = MakeNetConfig(hours=1.0, round_minutes=15, epochs=10)
    >>> round(next_round_seconds(config, RunState(), 1000.0, 100_000.0))
    900
    >>> late = RunState(spent={"datagen": 3000.0}, positions=3_000_000)
    >>> next_round_seconds(config, late, 1000.0, 100_000.0)
    0.0
    """
    left = config.budget_s - state.spent_s
    round_s = 60.0 * config.round_minutes
    for seconds in (round_s, round_s / 2, round_s / 4):
        after = state.positions + int(data_rate * seconds)
        if seconds + training_seconds(after, config.epochs, train_rate) <= left:
            return seconds
    return 0.0


def fitted_epochs(config: MakeNetConfig, state: RunState, train_rate: float) -> int:
    """The configured epochs, fewer where what is left of the budget cannot train them all
    (at least 1)."""
    left = config.budget_s - state.spent_s - TRAIN_OVERHEAD_S - state.positions / PREPARE_RATE
    affordable = int(left * train_rate / max(state.positions, 1))
    return max(1, min(config.epochs, affordable))


def calibrate_trainer(config: MakeNetConfig, steps: int = 12) -> float:
    """Positions/s of the net's training step on this machine: ``steps`` optimiser steps of
    the plain loop over random positions (the trainer reaches about 0.9 of it)."""
    import torch

    from pipelines.kinds.nnue.config import NnueConfig
    from pipelines.kinds.nnue.model import make_net, nnue_loss

    nnue = train_config(config, "calibration", 0, 1)
    net = make_net(nnue)
    optimiser = torch.optim.Adam(net.parameters(), lr=1e-4)
    n = config.batch_size
    generator = torch.Generator().manual_seed(0)
    if nnue.arch == "psq768":
        features = torch.randint(0, 768, (n, 2, 32), generator=generator, dtype=torch.int16)
    else:
        features = torch.randint(1, 41024, (n, 2, 30), generator=generator, dtype=torch.int32)
    score = torch.randn(n, generator=generator) * 300
    result = torch.full((n,), float("nan"))
    started = 0.0
    for step in range(steps + 2):
        if step == 2:        # two warm-up steps
            started = time.perf_counter()
        loss = nnue_loss(net(features), score, result, NnueConfig())
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    return steps * n / (time.perf_counter() - started)


def train_config(config: MakeNetConfig, engine_id: str, depth: int, epochs: int) -> Any:
    """The run's ``train nnue`` config: its net and optimiser on the run's labels."""
    from pipelines.kinds.nnue.config import NnueConfig

    return NnueConfig(name=f"{RUN_FOLDER}-{config.arch}-{config.hidden}", epochs=epochs,
                      batch_size=config.batch_size, learning_rate=config.learning_rate,
                      lr_decay=config.lr_decay, seed=config.seed, arch=config.arch,
                      hidden=config.hidden, engine_id=(engine_id,), depth=depth,
                      eval_lambda=config.eval_lambda, progress=False)


def record(lake: Any, run: str, stage: str, event: str, payload: dict[str, Any],
           seconds: float | None = None) -> None:
    """One ``net_run_events`` row."""
    from engines.stamps import utc_now

    lake.write("net_run_events", [{
        "event_id": uuid.uuid4().hex, "run_id": run, "stage": stage, "event": event,
        "seconds": seconds, "payload": json.dumps(payload, sort_keys=True),
        "recorded_at": utc_now()}])


def clock(seconds: float) -> str:
    """``1 h 05 min``, ``12 min``, ``40 s``.

    >>> clock(3900), clock(720), clock(40)
    ('1 h 05 min', '12 min', '40 s')
    """
    if seconds >= 3600:
        return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"
    if seconds >= 60:
        return f"{int(seconds // 60)} min"
    return f"{int(seconds)} s"


__all__ = ["MakeNetConfig", "MakeNetError", "RunState", "calibrate_trainer", "clock",
           "fitted_epochs", "load_state", "merge_batches", "next_round_seconds", "record",
           "run_id", "save_state", "train_config", "training_seconds", "unmerged"]
