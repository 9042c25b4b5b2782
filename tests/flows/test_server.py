"""The temporary Prefect server that does not start (issue 49 §2): the reason and what to do
in one line, never a line of its banner."""
from __future__ import annotations

from pathlib import Path

import pytest

import flows.server
from flows.server import RUN_ADVICE, SERVE_ADVICE, ServerStartError, temporary_server

BANNER = "The dashboard is disabled. Set `PREFECT_UI_ENABLED=1` to re-enable it."


def fake_server(monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    """``prefect server start`` replaced by a shell script (its argv is ignored)."""
    monkeypatch.setattr(flows.server, "orphan_safe", lambda argv: ["sh", "-c", script])


def test_a_server_that_exits_gives_its_error_and_what_to_do(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_server(monkeypatch, f"echo 'sqlite3.OperationalError: database is locked'; "
                             f"echo '{BANNER}'; exit 3")
    with pytest.raises(ServerStartError) as error, temporary_server(tmp_path):
        pass
    message = str(error.value)
    assert message.startswith("the temporary Prefect server did not start: it exited with "
                              "status 3: sqlite3.OperationalError: database is locked (log: ")
    assert message.endswith(f"; {RUN_ADVICE}") and "\n" not in message


def test_a_server_too_slow_for_the_deadline_is_not_its_banner(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the 120 s deadline at load 10 two of four ingests failed with "the temporary
    Prefect server did not start: The dashboard is disabled. Set `PREFECT_UI_ENABLED=1` to
    re-enable it." (the banner's last line, not a reason)."""
    fake_server(monkeypatch, f"echo '{BANNER}'; exec sleep 60")
    monkeypatch.setattr(flows.server, "STARTUP_TIMEOUT_S", 0.5)
    with pytest.raises(ServerStartError) as error, temporary_server(tmp_path, services=True,
                                                                    advice=SERVE_ADVICE):
        pass
    message = str(error.value)
    assert "PREFECT_UI_ENABLED" not in message
    assert message.startswith("the temporary Prefect server did not start: it did not answer "
                              "within 0.5 s (on a busy machine it starts slowly) (log: ")
    assert message.endswith(f"; {SERVE_ADVICE}")
