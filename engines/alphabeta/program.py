"""The alpha-beta engine as a UCI program: its command-line options, its UCI options and the
searcher built from them. :mod:`engines.uci` finds it as ``PROGRAM`` (``chesslab engine
alphabeta``, ``python -m engines.uci alphabeta``).

Importing this module stays cheap: the compiled search loads when the first searcher is built.

>>> [option.name for option in PROGRAM.spec(AlphaBetaOptions.tiny()).options]
['Hash', 'Eval', 'LMR', 'LMRFormula', 'Model', 'EvalFile', 'NnueTempo', 'SearchLogRate',
 'SearchLog', 'Volatility', 'VolatilityFile', 'VolatilityThreshold']
"""
from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.alphabeta import EVALS, MAX_TEMPO, NNUE_EVALS, NNUE_TEMPO
from engines.alphabeta.formula import LmrFormula
from engines.identity import MODEL_VERSION, EngineIdentityError, check_model_version
from engines.uci import AUTHOR, EngineSpec, Program, Searcher, UciError, UciOption
from engines.volatility import options as volatility_options

log = logging.getLogger(__name__)

# Evaluations (EVALS): those of NNUE_EVALS need a network: ``--nnue FILE``, or ``--model
# nnue@3``, which ``chesslab engine`` resolves to the model's exported file.
LMRS = ("default", "none")
#: The LMR combo's values in UCI: "default" is a keyword of the option syntax ("var default"
#: breaks python-chess and other parsers), so the paper's formula is "standard" there.
UCI_LMRS = {"default": "standard", "none": "none"}


@dataclass
class AlphaBetaOptions:
    """Alpha-beta search (PVS, TT, LMR) over the compiled core; hand-crafted or NNUE eval."""

    eval: str = field(default="hce", metadata={
        "help": "evaluation: hce (tapered PeSTO tables), hce-simple (paper 002's "
                "Simplified Evaluation Function), nnue (needs --nnue or --model) or "
                "nnue-hybrid (Stockfish 12's: the hce where it says over 400 cp, else the net)",
        "choices": EVALS})
    nnue: str = field(default="", metadata={
        "help": "the chesslab NNUE v1 .npz file of --eval nnue (UCI option EvalFile); the "
                "engine's identity names the net by --model, not by this path"})
    lmr: str = field(default="default", metadata={
        "help": "late-move reductions: default (log d * log m / 1.95), none, or a learned "
                "formula lmr@N (chesslab resolves it to --lmr-formula)"})
    hash: int = field(default=16, metadata={"help": "transposition table size in MB"})
    nnue_tempo: int = field(default=NNUE_TEMPO, metadata={
        "help": "centipawns --eval nnue adds to the net's score for the side to move "
                "(default 0: the net's score as it is; Stockfish 12 adds 28)"})
    model: str = field(default="", metadata={
        "help": "model version the evaluation loads, KIND@VERSION (e.g. nnue@3)"})
    search_log_rate: float = field(default=0.0, metadata={
        "help": "fraction of LMR decisions written to the --search-log file (0 = off)"})
    search_log: str = field(default="", metadata={
        "help": "the file the sampled LMR decisions are appended to, one JSON object a line, "
                "at every ucinewgame and quit (chesslab lmr-data stores them in the "
                "warehouse's search_log table)"})
    lmr_formula: str = field(default="", metadata={
        "help": "the coefficients of --lmr lmr@N: logd*logm=A;logd=B;logm=C (bench-normalised)"})
    volatility: str = field(default="", metadata={
        "help": "paper 003's early stop: a volatility net (volatility@N, @latest or @best, "
                "which chesslab resolves to --volatility-file, or a net's file) stops one ply "
                "early under go depth (algorithm 2) and banks time under a clock when the net "
                "says stable; random:RATE is the random chooser; empty = off"})
    volatility_file: str = field(default="", metadata={
        "help": "the volatility.npz file of the version --volatility names; the identity "
                "names the net by --volatility, not by this path"})
    volatility_threshold: str = field(default="", metadata={
        "help": "stability threshold (default: the model's, chosen at training)"})

    def __post_init__(self) -> None:
        if self.eval not in EVALS:
            raise ValueError(f"--eval must be one of {', '.join(EVALS)}, got {self.eval!r}")
        check_lmr(self.lmr, self.lmr_formula)
        if not 1 <= self.hash <= 65536:
            raise ValueError(f"--hash must be 1..65536 MB, got {self.hash!r}")
        if self.model:
            check_model_version(self.model)
        if self.eval in NNUE_EVALS and not (self.nnue or self.model):
            self.nnue = default_net()   # the net shipped with the package
        if self.nnue:   # a bad file fails at start-up, not at the first isready
            check_network_file(self.nnue)
        if not 0.0 <= self.search_log_rate <= 1.0:
            raise ValueError(f"--search-log-rate must be in [0, 1], got {self.search_log_rate!r}")
        if not 0 <= self.nnue_tempo <= MAX_TEMPO:
            raise ValueError(f"--nnue-tempo must be in 0..{MAX_TEMPO}, got {self.nnue_tempo!r}")
        volatility_options.check_volatility(self.volatility, self.volatility_file)

    @classmethod
    def tiny(cls) -> AlphaBetaOptions:
        """The preset used by tests: a small table."""
        return cls(hash=4)


def check_lmr(lmr: str, formula: str) -> None:
    """A built-in reduction, or a learned one (``lmr@N``) with its formula's coefficients."""
    if lmr in LMRS:
        if formula:
            raise ValueError(f"--lmr-formula {formula!r} goes with --lmr lmr@N, not {lmr!r}")
        return
    if not MODEL_VERSION.match(lmr):
        raise ValueError(f"--lmr must be one of {', '.join(LMRS)} or a model lmr@N, got {lmr!r}")
    if not formula:
        raise ValueError(f"--lmr {lmr} needs --lmr-formula (chesslab engine, tournament and "
                         "evaluate resolve it from the model registry)")
    LmrFormula.parse(formula)


