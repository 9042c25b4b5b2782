"""The ``chesslab`` command line. Each module in ``flows/commands`` adds its subcommands through
``register(subparsers)``; a subcommand sets ``run=function(args) -> int`` as its default.

Every command exits non-zero with a one-line reason on bad input (``--debug`` shows the trace).
Ctrl-C ends a command at once with ``chesslab: interrupted`` and exit status 130: every write
is a whole part renamed into place, so stopping between two writes loses only unwritten work,
which the next run does again; the children (engines, pool workers, the temporary Prefect
server) die with the command (``pipelines.processes``).
"""
from __future__ import annotations

import argparse
import importlib
import logging
import os
import pkgutil
import signal
import sys
import threading
from collections.abc import Sequence

import flows.commands
from flows.runtime import configure_prefect

log = logging.getLogger("chesslab")

# Errors a user can cause with bad input or a bad environment: reported in one line.
OUR_PACKAGES = ("chesslab", "flows", "pipelines", "engines", "warehouse", "dashboards")
USER_ERRORS = (ValueError, LookupError, OSError, RuntimeError, TimeoutError)


def add_global_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--home", help="warehouse home (default: $CHESSLAB_HOME or ./chesslab_home)")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every command module, or only ``flows/commands/<command>.py`` when that
    module exists: an engine started by a GUI should not pay for importing the others."""
    parser = argparse.ArgumentParser(prog="chesslab", description=__doc__.splitlines()[0])
    add_global_options(parser)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in command_modules(command):
        importlib.import_module(f"flows.commands.{name}").register(subparsers)
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
    os.write(sys.stderr.fileno(), b"chesslab: interrupted\n")
    os._exit(130)


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
    if args.home:
        os.environ["CHESSLAB_HOME"] = args.home
    try:
        return int(args.run(args) or 0)
    except BrokenPipeError:  # output piped into head & co.: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("chesslab: interrupted", file=sys.stderr)
        return 130
    except USER_ERRORS as exc:
        if args.debug:
            raise
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"chesslab {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
