"""The PUCT engine as a UCI program: ``chesslab engine puct --model policy_value@3
[--simulations 100]`` (``python -m engines.uci puct --net FILE``); tournaments name it
``puct:model=policy_value@3,simulations=0`` (put ``model=`` last).

``--simulations N`` is the budget of a move when ``go`` sets neither a clock nor ``nodes``
(``go depth``, a bare ``go``); under ``go movetime`` or ``wtime/btime`` the search uses the
time as the alpha-beta and MCTS engines do (:mod:`engines.timeman`), and ``go nodes N`` (N
simulations) caps it with or without a clock. ``--simulations 0`` plays the bare network: the
legal move with the largest prior, one evaluation, whatever ``go`` says. The network is
loaded at start: a file that cannot load stops the program with the reason. ``info`` lines
give the simulations (``nodes``), a centipawn score from the best move's Q (Lc0's mapping),
``score mate 1`` for a mating move, and the most visited line as the PV. ``--net random`` is
an untrained net (a sanity floor).

>>> [o.name for o in PROGRAM.spec(PuctOptions(net="random")).options][:4]
['Model', 'NetFile', 'Simulations', 'Formula']
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chess

from engines.identity import check_model_version
from engines.puct import FORMULAS, PuctConfig, PuctConfigError
from engines.uci import AUTHOR, EngineSpec, Program, Searcher, UciError, UciOption

RANDOM_NET = "random"


@dataclass
class PuctOptions:
    """AlphaZero-style PUCT over a policy-value network (papers 002 and 004)."""

    model: str = field(default="", metadata={
        "help": "model version the engine loads, policy_value@N (resolved to --net)"})
    net: str = field(default="", metadata={
        "help": "a policy_value.pt file (or 'random': an untrained net); the identity names "
                "the net by --model"})
    simulations: int = field(default=100, metadata={
        "help": "simulations per move when go gives no nodes; 0 = the bare network's policy"})
    formula: str = field(default="alphazero", metadata={
        "help": "selection rule: " + ", ".join(FORMULAS), "choices": FORMULAS})
    max_depth: int = field(default=0, metadata={
        "help": "depth cap of the tree, 0 = none (ChessBreaker: 4)"})
    batch: int = field(default=8, metadata={"help": "leaves per network call (virtual loss)"})
    temperature: float = field(default=0.0, metadata={
        "help": "move choice: 0 = most visited, else visits ** (1 / t) (ChessBreaker: 0.2)"})
    fpu_reduction: float = field(default=0.0, metadata={
        "help": "first-play urgency: 0 = an unvisited move counts as a draw (AlphaZero); r > 0 "
                "= the node's Q minus r * sqrt(visited prior mass) (Lc0's reduction)"})
    threads: int = field(default=1, metadata={"help": "torch threads"})
    seed: int = field(default=0, metadata={"help": "temperature seed, 0 = from the clock"})

    def __post_init__(self) -> None:
        if self.model:
            check_model_version(self.model)
        if not (self.net or self.model):
            raise ValueError("puct needs --net FILE or --model policy_value@N")
        if self.net and self.net != RANDOM_NET and not Path(self.net).is_file():
            raise ValueError(f"--net: no such network file: {self.net!r}")
        if self.simulations < 0:
            raise ValueError(f"--simulations must be 0 or more, got {self.simulations!r}")
        self.config()

    def config(self) -> PuctConfig:
        try:
            return PuctConfig(formula=self.formula, max_depth=self.max_depth, batch=self.batch,
                              temperature=self.temperature, seed=self.seed,
                              fpu_reduction=self.fpu_reduction)
        except PuctConfigError as exc:
            raise ValueError(str(exc)) from None


def puct_spec(options: PuctOptions | None = None) -> EngineSpec:
    options = options or PuctOptions(net=RANDOM_NET)
    uci_options = (
        UciOption("Model", "string", options.model),
        UciOption("NetFile", "string", options.net),
        UciOption("Simulations", "spin", options.simulations, 0, 1_000_000),
        UciOption("Formula", "combo", options.formula, choices=FORMULAS),
        UciOption("MaxDepth", "spin", options.max_depth, 0, 100),
        UciOption("Batch", "spin", options.batch, 1, 1024),
        UciOption("Temperature", "string", str(options.temperature)),
        UciOption("FpuReduction", "string", str(options.fpu_reduction)),
        UciOption("Threads", "spin", options.threads, 1, 64),
        UciOption("Seed", "spin", options.seed, 0, 2**31 - 1),
    )
    label = f"simulations {options.simulations}" if options.simulations else "bare network"
    return EngineSpec(f"chesslab puct ({options.model or options.net}, {label})", AUTHOR,
                      uci_options, make_searcher,
                      # the model version names the net; threads and seed never change a move
                      # (the seed only matters with a temperature)
                      identity_excludes=("NetFile", "Threads", "Seed"), load=load_net)


#: Networks loaded in this process by file (path, size, mtime): loaded once at start, then
#: shared by every searcher built from the options.
_NETS: dict[tuple[str, int, int], Any] = {}


def network(values: Mapping[str, Any]) -> Any:
    """The net the option values name (``NetFile``); UciError naming the file and the model
    when there is none or it cannot load."""
    path = values["NetFile"]
    model = values["Model"] or "none"
    if path == RANDOM_NET:
        from engines.puct.network import random_network

        return random_network()
    if not path or not Path(path).is_file():
        raise UciError(f"NetFile: no network file {path!r} (model {model!r}; chesslab engine, "
                       "tournament and evaluate resolve --model to --net)")
    stat = Path(path).stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _NETS:
        from engines.puct.network import load_network

        try:
            _NETS[key] = load_network(path)
        except ValueError as exc:
            raise UciError(f"NetFile of model {model!r}: {exc}") from None
        except Exception as exc:   # torch raises all sorts on a damaged file
            raise UciError(f"NetFile {path!r} of model {model!r}: cannot load: "
                           f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}") from None
    return _NETS[key]


def load_net(values: Mapping[str, Any]) -> None:
    """At start: the network must load."""
    network(values)


class PuctSearcher:
    """The front end's searcher: the search, its option values, ``go`` budgets."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        import torch

        from engines.puct.search import NetEvaluator, Puct

        torch.set_num_threads(int(values["Threads"]))
        net = network(values)
        try:
            config = PuctConfig(formula=values["Formula"], max_depth=values["MaxDepth"],
                                batch=values["Batch"],
                                temperature=float(values["Temperature"]), seed=values["Seed"],
                                fpu_reduction=float(values["FpuReduction"]))
        except (PuctConfigError, ValueError) as exc:
            raise UciError(str(exc)) from None
        self.search = Puct(NetEvaluator(net), config, simulations=values["Simulations"])

    def new_game(self) -> None:
        self.search.new_game()

    def stop(self) -> None:
        self.search.stop()

    def iterate(self, board: chess.Board, max_depth: int = 100, max_nodes: int | None = None,
                hard_deadline: float | None = None, multipv: int = 1,
                searchmoves: Sequence[chess.Move] = ()) -> Iterator[Any]:
        return self.search.iterate(board, max_depth, max_nodes, hard_deadline, multipv,
                                   searchmoves)


def make_searcher(values: Mapping[str, Any]) -> Searcher:
    return PuctSearcher(values)


PROGRAM = Program("puct", PuctOptions, puct_spec)

__all__ = ["PROGRAM", "PuctOptions", "PuctSearcher", "puct_spec"]