def alphabeta_spec(options: AlphaBetaOptions | None = None) -> EngineSpec:
    """The engine the front end runs; the command-line options become the UCI defaults."""
    options = options or AlphaBetaOptions()
    uci_options = (
        UciOption("Hash", "spin", options.hash, 1, 65536),
        UciOption("Eval", "combo", options.eval, choices=EVALS),
        UciOption("LMR", "combo", UCI_LMRS.get(options.lmr, options.lmr),
                  choices=(*UCI_LMRS.values(), *(() if options.lmr in LMRS else (options.lmr,)))),
        UciOption("LMRFormula", "string", options.lmr_formula),
        UciOption("Model", "string", options.model),
        UciOption("EvalFile", "string", options.nnue),
        UciOption("NnueTempo", "spin", options.nnue_tempo, 0, MAX_TEMPO),
        UciOption("SearchLogRate", "string", str(options.search_log_rate)),
        UciOption("SearchLog", "string", options.search_log),
        *volatility_options.uci_options(options.volatility, options.volatility_threshold,
                                        options.volatility_file),
    )
    return EngineSpec(f"chesslab alphabeta ({options.eval}, lmr {options.lmr})", AUTHOR,
                      uci_options, make_searcher, flush_search_log,
                      # lmr@N pins its formula and --model names the net (a model version
                      # never changes), so neither file nor formula is part of the identity
                      identity_excludes=("SearchLogRate", "SearchLog", "LMRFormula",
                                         "EvalFile", volatility_options.FILE),
                      make_policy=volatility_options.make_policy, load=load_files)


def load_files(values: Mapping[str, Any]) -> None:
    """At start: the network an NNUE evaluation needs must be given and load (a ``--model``
    alone names it; chesslab resolves it to ``--nnue``), and a search log sampled needs its
    file. UciError naming the file or the option."""
    check_search_log(values)
    if values["Eval"] in NNUE_EVALS and not values["EvalFile"]:
        raise UciError(f"evaluation {values['Eval']!r} needs the EvalFile option (model "
                       f"{values['Model'] or 'none'!r}; chesslab engine, tournament and "
                       "evaluate resolve --model to --nnue)")
    if values["EvalFile"]:
        try:
            check_network_file(values["EvalFile"])
        except ValueError as exc:
            raise UciError(str(exc)) from None


def make_searcher(values: Mapping[str, Any]) -> Searcher:
    """An :class:`engines.alphabeta.AlphaBeta` for the UCI option values."""
    from engines.alphabeta import AlphaBeta, SearchConfig

    check_search_log(values)
    rate = float(values["SearchLogRate"] or 0)
    if values["Model"]:
        try:
            check_model_version(values["Model"])
        except EngineIdentityError as exc:
            raise UciError(str(exc)) from None
    if values["Eval"] in NNUE_EVALS and not values["EvalFile"]:
        raise UciError(f"evaluation {values['Eval']!r} needs the EvalFile option (model "
                       f"{values['Model'] or 'none'!r}): a chesslab NNUE v1 .npz file")
    lmr = lmr_of(values["LMR"], values["LMRFormula"])
    config = SearchConfig(eval=values["Eval"], lmr=lmr, hash_mb=values["Hash"],
                          search_log_rate=rate, search_log=values["SearchLog"] or None,
                          nnue_path=values["EvalFile"] or None,
                          nnue_tempo=values["NnueTempo"])
    return AlphaBeta(config)


def default_net() -> str:
    """The shipped network (engines/nnue/nets/psq768.npz), what --eval nnue plays without
    --nnue or --model; a ValueError if the installation lacks it."""
    from engines.nnue import DEFAULT_NET

    if not DEFAULT_NET.is_file():
        raise ValueError(f"--eval nnue without --nnue or --model plays the shipped net, and "
                         f"{DEFAULT_NET} is missing")
    return str(DEFAULT_NET)


def check_network_file(path: str) -> None:
    """A readable chesslab NNUE v1 file (HalfKP or psq768), else a ValueError naming it."""
    if not Path(path).is_file():
        raise ValueError(f"--nnue: no such network file: {path!r}")
    from engines.nnue.netfile import load_network_file

    load_network_file(path)


def lmr_of(uci_value: str, formula: str) -> str | LmrFormula:
    """The search's reduction for the UCI values of LMR and LMRFormula."""
    builtin = {uci: name for name, uci in UCI_LMRS.items()}
    if uci_value in builtin:
        return builtin[uci_value]
    try:
        check_lmr(uci_value, formula)
        return LmrFormula.parse(formula)
    except ValueError as exc:
        raise UciError(str(exc)) from None


def check_search_log(values: Mapping[str, Any]) -> None:
    """A sampled search log needs the file it goes to: UciError naming both options."""
    try:
        rate = float(values["SearchLogRate"] or 0)
    except ValueError:
        raise UciError(f"SearchLogRate takes a number, got {values['SearchLogRate']!r}") from None
    if rate and not values["SearchLog"]:
        raise UciError(f"SearchLogRate {values['SearchLogRate']} needs the SearchLog option "
                       "(--search-log FILE): the file the sampled LMR decisions go to")


def flush_search_log(searcher: Searcher) -> None:
    """Append the sampled LMR decisions to the search log file (only when logging is on)."""
    config = getattr(searcher, "config", None)
    if config is None or not config.search_log_rate or config.search_log is None:
        return
    searcher.flush_search_log()  # type: ignore[attr-defined]


PROGRAM = Program("alphabeta", AlphaBetaOptions, alphabeta_spec)
