"""The ``chesslab`` command line. Each module in ``flows/commands`` adds its subcommands through
``register(subparsers)``; a subcommand sets ``run=function(args) -> int`` as its default.

Every command exits non-zero with a one-line reason on bad input (``--debug`` shows the trace).
Ctrl-C ends a command at once with ``chesslab: interrupted`` and exit status 130: every write
is a whole part renamed into place, so stopping between two writes loses only unwritten work,
which the next run does again; the children (engines, pool workers, the temporary Prefect
server) die with the command (``pipelines.processes``).

The warehouse is resolved here once: ``--home``, else ``$CHESSLAB_HOME``, else
``./chesslab_home`` becomes ``args.lake`` (a :class:`warehouse.Lake`), which the commands hand
down to runners, steps and units; nothing below ``flows/`` reads the environment for it. A
command that reads the warehouse refuses a folder that holds none (a mistyped ``--home`` is
not an empty warehouse); one that writes creates it and says where (``WAREHOUSE_USE``).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import pkgutil
import re
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import flows.commands
from flows.console import CONSOLE, PanicFilter, exit_now, whole_lines
from flows.parser import ChesslabParser, subparsers_of
from flows.prefect_settings import configure_prefect

log = logging.getLogger("chesslab")

#: The home when ``--home`` is not given: this variable, else ``DEFAULT_HOME``.
HOME_ENV = "CHESSLAB_HOME"
DEFAULT_HOME = "chesslab_home"

# Errors a user can cause with bad input or a bad environment: reported in one line.
OUR_PACKAGES = ("chesslab", "flows", "pipelines", "engines", "warehouse", "dashboards")
USER_ERRORS = (ValueError, LookupError, OSError, RuntimeError, TimeoutError)
DESCRIPTION = (
    "Chess corpora to labelled positions, models, engines and ratings, in one warehouse: a "
    "folder given by --home (default: $CHESSLAB_HOME, else ./chesslab_home).\n\n"
    "Commands that only read the warehouse refuse a folder that holds none; the first "
    "command that writes to a new folder creates it and says so. 'chesslab COMMAND --help' "
    "describes a command's options; --home, -v and --debug may come before or after it.")

# What a command does with the warehouse: NEEDS one (reads it, or builds on what it holds),
# CREATES one when the folder holds none (it writes new data), or does not use it (None).
# A callable decides from the options. Every command is listed (a test checks it).
NEEDS, CREATES = "needs", "creates"
WarehouseUse = str | None | Callable[[argparse.Namespace], str | None]


#: The commands by workflow, in the order a newcomer meets them: ``chesslab --help`` lists them
#: so (every command is in one group: a test checks it).
WORKFLOWS: dict[str, tuple[str, ...]] = {
    "getting started": ("demo", "status"),
    "data": ("ingest", "label", "refresh", "export", "selfplay", "datagen", "endgames", "sql",
             "compact"),
    "models": ("train", "models", "evaluate", "make-net", "selfplay-train", "lmr-data",
               "checkpoints"),
    "games": ("tournament", "ratings", "sprt", "pgn", "engine", "perft", "bench", "mcc"),
    "operations": ("serve", "trigger", "dashboard"),
}


def names_a_model(args: argparse.Namespace) -> str | None:
    """An engine or bench whose options name a registry model (``--lmr lmr@3``)."""
    from engines.identity import MODEL_VERSION

    return NEEDS if any(isinstance(v, str) and MODEL_VERSION.match(v)
                        for v in vars(args).values()) else None


WAREHOUSE_USE: dict[str, WarehouseUse] = {
    "bench": names_a_model, "checkpoints": NEEDS, "compact": NEEDS, "dashboard": NEEDS,
    "datagen": CREATES, "demo": CREATES, "endgames": None, "engine": names_a_model, "evaluate": NEEDS,
    "export": NEEDS,
    "ingest": CREATES, "label": NEEDS, "lmr-data": CREATES, "make-net": CREATES, "mcc": CREATES,
    "models": NEEDS,
    "perft": None, "pgn": NEEDS, "ratings": lambda a: NEEDS if a.tournament else CREATES,
    "refresh": CREATES, "selfplay": CREATES, "selfplay-train": CREATES, "serve": CREATES,
    "sprt": lambda a: NEEDS if a.tournament else None,
    "sql": lambda a: None if getattr(a, "describe", None) else NEEDS, "status": NEEDS,
    "tournament": CREATES, "train": NEEDS, "trigger": NEEDS,
}


def add_global_options(parser: argparse.ArgumentParser, default: Any = None) -> None:
    """``--home``, ``-v`` and ``--debug``; a subcommand's copies (``default=SUPPRESS``) only
    set what they are given, over the top level's values."""
    parser.add_argument("--home", default=default,
                        help="warehouse home (default: $CHESSLAB_HOME or ./chesslab_home)")
    parser.add_argument("-v", "--verbose", action="count",
                        default=0 if default is None else default, help="more logging")
    parser.add_argument("--debug", action="store_true",
                        default=False if default is None else default, help="show tracebacks")


