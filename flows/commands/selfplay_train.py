"""``chesslab selfplay-train --preset tiny|small``: PUCT self-play rounds, each followed by a
training update that registers a new ``policy_value`` version (papers 004 and 002)."""
from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from flows.options import add_config_arguments
from flows.runtime import add_runner_arguments, make_runner
from pipelines.puct.config import PRESETS, SelfplayTrainConfig, preset_config


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "selfplay-train", help="AlphaZero-style self-play training of the PUCT engine's net",
        description="Rounds of self-play games with the run's latest policy_value net (round "
                    "1: an untrained one), stored in selfplay_samples and selfplay_games, "
                    "each followed by Lightning updates on the replay window that register "
                    "policy_value@N. Rerunning the same command continues where it stopped; "
                    "a larger --rounds extends the run.")
    add_config_arguments(parser, SelfplayTrainConfig, skip=("preset",))
    for action in parser._actions:       # unset options take the preset's value
        if action.dest in {f.name for f in dataclasses.fields(SelfplayTrainConfig)}:
            action.default = None
    parser.add_argument("--preset", default="tiny", choices=tuple(PRESETS),
                        help="defaults: tiny (seconds on a CPU) or small (default: tiny)")
    add_runner_arguments(parser, cluster=False)
    parser.set_defaults(run=run_selfplay_train)


def run_selfplay_train(args: argparse.Namespace) -> int:
    names = [f.name for f in dataclasses.fields(SelfplayTrainConfig) if f.name != "preset"]
    config: SelfplayTrainConfig = preset_config(
        args.preset, **{n: getattr(args, n, None) for n in names})
    from flows.selfplay_train import selfplay_train

    with make_runner(args) as runner:
        summaries = selfplay_train(runner, config, args.lake)
    print(f"selfplay-train run {config.run_id} ({config.preset}):")
    for s in summaries:
        print(f"  round {s.round}: {s.games} games ({s.decisive} decisive), {s.samples} "
              f"positions -> {s.model}")
    return 0


__all__ = ["register"]
