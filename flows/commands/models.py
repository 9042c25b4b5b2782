"""``chesslab models [--kind nnue]``: model versions with status and headline metrics;
``chesslab models --show KIND@VERSION|KIND@latest|KIND@best`` resolves one name;
``chesslab models --lineage NAME`` runs the lineage query (``warehouse/sql/queries/
lineage.sql``): the model's ratings, its engine, data set, label engine and depths and the
files its positions came from: a short tree per model by default, the query's whole table
with ``--format``."""
from __future__ import annotations

import argparse
from typing import Any

FORMATS = ("table", "csv", "json", "jsonl")    # warehouse.render's


def register(subparsers: Any) -> None:
    models = subparsers.add_parser(
        "models", help="list model versions with status and headline metrics",
        description="Names: KIND@VERSION (nnue@3), KIND@latest, KIND@best (the latest promoted).")
    models.add_argument("--kind", help="only this kind (nnue, ...)")
    models.add_argument("--show", metavar="NAME", help="resolve one model name and print it")
    models.add_argument("--lineage", metavar="NAME",
                        help="ratings of a model and the data, labels and files it was "
                             "trained on (the lineage query)")
    models.add_argument("--format", choices=FORMATS, metavar="{" + ",".join(FORMATS) + "}",
                        help="output: table (default), csv, json (one document) or jsonl "
                             "(an object per line); with --lineage the query's whole table "
                             "(its default is a short tree per model)")
    models.set_defaults(run=run_models)


def run_models(args: argparse.Namespace) -> int:
    from pipelines.models.registry import list_models, resolve_model
    from warehouse.render import render

    lake = args.lake
    if args.show:
        model = resolve_model(lake, args.show)
        print(f"{model.model_id} {model.name} status={model.status} "
              f"created={model.created_at:%Y-%m-%d %H:%M} sha256={model.artifact_sha256}\n"
              f"{model.artifact_path}")
        return 0
    if args.lineage:
        table = lineage(lake, resolve_model(lake, args.lineage).model_id)
        if not table.num_rows:
            print(f"(no ratings of {args.lineage} yet: play it in a tournament or evaluate it)")
            return 0
        print(render(table, args.format) if args.format else lineage_tree(table.to_pylist()))
        return 0
    table = list_models(lake, args.kind)
    print(render(table, args.format or "table") if table.num_rows else "(no models yet)")
    return 0


def lineage_tree(rows: list[dict[str, Any]]) -> str:
    """The lineage query's rows (one per rating and source file) as a short tree per model:
    the model, its data set and the files it came from, then its ratings.

    >>> row = {"model_id": "nnue@1", "model_name": "nnue-tiny", "artifact_sha256": "ab" * 32,
    ...        "view": "nnue_examples", "label_engine_id": "stockfish-1a2b",
    ...        "label_depths": [7], "train_rows": 900, "validation_rows": 100,
    ...        "source_path": "data/sample/games.pgn.zst", "source_format": "pgn",
    ...        "positions": 1234, "rating_source": "3f2a9c", "player": "nnue#net", "rank": 1,
    ...        "elo": 12.3, "plus": 30.1, "minus": 29.0, "games": 40}
    >>> print(lineage_tree([row]))
    nnue@1  nnue-tiny  sha256 abababababab
      data set: nnue_examples, 900 train + 100 validation rows, labels of stockfish-1a2b at depth 7
        from data/sample/games.pgn.zst (pgn): 1,234 positions
      rated: nnue#net in 3f2a9c: rank 1, Elo +12.3 [-29.0, +30.1], 40 games
    """
    lines: list[str] = []
    for model_id in dict.fromkeys(row["model_id"] for row in rows):
        mine = [row for row in rows if row["model_id"] == model_id]
        first = mine[0]
        depths = ", ".join(str(d) for d in first["label_depths"] or [])
        lines += [f"{model_id}  {first['model_name']}  sha256 {first['artifact_sha256'][:12]}",
                  f"  data set: {first['view']}, {first['train_rows']:,} train + "
                  f"{first['validation_rows']:,} validation rows, labels of "
                  f"{first['label_engine_id']} at depth {depths}"]
        files = dict.fromkeys((r["source_path"], r["source_format"], r["positions"])
                              for r in mine if r["source_path"] is not None)
        lines += [f"    from {path} ({kind}): {positions:,} positions"
                  for path, kind, positions in files]
        ratings = dict.fromkeys((r["player"], r["rating_source"], r["rank"], r["elo"],
                                 r["plus"], r["minus"], r["games"]) for r in mine)
        lines += [f"  rated: {player} in {source}: rank {rank}, Elo {elo:+.1f} "
                  f"[{-minus:+.1f}, {plus:+.1f}], {games} games"
                  for player, source, rank, elo, plus, minus, games in ratings]
    return "\n".join(lines)


def lineage(lake: Any, model_id: str | None) -> Any:
    """The lineage query's rows for ``model_id`` (None: every rated model), as Arrow."""
    from warehouse import connect
    from warehouse.catalog import named_query, query

    return query(connect(lake), named_query("lineage"), {"model": model_id})
