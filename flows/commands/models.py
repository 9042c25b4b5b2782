"""``chesslab models [--kind nnue]``: model versions with status and headline metrics;
``chesslab models --show KIND@VERSION|KIND@latest|KIND@best`` resolves one name."""
from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    models = subparsers.add_parser(
        "models", help="list model versions with status and headline metrics",
        description="Names: KIND@VERSION (nnue@3), KIND@latest, KIND@best (the latest promoted).")
    models.add_argument("--kind", help="only this kind (nnue, ...)")
    models.add_argument("--show", metavar="NAME", help="resolve one model name and print it")
    models.add_argument("--format", default="table", choices=("table", "csv", "json"))
    models.set_defaults(run=run_models)


def run_models(args: argparse.Namespace) -> int:
    from pipelines.train.registry import list_models, resolve_model
    from warehouse import Lake
    from warehouse.render import render

    lake = Lake()
    if args.show:
        model = resolve_model(lake, args.show)
        print(f"{model.model_id} {model.name} status={model.status} "
              f"created={model.created_at:%Y-%m-%d %H:%M} sha256={model.artifact_sha256}\n"
              f"{model.artifact_path}")
        return 0
    table = list_models(lake, args.kind)
    print(render(table, args.format) if table.num_rows else "(no models yet)")
    return 0