def version_line() -> str:
    """``chesslab VERSION (git COMMIT, Python X.Y.Z)``: what a bug report or a cluster worker's
    check names. The commit is the checkout's when chesslab runs from one (an editable
    install), else left out."""
    import platform
    from importlib.metadata import PackageNotFoundError, version

    try:
        number = version("chesslab")
    except PackageNotFoundError:      # run from a source tree that was never installed
        number = "unknown"
    parts = [f"git {commit}"] if (commit := source_commit()) else []
    parts.append(f"Python {platform.python_version()}")
    return f"chesslab {number} ({', '.join(parts)})"


def source_commit() -> str | None:
    """The short commit of the git checkout chesslab's code is in, or None outside one (read
    from ``.git``, a folder or a worktree's ``gitdir:`` file, without running git)."""
    git = Path(__file__).resolve().parent.parent / ".git"
    try:
        if git.is_file():
            git = Path(git.read_text().split(":", 1)[1].strip())
        head = (git / "HEAD").read_text().strip()
        if head.startswith("ref: "):
            common = git / "commondir"       # a worktree's branches live in the main .git
            shared = (git / common.read_text().strip()).resolve() if common.is_file() else git
            head = ref_commit(git, head[5:]) or ref_commit(shared, head[5:])
    except (OSError, IndexError):
        return None
    return head[:10] if re.fullmatch(r"[0-9a-f]{40}", head) else None


def ref_commit(git: Path, name: str) -> str:
    """A ref's commit: its loose file, else its line in ``packed-refs``; "" when neither."""
    loose = git / name
    if loose.is_file():
        return loose.read_text().strip()
    packed = git / "packed-refs"
    lines = packed.read_text().splitlines() if packed.is_file() else []
    return next((line.split()[0] for line in lines if line.endswith(f" {name}")), "")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every command module, or only ``flows/commands/<command>.py`` when that
    module exists: an engine started by a GUI should not pay for importing the others."""
    parser = ChesslabParser(prog="chesslab", description=DESCRIPTION, workflows=WORKFLOWS)
    parser.add_argument("--version", action="version", version=version_line(),
                        help="show chesslab's version (and git commit) and exit")
    add_global_options(parser)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in command_modules(command):
        importlib.import_module(f"flows.commands.{name}").register(subparsers)
    for sub in subparsers_of(parser):
        add_global_options(sub, default=argparse.SUPPRESS)
    return parser


def command_modules(command: str | None) -> list[str]:
    names = sorted(m.name for m in pkgutil.iter_modules(flows.commands.__path__))
    return [command] if command in names else names


def requested_command(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv``, if any (global options may come first)."""
    pre = argparse.ArgumentParser(add_help=False)
    add_global_options(pre)
    pre.add_argument("command", nargs="?")
    known, _ = pre.parse_known_args(argv)
    return known.command


