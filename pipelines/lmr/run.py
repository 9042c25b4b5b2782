"""``chesslab lmr-data`` as a plan, units and a summary (paper 003 part II data).

1. play: each missing self-play game of the data run is played by the in-process alpha-beta
   engine with the search log on; the engine writes its sampled LMR decisions to the game's
   search log file (``--search-log``), which this step reads and stores in ``search_log``
   under the run id ``<data run>-g<game>``, then a done marker is written (a killed game is
   replayed whole: ``search_log`` keeps one row per key).
2. label: each logged decision without an ``lmr_examples`` row is re-searched from its FEN at
   depths 1..full by a fresh engine with the default reductions and labelled
   (:mod:`pipelines.lmr.label`), in chunks written as they finish.
3. summary: the run's figures next to the paper's (fail-low share 82 %, mean label 3.37,
   mean full depth 4.55).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import chess

from engines.alphabeta import AlphaBeta, SearchConfig
from engines.alphabeta.searchlog import read_search_log
from pipelines.games.game import Opening
from pipelines.lmr.config import LmrDataConfig, LmrDataError
from pipelines.lmr.label import deepest_fail_high, in_paper_range, largest_safe_reduction
from pipelines.selfplay.game import play_game
from pipelines.selfplay.players import InProcessMover, resolve_engine
from pipelines.tournament.openings import read_openings
from warehouse import Lake, connect
from warehouse.catalog import named_query, query

log = logging.getLogger(__name__)
Progress = Callable[[str], None]


@dataclass(frozen=True)
class LmrDataPlan:
    config: LmrDataConfig
    data_run: str
    folder: str
    openings: tuple[Opening, ...]
    games: tuple[int, ...]          # game indices still to play


@dataclass(frozen=True)
class LmrDataSummary:
    data_run: str
    games_played: int
    decisions_logged: int           # by the games played now
    decisions_labelled: int         # now
    logged: int                     # decisions the run's games logged, all runs of the command
    labelled: int                   # of them, examples with a label
    capped: int                     # examples whose re-search ran out of label_max_nodes
    mates: int                      # examples whose re-search found a mate (not capped)
    examples: int                   # labelled decisions of the run, all runs of the command
    fail_low_share: float | None    # logged decisions whose value was <= alpha (paper: 0.82)
    kept: int                       # fail low at the reduced and the full depth (the fit's rows)
    mean_label_table: float | None  # over the kept rows (paper: 3.37, rule unclear)
    mean_label_code: float | None
    mean_full_depth: float | None   # over the kept rows (paper: 4.55)
    outside_range: int = 0          # logged, never re-searched: outside --paper-range's d and m
                                    # or over --max-full-depth
    at_max_share: float | None = None   # kept rows labelled full - 1: no depth failed high

    def __str__(self) -> str:
        def num(value: float | None, digits: int = 2) -> str:
            return "n/a" if value is None else f"{value:.{digits}f}"
        return (f"lmr-data {self.data_run}: {self.games_played} games played, "
                f"{self.decisions_logged} decisions logged, {self.decisions_labelled} re-searched "
                f"now; of the run's {self.logged} logged decisions {self.labelled} labelled, "
                f"{self.outside_range} outside the paper's range, {self.capped} capped, "
                f"{self.mates} mates; {self.examples} examples, {self.kept} kept (fail low at "
                f"reduced and "
                f"full depth); fail-low share {num(self.fail_low_share)} (paper 0.82), mean "
                f"label {num(self.mean_label_table)} table / {num(self.mean_label_code)} code "
                f"(paper 3.37), mean full depth {num(self.mean_full_depth)} (paper 4.55), "
                f"{num(self.at_max_share)} labelled full - 1 (paper: mean label 0.18 below it)")


# --------------------------------------------------------------------------------------------
# Plan
# --------------------------------------------------------------------------------------------

def data_run_id(config: LmrDataConfig) -> str:
    """A hash of what makes the run's decisions what they are (not the number of games)."""
    values = asdict(config)
    for name in ("games", "label_chunk", "label_max_nodes"):   # more labels, same decisions
        values.pop(name)
    return "lmr-" + hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()[:10]


def game_run_id(data_run: str, game: int) -> str:
    return f"{data_run}-g{game:05d}"


def done_games(folder: Path) -> set[int]:
    return {int(p.stem.split("-")[1]) for p in folder.glob("game-*.done")} \
        if folder.is_dir() else set()


def plan_lmr_data(lake: Lake, config: LmrDataConfig) -> LmrDataPlan:
    """The games still to play; the run folder with its ``run.json`` is created."""
    resolve_engine(config.engine_spec)
    data_run = data_run_id(config)
    folder = lake.home / "lmr" / data_run
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "run.json").write_text(json.dumps(
        {"data_run": data_run, "config": asdict(config)}, indent=2) + "\n")
    done = done_games(folder)
    return LmrDataPlan(config, data_run, str(folder), tuple(load_openings(config)),
                       tuple(g for g in range(config.games) if g not in done))


def load_openings(config: LmrDataConfig) -> list[Opening]:
    if not config.openings:
        return [Opening()]
    try:
        return read_openings(config.openings, config.opening_plies, config.games, config.seed)
    except ValueError as exc:
        raise LmrDataError(f"lmr-data: {exc}") from None


def pending_decisions(lake: Lake, plan: LmrDataPlan) -> list[dict[str, Any]]:
    """Logged decisions of the run without an example, in key order, filtered as A.2/A.3."""
    return [r for r in unlabelled_decisions(lake, plan) if in_label_range(r, plan.config)]


