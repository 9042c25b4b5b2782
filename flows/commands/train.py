"""``chesslab train KIND [--preset tiny|small|full] [--option value ...]``: train a model (or
resume the unfinished run of the same options), export it and register it.

The kinds are the ones declared in ``pipelines/kinds/<kind>/kind.py``
(:func:`pipelines.models.kinds.all_kinds`), so a new kind needs no change here: each one's
options are its config's fields, its presets its own, its help its config's docstring."""
from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

from flows.options import add_config_arguments
from flows.parser import summary
from flows.runtime import add_runner_arguments, make_runner
from pipelines.models.kinds import ModelKind, all_kinds, load_kind

UNSET = object()  # an option not given: the preset's value (or the field's default) applies


def register(subparsers: Any) -> None:
    declared = [kind for kind in all_kinds() if kind.command]
    train = subparsers.add_parser(
        "train", help=f"train a model ({', '.join(k.name for k in declared)}), export it and "
                      f"register it",
        description="Rerunning the same command after a kill resumes the unfinished version "
                    "from its last checkpoint.")
    kinds = train.add_subparsers(dest="kind", metavar="KIND", required=True)
    for kind in declared:
        parser = kinds.add_parser(kind.name, help=summary(kind.config.__doc__),
                                  description=kind.config.__doc__)
        parser.add_argument("--preset", default="full", choices=kind.presets,
                            help="starting values; options given override them (default: full)")
        add_config_arguments(parser, kind.config)
        only_given(parser, kind.config)
        if not kind.in_process:
            add_runner_arguments(parser, cluster=False)
        parser.set_defaults(run=run_train)


def only_given(parser: argparse.ArgumentParser, config_cls: type) -> None:
    """Options not given stay unset, so the preset's values win over the dataclass defaults."""
    parser.set_defaults(**{f.name: UNSET for f in dataclasses.fields(config_cls)})


def run_train(args: argparse.Namespace) -> int:
    kind = load_kind(args.kind)
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(kind.config)
             if getattr(args, f.name, UNSET) is not UNSET}
    config = kind.make_config(args.preset, given)
    model = train_in_process(args, kind, config) if kind.in_process else \
        train_on_runner(args, kind, config)
    print(f"{model.model_id} ({model.name}): {model.artifact_path} sha256 {model.artifact_sha256}")
    describe = kind.describe or (lambda lake, m: describe_figures(
        m.model_id, trained_figures(lake, m.model_id)))
    print(describe(args.lake, model))
    return 0


def train_in_process(args: argparse.Namespace, kind: ModelKind, config: Any) -> Any:
    """A kind fitted in seconds (``lmr``): in this process, no runner; its report on stderr."""
    from pipelines.train import train

    return train(args.lake, kind.name, config,
                 progress=lambda line: print(line, file=sys.stderr))


def train_on_runner(args: argparse.Namespace, kind: ModelKind, config: Any) -> Any:
    """The ``train`` step on the runner the options ask for."""
    from flows.train import TRAIN, TrainJob

    with make_runner(args) as runner:
        return runner.run(TRAIN, TrainJob(kind.name, config), args.lake)


def trained_figures(lake: Any, model_id: str) -> dict[str, Any]:
    """The train_summary query's row of ``model_id`` (losses; AUC and threshold)."""
    from warehouse import connect
    from warehouse.catalog import named_query, query

    rows = query(connect(lake), named_query("train_summary"), {"model": model_id}).to_pylist()
    if not rows:
        raise LookupError(f"{model_id}: no training figures in the warehouse")
    return rows[0]


def describe_figures(model_id: str, row: dict[str, Any]) -> str:
    """``nnue@1: train loss 0.0123, validation loss 0.0134 after 4 epochs`` (and a volatility
    model's ROC AUC and threshold)."""
    val = "none" if row["val_loss"] is None else f"{row['val_loss']:.6f}"
    text = (f"{model_id}: train loss {row['train_loss']:.6f}, validation loss {val} after "
            f"{row['epochs']} epochs")
    if row["roc_auc"] is not None:
        text += (f"; validation ROC AUC {row['roc_auc']:.4f}, threshold "
                 f"{row['threshold']:.4f} (chosen at FPR {row['target_fpr']:.2%})")
    return text
