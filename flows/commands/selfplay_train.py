"""``chesslab selfplay-train --preset tiny|small``: PUCT self-play rounds, each followed by a
training update that registers a new ``policy_value`` version (papers 004 and 002)."""
from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from flows.options import add_config_arguments
from flows.runtime import (
    ONE_GAME_WORKERS,
    add_games_arguments,
    add_runner_arguments,
    games_options,
    make_runner,
)
from pipelines.puct.config import PRESETS, SelfplayTrainConfig, preset_config

#: The games runner's options selfplay-train does not take: ``--workers`` is its own (local
#: processes), a game is one unit (no pairs) and PUCT searches by simulations (no clock).
GAMES_SKIP = ONE_GAME_WORKERS


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "selfplay-train", help="AlphaZero-style self-play training of the PUCT engine's net",
        description="Rounds of self-play games with the run's latest policy_value net (round "
                    "1: an untrained one), stored in selfplay_samples and selfplay_games, "
                    "each followed by Lightning updates on the replay window that register "
                    "policy_value@N. Rerunning the same command continues where it stopped; "
                    "a larger --rounds extends the run.")
    add_config_arguments(parser, SelfplayTrainConfig, skip=("preset", "runner"))
    for action in parser._actions:       # unset options take the preset's value
        if action.dest in {f.name for f in dataclasses.fields(SelfplayTrainConfig)}:
            action.default = None
    parser.add_argument("--preset", default="tiny", choices=tuple(PRESETS),
                        help="defaults: tiny (seconds on a CPU) or small (default: tiny)")
    add_games_arguments(parser, skip=GAMES_SKIP)      # --workers: the config's (local processes)
    add_runner_arguments(parser, cluster=False)
    parser.set_defaults(run=run_selfplay_train)


def config_from(args: argparse.Namespace) -> SelfplayTrainConfig:
    """The preset's values, the options given and the games runner's options."""
    names = [f.name for f in dataclasses.fields(SelfplayTrainConfig)
             if f.name not in ("preset", "runner")]
    return preset_config(args.preset, runner=games_options(args, skip=GAMES_SKIP),
                         **{n: getattr(args, n, None) for n in names})


def run_selfplay_train(args: argparse.Namespace) -> int:
    config = config_from(args)
    from flows.selfplay_train import selfplay_train

    with make_runner(args) as runner:
        summaries = selfplay_train(runner, config, args.lake)
    print(f"selfplay-train run {config.run_id} ({config.preset}):")
    for s in summaries:
        print(f"  round {s.round}: {s.games} games ({s.decisive} decisive), {s.samples} "
              f"positions -> {s.model}")
    return 0


__all__ = ["register"]
