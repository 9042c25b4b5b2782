"""chesslab's lines in the logs of the Prefect run that makes them, and each run's summary as
a markdown artifact (a table), so the Prefect UI shows what a run did.

``pipelines`` and ``engines`` log through ``logging`` and never import Prefect; this module
bridges them: :func:`install` puts a handler on chesslab's package loggers that sends every
record made inside a flow or task run to that run's logs (the API only: the console shows
them already), and :func:`log_line` does the same for a progress line. Records made outside
a run (a plain command, a thread the run did not start) are left to the console.

"""
from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Iterable, Sequence
from typing import Any

from flows.prefect_settings import configure_prefect

configure_prefect()  # before Prefect's first import

from prefect.artifacts import create_markdown_artifact  # noqa: E402
from prefect.context import get_run_context  # noqa: E402
from prefect.exceptions import MissingContextError  # noqa: E402
from prefect.logging.handlers import APILogHandler  # noqa: E402

#: chesslab's packages, whose log records a run's logs carry.
PACKAGES = ("chesslab", "flows", "pipelines", "engines", "warehouse", "dashboards")
#: The logger of progress lines: to the run's logs only (they are printed to stderr already).
PROGRESS = logging.getLogger("chesslab.progress")
PROGRESS.propagate = False
MAX_CELL = 200


def in_run() -> bool:
    """Whether this thread runs inside a Prefect flow or task run."""
    try:
        get_run_context()
    except MissingContextError:
        return False
    return True


class RunLogHandler(APILogHandler):
    """Prefect's API log handler for chesslab's records made inside a run; the rest (a
    command without Prefect, a thread outside the run's context) is dropped here."""

    def emit(self, record: logging.LogRecord) -> None:
        if in_run():
            super().emit(record)


def install(level: int = logging.INFO) -> None:
    """Send chesslab's log records and progress lines made inside runs to the runs' logs
    (once per process). A package logger left at the default level is set to ``level``:
    a served run's process has no ``chesslab`` command to set it."""
    if any(isinstance(h, RunLogHandler) for h in PROGRESS.handlers):
        return
    handler = RunLogHandler(level)
    for name in PACKAGES:
        logger = logging.getLogger(name)
        if logger.level == logging.NOTSET:
            logger.setLevel(level)
        logger.addHandler(handler)
    PROGRESS.setLevel(logging.INFO)
    PROGRESS.addHandler(handler)


def flush() -> None:
    """Send the log records still queued (before a temporary server stops: records sent
    later find no server and print an error)."""
    if any(isinstance(h, RunLogHandler) for h in PROGRESS.handlers):
        APILogHandler().flush()


def log_line(line: str) -> None:
    """A progress line into the current run's logs (nothing outside a run)."""
    PROGRESS.info(line)


def cell(value: Any) -> str:
    """A value as one markdown table cell.

    >>> cell(0.123456), cell(["a", "b"]), cell({"H1": 2}), cell("a|b"), cell(None)
    ('0.1235', 'a, b', 'H1=2', 'a\\\\|b', '')
    """
    if value is None:
        text = ""
    elif isinstance(value, float):
        text = f"{value:.4g}"
    elif isinstance(value, dict):
        text = ", ".join(f"{k}={cell(v)}" for k, v in value.items())
    elif isinstance(value, list | tuple | set | frozenset):
        text = ", ".join(cell(v) for v in value)
    else:
        text = str(value)
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= MAX_CELL else text[:MAX_CELL - 1] + "…"


def fields(item: Any, prefix: str = "") -> dict[str, Any]:
    """A dataclass's fields, a nested dataclass's flattened as ``outer.inner``."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(item):
        value = getattr(item, f.name)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            out.update(fields(value, f"{prefix}{f.name}."))
        else:
            out[prefix + f.name] = value
    return out


def is_record(value: Any) -> bool:
    """A dataclass instance or a dict: one row of named values."""
    return isinstance(value, dict) or (dataclasses.is_dataclass(value)
                                       and not isinstance(value, type))


def named_values(item: Any) -> dict[str, Any]:
    return dict(item) if isinstance(item, dict) else fields(item)


def tables(summary: Any) -> list[str]:
    """Markdown tables of a summary: a dataclass (or dict) as ``field | value`` rows, a list
    of them as one row each, a tuple as the tables of its parts, anything else as one
    ``result`` cell (text lines as rows).

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Row:
    ...     path: str
    ...     games: int
    >>> print("\\n\\n".join(tables([Row("a.pgn", 3), Row("b.pgn", 0)])))
    | path | games |
    | --- | --- |
    | a.pgn | 3 |
    | b.pgn | 0 |
    >>> print(tables(Row("a.pgn", 3))[0])
    | field | value |
    | --- | --- |
    | path | a.pgn |
    | games | 3 |
    >>> print(tables("retrain nnue: not due: 12 of 100 new labels")[0])
    | result |
    | --- |
    | retrain nnue: not due: 12 of 100 new labels |
    """
    if isinstance(summary, tuple):
        return [table for part in summary for table in tables(part)]
    if is_record(summary):
        return [markdown_table(["field", "value"], list(named_values(summary).items()))]
    if isinstance(summary, list) and summary and all(is_record(s) for s in summary):
        rows = [named_values(s) for s in summary]
        header = list(dict.fromkeys(k for row in rows for k in row))
        return [markdown_table(header, [[row.get(k) for k in header] for row in rows])]
    lines = str(summary).splitlines() if isinstance(summary, str) else [summary]
    return [markdown_table(["result"], [[line] for line in lines or [""]])]


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(cell(h) for h in header) + " |",
             "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def artifact_key(name: str) -> str:
    """A Prefect artifact key (lowercase letters, digits, dashes) for ``name``.

    >>> artifact_key("chesslab-retrain/retrain_NNUE")
    'chesslab-retrain-retrain-nnue'
    """
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def publish_summary(name: str, summary: Any, description: str | None = None) -> None:
    """The run's summary as a markdown artifact ``chesslab-NAME`` (nothing outside a run)."""
    if not in_run():
        return
    markdown = f"### chesslab {name}\n\n" + "\n\n".join(tables(summary))
    create_markdown_artifact(markdown=markdown, key=artifact_key(f"chesslab-{name}"),
                             description=description or f"what chesslab {name} did")
