"""Issue 32 §3: a schedules file value of the wrong type leaked a Python comparison error
(``depths = "five"``: "'<=' not supported between instances of 'int' and 'str'"), a bad cron
expression passed when it had five fields (``61 * * * *``), and a string where a list belongs
was split into letters (``folders = "abc"``: three folders a, b, c). Each is now one line
naming the file, the section and key, the bad value and what would be valid."""
from __future__ import annotations

from pathlib import Path

import pytest

from flows.cli import main
from pipelines.ops import OpsConfigError, load_schedules


@pytest.mark.parametrize(("text", "message"), [
    ('[refresh]\ndepths = "five"',
     'refresh.depths: want a list of integers (such as [5, 6, 7]), got "five"'),
    ("[refresh]\ndepths = [5, \"x\"]",
     'refresh.depths: want a list of integers (such as [5, 6, 7]), got [5, "x"]'),
    ('[refresh]\nfolders = "incoming"',
     'refresh.folders: want a list of strings (such as ["incoming"]), got "incoming"'),
    ('[refresh]\nworkers = 1.5', "refresh.workers: want an integer (such as "),
    ("[refresh]\ncron = 5", 'refresh.cron: want a string (such as "0 2 * * *"), got 5'),
    ('[runs]\nretries = "two"', 'runs.retries: want an integer (such as 2), got "two"'),
    ('[runs]\ntimezone = "Mars/Olympus"',
     "runs.timezone: unknown time zone 'Mars/Olympus' (an IANA name such as UTC or "
     "Europe/Berlin)"),
    ('[retrain]\nkinds = "nnue"',
     'retrain.kinds: want a list of strings (such as ["nnue"]), got "nnue"'),
    ('[retrain]\nmin_new_labels = "many"',
     'retrain.min_new_labels: want an integer (such as 10000), got "many"'),
    ('[retrain]\nenabled = "yes"', 'retrain.enabled: want true or false (such as true), '
                                   'got "yes"'),
    ('[evaluate]\nnodes = "lots"', 'evaluate.nodes: want an integer (such as 5), got "lots"'),
    ('[evaluate.policy_value]\nnodes = "lots"',
     'evaluate.policy_value.nodes: want an integer (such as 5), got "lots"'),
    ('[refresh]\ncron = "61 * * * *"',
     "refresh.cron: minute '61' is not in 0-59, in '61 * * * *'"),
    ('[retrain]\ncron = "0 4 * * funday"',
     "retrain.cron: day of week 'funday' is not in 0-7 or sun-sat, in '0 4 * * funday'"),
    ('[refresh]\ncron = "0 2 32 * *"',
     "refresh.cron: day of month '32' is not in 1-31, in '0 2 32 * *'"),
    ('[refresh]\ncron = "*/0 * * * *"', "refresh.cron: minute '*/0' has a step of 0"),
    ('[refresh]\ncron = "0 2 * 13 *"', "refresh.cron: month '13' is not in 1-12 or jan-dec"),
    ('[refresh]\ncron = "0 2 * * * *"',
     "refresh.cron: want 5 fields (minute hour day month weekday), got '0 2 * * * *'"),
])
def test_a_bad_value_names_file_section_key_and_what_is_valid(tmp_path: Path, text: str,
                                                              message: str) -> None:
    path = tmp_path / "schedules.toml"
    path.write_text(text + "\n")
    with pytest.raises(OpsConfigError) as error:
        load_schedules(path)
    assert str(error.value).startswith(f"{path}: {message}"), str(error.value)
    assert "\n" not in str(error.value) and "not supported between" not in str(error.value)


@pytest.mark.parametrize("cron", ["0 2 * * *", "*/15 9-17 * * mon-fri", "0 0 1,15 * *",
                                  "30 4 * jan-mar 0", "0 0 L * *", "0 12 * * 5#2", "0 0 * * 7"])
def test_valid_cron_expressions_pass(tmp_path: Path, cron: str) -> None:
    """What Prefect's croniter accepts (checked against it, when Prefect is importable)."""
    path = tmp_path / "schedules.toml"
    path.write_text(f'[refresh]\ncron = "{cron}"\n[retrain]\ncron = "{cron}"\n')
    assert load_schedules(path).refresh.cron == cron
    from prefect._vendor.croniter import croniter

    assert croniter.is_valid(cron)


@pytest.mark.parametrize("cron", ["61 * * * *", "0 2 32 * *", "0 2 * 13 *",
                                  "0 4 * * funday", "*/0 * * * *"])
def test_refused_cron_expressions_are_refused_by_croniter_too(cron: str) -> None:
    from prefect._vendor.croniter import croniter

    assert not croniter.is_valid(cron)


def test_serve_with_a_bad_file_is_one_line(home: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "schedules.toml"
    path.write_text('[refresh]\ndepths = "five"\n')
    assert main(["serve", "--config", str(path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == (f"chesslab serve: error: {path}: refresh.depths: want a list of "
                       f'integers (such as [5, 6, 7]), got "five"')
    assert not home.exists()     # the warehouse it would have created is not left behind
