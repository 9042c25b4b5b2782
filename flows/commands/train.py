"""``chesslab train KIND [--preset tiny|small|full] [--option value ...]``: train a model (or
resume the unfinished run of the same options), export it and register it."""
from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from flows.options import add_config_arguments
from flows.parser import summary
from flows.runtime import add_runner_arguments, make_runner
from pipelines.train.config import PRESETS, NnueConfig, TrainConfig, preset
from pipelines.train.volatility_config import VolatilityConfig

CONFIGS: dict[str, type[TrainConfig]] = {"nnue": NnueConfig, "volatility": VolatilityConfig}
UNSET = object()  # an option not given: the preset's value (or the field's default) applies


def register(subparsers: Any) -> None:
    train = subparsers.add_parser(
        "train", help="train a model (nnue, volatility, lmr), export it and register it",
        description="Rerunning the same command after a kill resumes the unfinished version "
                    "from its last checkpoint.")
    kinds = train.add_subparsers(dest="kind", metavar="KIND", required=True)
    for kind, config_cls in CONFIGS.items():
        parser = kinds.add_parser(kind, help=summary(config_cls.__doc__),
                                  description=config_cls.__doc__)
        parser.add_argument("--preset", default="full", choices=tuple(PRESETS),
                            help="starting values; options given override them (default: full)")
        add_config_arguments(parser, config_cls)
        only_given(parser, config_cls)
        add_runner_arguments(parser, cluster=False)
        parser.set_defaults(run=run_train, config_cls=config_cls)
    register_lmr(kinds)


def register_lmr(kinds: Any) -> None:
    """``chesslab train lmr``: a scikit-learn fit, run in this process (seconds, no Prefect)."""
    from pipelines.lmr.config import LmrConfig

    parser = kinds.add_parser("lmr", help=summary(LmrConfig.__doc__),
                              description=LmrConfig.__doc__)
    parser.add_argument("--preset", default="full", choices=("tiny", "full"),
                        help="tiny: a shallow six-position bench (default: full)")
    add_config_arguments(parser, LmrConfig)
    only_given(parser, LmrConfig)
    parser.set_defaults(run=run_train_lmr)


def only_given(parser: argparse.ArgumentParser, config_cls: type) -> None:
    """Options not given stay unset, so the preset's values win over the dataclass defaults."""
    parser.set_defaults(**{f.name: UNSET for f in dataclasses.fields(config_cls)})


def run_train_lmr(args: argparse.Namespace) -> int:
    import sys

    from pipelines.lmr.config import LmrConfig
    from pipelines.train.lmr import train_lmr

    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(LmrConfig)
             if getattr(args, f.name, UNSET) is not UNSET}
    config = LmrConfig.tiny(**given) if args.preset == "tiny" else LmrConfig(**given)
    lake = args.lake
    model, fits = train_lmr(lake, config, progress=lambda line: print(line, file=sys.stderr))
    print(f"{model.model_id} ({model.name}): {model.artifact_path} sha256 {model.artifact_sha256}")
    deployed = next(f for f in fits if f.formula == config.deploy)
    figures = trained_figures(lake, model.model_id)
    print(f"{model.model_id}: R² of the deployed formula {deployed.formula}: "
          f"{deployed.r2:.4f}; train loss {figures['train_loss']:.4f} (1 - R² of the best "
          f"formula), no validation loss (the fit is in-sample)")
    return 0


def run_train(args: argparse.Namespace) -> int:
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(args.config_cls)
             if getattr(args, f.name, UNSET) is not UNSET}
    config = preset(args.config_cls, args.preset, **{"name": f"{args.kind}-{args.preset}",
                                                     **given})
    from flows.train import TRAIN, TrainJob

    with make_runner(args) as runner:
        model = runner.run(TRAIN, TrainJob(args.kind, config), args.lake)
    print(f"{model.model_id} ({model.name}): {model.artifact_path} sha256 {model.artifact_sha256}")

    print(describe_figures(model.model_id, trained_figures(args.lake, model.model_id)))
    return 0


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