def unlabelled_decisions(lake: Lake, plan: LmrDataPlan) -> list[dict[str, Any]]:
    """Logged decisions of the run without an example, in key order."""
    return query(connect(lake), named_query("lmr_pending"),
                 {"prefix": plan.data_run + "-g"}).to_pylist()


def in_label_range(decision: dict[str, Any], config: LmrDataConfig) -> bool:
    """A decision A.3 labels: full depth up to max_full_depth, and with ``paper_range`` d and
    m in A.2's do_log range."""
    depth, move_no = decision["depth"], decision["move_no"]
    return depth - 1 <= config.max_full_depth and (
        not config.paper_range or (in_paper_range(depth) and in_paper_range(move_no)))


def chunks(rows: list[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(rows), size):
        yield rows[start:start + size]


# --------------------------------------------------------------------------------------------
# Units
# --------------------------------------------------------------------------------------------

def store_logged_game(lake: Lake, plan: LmrDataPlan, game: int,
                      rows: list[dict[str, Any]]) -> int:
    """Store a played game's decisions and mark it done (in the run folder); the rows."""
    if rows:
        lake.write("search_log", rows)
    marker = Path(plan.folder) / f"game-{game:05d}.done"
    marker.write_text(f"{len(rows)}\n")
    return len(rows)


def play_logged(plan: LmrDataPlan, game: int) -> list[dict[str, Any]]:
    """Play one game with the search log on (a games runner's worker may play it: the log is
    a file of its own temporary folder); the decisions its engine wrote."""
    config = plan.config
    folder = Path(tempfile.mkdtemp(prefix="chesslab-lmr-"))
    log_file = folder / f"game-{game:05d}.search_log.jsonl"
    spec = resolve_engine(config.engine_spec)
    spec = dataclasses.replace(spec, command=(*spec.command, "--search-log", str(log_file)))
    mover = InProcessMover(spec, config.nodes, config.depth)
    engine = mover.searcher
    engine.run_id = game_run_id(plan.data_run, game)
    play_game(mover, game, plan.openings[game % len(plan.openings)], config.random_plies,
              config.seed, config.max_plies)
    engine.flush_search_log()
    try:
        return read_search_log(log_file)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def label_engine(config: LmrDataConfig) -> AlphaBeta:
    return AlphaBeta(SearchConfig(eval=config.eval, lmr="default", hash_mb=config.hash_mb))


def research_scores(engine: AlphaBeta, fen: str, full: int, max_nodes: int) -> list[int | None]:
    """The child's re-search at depths 1..full from a fresh table, from the node's point of
    view (negated); None where a depth found a mate. Shorter than ``full`` when the search
    reached ``max_nodes`` first."""
    engine.new_game()
    results = list(engine.iterate(chess.Board(fen), max_depth=full, max_nodes=max_nodes))
    return [-r.score_cp if r.score_cp is not None else None for r in results]


def example(decision: dict[str, Any], scores: list[int | None], data_run: str,
            engine: str) -> dict[str, Any]:
    """The ``lmr_examples`` row of a decision and its re-search scores."""
    full = decision["depth"] - 1
    reduced = decision["depth_new"]
    alpha = decision["alpha"]
    mate = any(s is None for s in scores)
    capped = len(scores) < full
    unlabelled = mate or capped
    values = [s if s is not None else 0 for s in scores]
    return {
        **{k: decision[k] for k in ("run_id", "seq", "fen", "depth", "move_no", "alpha",
                                    "value", "stat_eval", "np_material_w", "np_material_b")},
        "data_run": data_run, "game": int(decision["run_id"].rsplit("-g", 1)[1]),
        "depth_full": full, "depth_reduced": reduced, "scores": scores, "mate": mate,
        "capped": capped,
        "fail_low_reduced": None if unlabelled else values[reduced - 1] <= alpha,
        "fail_low_full": None if unlabelled else deepest_fail_high(values[-1:], alpha) == 0,
        "label_table": None if unlabelled else largest_safe_reduction(values, alpha, "table"),
        "label_code": None if unlabelled else largest_safe_reduction(values, alpha, "code"),
        "label_engine": engine, "labelled_at": datetime.now(UTC)}


def label_decisions(lake: Lake, plan: LmrDataPlan, decisions: list[dict[str, Any]]) -> int:
    """Re-search and label a chunk of decisions; written together as one part."""
    config = plan.config
    engine = label_engine(config)
    name = f"alphabeta:eval={config.eval},lmr=default,hash={config.hash_mb}"
    rows = [example(d, research_scores(engine, d["fen"], d["depth"] - 1, config.label_max_nodes),
                    plan.data_run, name) for d in decisions]
    if rows:
        lake.write("lmr_examples", rows)
    return len(rows)


# --------------------------------------------------------------------------------------------
# Summary
# --------------------------------------------------------------------------------------------

def summarize(lake: Lake, plan: LmrDataPlan, played: int, logged: int,
              labelled: int) -> LmrDataSummary:
    row = query(connect(lake), named_query("lmr_data_summary"),
                {"data_run": plan.data_run, "prefix": plan.data_run + "-g"}).to_pylist()[0]
    outside = sum(not in_label_range(r, plan.config) for r in unlabelled_decisions(lake, plan))
    return LmrDataSummary(plan.data_run, played, logged, labelled, **row, outside_range=outside)
