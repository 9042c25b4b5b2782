"""How flows run: the runner the options ask for (``--no-prefect``, ``--cluster``).

The Prefect runner is imported only when it is asked for: commands that need no flow should
not pay for Prefect's import.
"""
from __future__ import annotations

import argparse
from typing import Any


def add_runner_arguments(parser: argparse.ArgumentParser, cluster: bool = True) -> None:
    """``--no-prefect`` (and ``--cluster ADDRESS``) for a command that runs steps."""
    if cluster:
        parser.add_argument("--cluster", metavar="ADDRESS",
                            help="run the units on this Dask scheduler (e.g. tcp://host:8786)")
        parser.set_defaults(units_on_cluster=True)
    parser.add_argument("--no-prefect", action="store_true",
                        help="run in this process without Prefect (the same steps and output)")


#: The games runner's options that only a tournament's batches of game pairs use (``evaluate``,
#: ``checkpoints`` and the ``mcc`` round robins are tournaments); a command that plays games of
#: its own (``selfplay``, ``selfplay-train``, ``lmr-data``, ``datagen``) does not offer them.
PAIRS_ONLY = ("batch_pairs", "clock_reference_nps")
#: ``selfplay``'s and ``selfplay-train``'s: ``--workers`` is their config's (local processes of
#: one game each, so no ``--threads-per-game`` sizes a worker), and no pairs.
ONE_GAME_WORKERS = ("workers", "threads_per_game", *PAIRS_ONLY)


def add_games_arguments(parser: argparse.ArgumentParser, skip: tuple[str, ...] = ()) -> None:
    """The games runner's options (``--cluster``, ``--workers``, ...) of a command that plays
    games (``pipelines.games``)."""
    from flows.options import add_config_arguments
    from pipelines.games import GamesOptions

    add_config_arguments(parser, GamesOptions, skip=skip)


def games_options(args: argparse.Namespace, skip: tuple[str, ...] = ()) -> Any:
    """The ``GamesOptions`` of the parsed options (``skip``: options the command did not
    take from ``GamesOptions``, left at their defaults)."""
    import dataclasses

    from flows.options import config_from_args
    from pipelines.games import GamesOptions

    defaults = {f.name: f.default for f in dataclasses.fields(GamesOptions) if f.name in skip}
    return config_from_args(GamesOptions, args, **defaults)


def make_runner(args: argparse.Namespace, show_progress: bool = True) -> Any:
    """The runner the options ask for, to be used as a context manager. (A command that
    plays games takes ``--cluster`` for its games runner, ``pipelines.games``, not for its
    steps' units: those run here.)"""
    cluster = getattr(args, "cluster", None) if getattr(args, "units_on_cluster", False) \
        else None
    if args.no_prefect:
        if cluster:
            raise ValueError("--cluster needs Prefect: drop --no-prefect")
        from flows.step import LocalRunner

        return LocalRunner(show_progress)
    from flows.prefect_runner import PrefectRunner

    return PrefectRunner(args.lake.home, cluster, show_progress)