def configure_logging(verbose: int) -> None:
    """chesslab's progress by default, ``-v`` its details and Prefect's warnings, ``-vv``
    everything. Prefect's own report of a failed run (a traceback per flow and task) stays
    hidden unless asked for: the command reports the failure in one line."""
    if verbose < 2:
        os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING" if verbose else "CRITICAL")
    configure_prefect()
    ours = logging.INFO if verbose == 0 else logging.DEBUG
    logging.basicConfig(level=logging.WARNING if verbose < 2 else logging.DEBUG,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for handler in logging.root.handlers:
        handler.setLevel(logging.DEBUG)
    for package in OUR_PACKAGES:
        logging.getLogger(package).setLevel(ours)
    # Lightning logs its set-up (devices, tips) through its own handler and the root one:
    # twice, and not progress. -v shows it. (Its package logger's level is reset when
    # Lightning is imported; the rank-zero loggers it logs through keep theirs.)
    for name in ("lightning.pytorch.utilities.rank_zero", "lightning.fabric.utilities.rank_zero"):
        logging.getLogger(name).setLevel(logging.INFO if verbose else logging.WARNING)


def interrupted(signum: int, frame: object) -> None:
    """SIGINT: one line, then exit 130 without unwinding (Prefect's engine would spend a
    minute reporting the crash to its server, with a hundred lines of tracebacks)."""
    exit_now("chesslab: interrupted", 130)


def main(argv: Sequence[str] | None = None) -> int:
    if threading.current_thread() is not threading.main_thread():
        return run_command(argv)
    previous = signal.signal(signal.SIGINT, interrupted)
    try:
        return run_command(argv)
    finally:
        signal.signal(signal.SIGINT, previous)


def run_command(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(requested_command(argv))
    args = parser.parse_args(argv)
    configure_logging(args.verbose)
    whole_lines()
    quiet = not (args.verbose or args.debug) and \
        threading.current_thread() is threading.main_thread()
    with contextlib.ExitStack() as stack:
        if quiet:   # Rust panic reports off the console: the one-line error says it
            with contextlib.suppress(OSError):    # no descriptor 2 to relay: nothing to hide
                CONSOLE.append(stack.enter_context(PanicFilter()))
                stack.callback(CONSOLE.clear)
        return run_checked(args)


def home_of(args: argparse.Namespace) -> str:
    """The home the command uses: ``--home``, else ``$CHESSLAB_HOME``, else the default."""
    return str(args.home or os.environ.get(HOME_ENV) or DEFAULT_HOME)


def run_checked(args: argparse.Namespace) -> int:
    """The command, its failures as one line. A warehouse made for it is announced when the
    command ends, unless it failed before writing anything (then it is removed again)."""
    created: Path | None = None
    try:
        args.home, args.lake = home_of(args), None
        created = check_warehouse(args)
        code = int(args.run(args) or 0)
    except BrokenPipeError:  # output piped into head & co.: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    except KeyboardInterrupt:
        announce(created, failed=True)
        print("chesslab: interrupted", file=sys.stderr)
        return 130
    except USER_ERRORS as exc:
        announce(created, failed=True)
        if args.debug:
            raise
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"chesslab {args.command}: error: {message}", file=sys.stderr)
        return 2
    except BaseException:
        announce(created, failed=True)
        raise
    announce(created, failed=code != 0)
    return code


def announce(created: Path | None, failed: bool) -> None:
    """``chesslab: created a new warehouse at HOME``, for a warehouse this command made; a
    failed command's warehouse that holds nothing is removed instead, without a word."""
    from warehouse.catalog import remove_empty_warehouse

    if created is None or (failed and remove_empty_warehouse(created)):
        return
    print(f"chesslab: created a new warehouse at {created}", file=sys.stderr)


def warehouse_use(args: argparse.Namespace) -> str | None:
    use = WAREHOUSE_USE.get(args.command)
    return use(args) if callable(use) else use


def check_warehouse(args: argparse.Namespace) -> Path | None:
    """``args.lake`` for a command that uses the warehouse (the others do not import it: an
    engine a GUI starts stays quick); refuse a reading command on a folder without a
    warehouse; make one for a writing command (returns its home then, for :func:`announce`)."""
    use = warehouse_use(args)
    if use is None:
        return None
    from warehouse import Lake
    from warehouse.catalog import NoWarehouseError, create_warehouse, require_warehouse

    args.lake = Lake(args.home)
    if use == NEEDS:
        try:
            require_warehouse(args.lake)
        except NoWarehouseError as exc:
            raise NoWarehouseError(f"{exc}; give the home with --home or {HOME_ENV}, or "
                                   f"create one with 'chesslab ingest' or 'chesslab demo'") \
                from None
        return None
    return create_warehouse(args.lake)


if __name__ == "__main__":
    sys.exit(main())
