"""How flows run: the runner the options ask for (``--prefect``, ``--no-prefect``,
``--cluster``).

A command runs its steps in this process (:class:`flows.step.LocalRunner`) unless a Prefect
server is configured (``PREFECT_API_URL`` in the environment or in the active Prefect
profile) or ``--prefect`` asks for one: starting Prefect costs 10-20 s on an idle machine and
minutes on a busy one (its import alone, and a temporary server), for work that often takes a
second. With a server configured the runs report to it as Prefect flows; ``--prefect``
without one starts a temporary server for the command (``flows.server``); ``--no-prefect``
runs in this process even with a server configured.

The Prefect runner is imported only when it is asked for: commands that need no flow should
not pay for Prefect's import.
"""
from __future__ import annotations

import argparse
import os
import tomllib
from pathlib import Path
from typing import Any


def add_runner_arguments(parser: argparse._ActionsContainer, cluster: bool = True) -> None:
    """``--prefect`` / ``--no-prefect`` (and ``--cluster ADDRESS``) for a command that runs
    steps."""
    if cluster:
        parser.add_argument("--cluster", metavar="ADDRESS",
                            help="run the units on this Dask scheduler (e.g. tcp://host:8786)")
        parser.set_defaults(units_on_cluster=True)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--prefect", action="store_true",
                       help="run as Prefect flows: on the server of PREFECT_API_URL, else on "
                            "a temporary one started for the command (10-20 s, more on a "
                            "busy machine); the default when PREFECT_API_URL is set")
    group.add_argument("--no-prefect", action="store_true",
                       help="run in this process without Prefect, even with PREFECT_API_URL "
                            "set (the default without it; the same steps and output)")


def configured_prefect_api() -> str | None:
    """The Prefect API a user configured: ``PREFECT_API_URL`` in the environment, else in the
    active profile of Prefect's ``profiles.toml`` (what ``prefect config set`` writes); read
    without importing Prefect, which alone takes seconds."""
    if url := os.environ.get("PREFECT_API_URL", "").strip():
        return url
    home = Path(os.environ.get("PREFECT_HOME") or Path.home() / ".prefect").expanduser()
    path = Path(os.environ.get("PREFECT_PROFILES_PATH") or home / "profiles.toml").expanduser()
    try:
        profiles = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return None
    name = os.environ.get("PREFECT_PROFILE") or profiles.get("active")
    profile = profiles.get("profiles", {}).get(name, {}) if isinstance(name, str) else {}
    value = profile.get("PREFECT_API_URL") if isinstance(profile, dict) else None
    return value.strip() or None if isinstance(value, str) else None


def uses_prefect(args: argparse.Namespace) -> bool:
    """Whether the command runs as Prefect flows: ``--prefect``, or a configured server and
    no ``--no-prefect``."""
    if getattr(args, "no_prefect", False):
        return False
    return bool(getattr(args, "prefect", False)) or configured_prefect_api() is not None


#: The games runner's options that only a tournament's batches of game pairs use (``evaluate``,
#: ``checkpoints`` and the ``mcc`` round robins are tournaments); a command that plays games of
#: its own (``selfplay``, ``selfplay-train``, ``lmr-data``, ``datagen``) does not offer them.
PAIRS_ONLY = ("batch_pairs", "clock_reference_nps")
#: ``selfplay``'s and ``selfplay-train``'s: ``--workers`` is their config's (local processes of
#: one game each, so no ``--threads-per-game`` sizes a worker), and no pairs.
ONE_GAME_WORKERS = ("workers", "threads_per_game", *PAIRS_ONLY)


def add_games_arguments(parser: argparse._ActionsContainer, skip: tuple[str, ...] = ()) -> None:
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
    if not uses_prefect(args):
        from flows.step import LocalRunner

        return LocalRunner(show_progress, cluster)
    from flows.prefect_runner import PrefectRunner

    return PrefectRunner(args.lake.home, cluster, show_progress)
