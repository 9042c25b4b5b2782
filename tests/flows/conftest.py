"""Fixtures of the flow tests: each runner, so a test checks that both behave the same."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flows.step import LocalRunner


@pytest.fixture(params=["local", "prefect"])
def runner(request: pytest.FixtureRequest, home: Path) -> Iterator[Any]:
    """A local runner, or a Prefect runner on the session's test server."""
    if request.param == "local":
        yield LocalRunner()
        return
    request.getfixturevalue("prefect_harness")
    from flows.prefect_runner import PrefectRunner

    with PrefectRunner(home) as prefect_runner:
        yield prefect_runner


def progress_lines(stderr: str, prefix: str) -> list[str]:
    """chesslab's progress lines in ``stderr`` (Prefect's own log lines, shown at INFO in
    the tests, are left out)."""
    return [line for line in stderr.splitlines() if line.startswith(prefix)]
