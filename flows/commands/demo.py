"""``chesslab demo``: the whole pipeline on the bundled sample corpus, then a summary: ingest
and label (the ``refresh`` composition), a tiny NNUE trained on the labels, exported and
cross-checked, a few games of the net against the hand-crafted evaluation at fixed nodes,
rated, and the lineage query from that rating back to the labels and files."""
from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from flows.runtime import add_runner_arguments, make_runner

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
DEMO_POSITIONS = 3000
DEMO_DEPTHS = (5, 6, 7)
DEMO_GAMES = 2
DEMO_NODES = 500


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo", help="ingest the bundled sample corpus and label a few thousand positions",
        description=f"Runs the refresh flow on {SAMPLE}: ingest every sample file, then label "
                    f"{DEMO_POSITIONS} positions with Stockfish at depths 5, 6 and 7.")
    parser.add_argument("--positions", type=int, default=DEMO_POSITIONS,
                        help="positions to label (default: %(default)s)")
    parser.add_argument("--games", type=int, default=DEMO_GAMES,
                        help="games of the demo net against the HCE, in pairs (default: "
                             "%(default)s; 0 skips the models part)")
    parser.add_argument("--workers", type=int, default=None,
                        help="Stockfish processes (default: one per core)")
    add_runner_arguments(parser, cluster=False)
    parser.set_defaults(run=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    from pipelines.label import LabelConfig

    if not SAMPLE.is_dir():
        raise FileNotFoundError(f"sample corpus not found: {SAMPLE}")
    lake = args.lake
    options = {"workers": args.workers} if args.workers else {}
    config = LabelConfig(depths=DEMO_DEPTHS, limit=args.positions, **options)
    print(f"chesslab demo: {SAMPLE} -> {lake.home}")
    started = time.monotonic()
    from flows.commands.ingest import summary_table
    from flows.refresh import refresh

    with make_runner(args) as runner:   # one runner: on --prefect, one temporary server
        ingested, labelled = refresh(runner, str(SAMPLE), config, lake)
        print(f"{summary_table(ingested)}\n\n{labelled}")
        if args.games > 0:
            print(models_part(runner, lake, args.games))
    print(f"\n{summary(lake)}")     # after the models part: the tables hold its model too
    print(f"\ndemo finished in {time.monotonic() - started:.0f} s. Next: chesslab status, "
          f"chesslab models, chesslab models --lineage nnue@latest, chesslab dashboard")
    return 0


def summary(lake: Any) -> str:
    """Tables, label coverage and the paper-003 stability share of what the demo made."""
    from warehouse import connect
    from warehouse.catalog import named_query, query
    from warehouse.render import render
    from warehouse.status import label_coverage, table_rows

    con = connect(lake)
    parts = [render(table_rows(con, lake)), "", "labelled positions per engine and depth:",
             render(label_coverage(con)), "",
             "volatility (paper 003: stable when |V7 - V6| < 18 cp; the paper saw ~23%):",
             render(query(con, named_query("dashboard_volatility")))]
    return "\n".join(parts)


def models_part(runner: Any, lake: Any, games: int) -> str:
    """Train the tiny NNUE on the demo's labels (export and cross-check included), play it
    against the HCE at fixed nodes, rate the games and show the lineage of the rating."""
    from flows.commands.models import lineage
    from flows.evaluate import evaluate
    from flows.train import TRAIN, TrainJob
    from pipelines.kinds.nnue.config import NnueConfig
    from pipelines.ratings import format_ratings
    from pipelines.tournament import TournamentConfig
    from pipelines.train.config import preset
    from warehouse.render import render

    config = preset(NnueConfig, "tiny", name="nnue-demo", check_positions=1000)
    model = runner.run(TRAIN, TrainJob("nnue", config), lake)
    match = TournamentConfig(
        engines=(f"alphabeta:eval=nnue,model={model.model_id}", "alphabeta:eval=hce"),
        rounds=max(1, games // 2), nodes=DEMO_NODES, openings=str(SAMPLE / "suite.epd"),
        event="chesslab demo: nnue vs hce")
    result = evaluate(runner, match, lake)
    ratings = format_ratings(result.ratings) if result.ratings is not None else "(no games)"
    return "\n".join([
        "", f"{model.model_id} ({model.name}): {model.artifact_path}",
        cross_check_line(lake, model.model_id), "",
        f"{model.model_id} against the hand-crafted evaluation, {DEMO_NODES} nodes a move:",
        ratings, "", f"lineage of {model.model_id} (warehouse/sql/queries/lineage.sql):",
        render(lineage(lake, model.model_id).select(LINEAGE_COLUMNS))])


LINEAGE_COLUMNS = ["player", "elo", "games", "model_id", "view", "label_engine_id",
                   "label_depths", "train_rows", "validation_rows", "source_path", "positions"]


def cross_check_line(lake: Any, model_id: str) -> str:
    """The exported net's cross-check against the float model (its ``exported`` event)."""
    import json

    from warehouse import connect

    payload = connect(lake).execute(
        "select payload from model_events where model_id = ? and event = 'exported' "
        "order by recorded_at desc limit 1", [model_id]).fetchone()
    check = json.loads(payload[0])["cross_check"] if payload else {}
    return (f"exported net vs float model on {check.get('positions')} positions: mean "
            f"{check.get('float_vs_quantised_mean_cp', float('nan')):.2f} cp, max "
            f"{check.get('float_vs_quantised_max_cp', float('nan')):.2f} cp; the float model's "
            f"scores spread over {check.get('float_cp_spread', float('nan')):.0f} cp")
