"""Which runner a command gets (issue 49 §2): without a Prefect server configured a command
runs its steps in this process and starts at once; ``PREFECT_API_URL`` (in the environment or
the active Prefect profile) or ``--prefect`` makes it a Prefect flow; ``--no-prefect`` keeps it
here even with a server configured."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from flows.cli import build_parser
from flows.runtime import configured_prefect_api, uses_prefect

ROOT = Path(__file__).resolve().parents[2]
ONE_GAME = ROOT / "tests" / "fixtures" / "label_engines" / "opera.pgn"   # Morphy's Opera game


@pytest.fixture
def no_prefect_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No PREFECT_* variable, and an empty Prefect home (no profiles file): the user's."""
    for name in [n for n in os.environ if n.startswith("PREFECT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect_home"))
    return tmp_path / "prefect_home"


def ingest_args(*flags: str) -> object:
    return build_parser("ingest").parse_args(["ingest", *flags, "x.pgn"])


def test_the_runner_follows_the_configured_server_and_the_flags(
        no_prefect_settings: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command started a temporary Prefect server when PREFECT_API_URL was unset
    (10-20 s idle, 145 s at load 10, past its 120 s deadline twice in four small ingests)."""
    assert configured_prefect_api() is None
    assert not uses_prefect(ingest_args())
    assert uses_prefect(ingest_args("--prefect"))
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:4200/api")
    assert uses_prefect(ingest_args()) and not uses_prefect(ingest_args("--no-prefect"))
    with pytest.raises(SystemExit):
        ingest_args("--prefect", "--no-prefect")


def test_a_server_in_the_active_prefect_profile_counts(no_prefect_settings: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """``prefect config set PREFECT_API_URL=...`` writes the active profile, not the
    environment: read without importing Prefect."""
    no_prefect_settings.mkdir()
    (no_prefect_settings / "profiles.toml").write_text(
        'active = "work"\n[profiles.default]\n[profiles.work]\n'
        'PREFECT_API_URL = "http://prefect.lan:4200/api"\n')
    assert configured_prefect_api() == "http://prefect.lan:4200/api"
    assert uses_prefect(ingest_args())
    monkeypatch.setenv("PREFECT_PROFILE", "default")
    assert configured_prefect_api() is None


def test_a_command_without_a_prefect_server_never_imports_prefect(
        no_prefect_settings: Path, tmp_path: Path) -> None:
    """``chesslab ingest`` of a one-game PGN with no Prefect configuration: the work runs in
    this process; Prefect is not imported (its import alone took 20 s at load 10) and no
    temporary server is started (no server records in the home)."""
    home = tmp_path / "home"
    script = ("import sys; from flows.cli import main; code = main(sys.argv[1:]); "
              "print('prefect imported:', 'prefect' in sys.modules); sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", script, "--home", str(home), "ingest",
                           "--workers", "1", str(ONE_GAME)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert "prefect imported: False" in done.stdout, done.stdout
    assert not (home / "prefect").exists()
    assert done.stdout.splitlines()[-2].split()[:2] == ["total", "1"], done.stdout
