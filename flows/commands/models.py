"""``chesslab models [--kind nnue]``: model versions with status and headline metrics;
``chesslab models --show KIND@VERSION|KIND@latest|KIND@best`` resolves one name;
``chesslab models --lineage NAME`` runs the lineage query (``warehouse/sql/queries/
lineage.sql``): the model's ratings, its engine, data set, label engine and depths and the
files its positions came from."""
from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    models = subparsers.add_parser(
        "models", help="list model versions with status and headline metrics",
        description="Names: KIND@VERSION (nnue@3), KIND@latest, KIND@best (the latest promoted).")
    models.add_argument("--kind", help="only this kind (nnue, ...)")
    models.add_argument("--show", metavar="NAME", help="resolve one model name and print it")
    models.add_argument("--lineage", metavar="NAME",
                        help="ratings of a model and the data, labels and files it was "
                             "trained on (the lineage query)")
    models.add_argument("--format", default="table", choices=("table", "csv", "json"))
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
        print(render(table, args.format) if table.num_rows else
              f"(no ratings of {args.lineage} yet: play it in a tournament or evaluate it)")
        return 0
    table = list_models(lake, args.kind)
    print(render(table, args.format) if table.num_rows else "(no models yet)")
    return 0


def lineage(lake: Any, model_id: str | None) -> Any:
    """The lineage query's rows for ``model_id`` (None: every rated model), as Arrow."""
    from warehouse import connect
    from warehouse.catalog import named_query, query

    return query(connect(lake), named_query("lineage"), {"model": model_id})
