"""Issue 32 §1: a wrong ``--home`` looked like an empty warehouse (``status`` printed zeros
and ``sql`` counted 0, exit 0). Reading commands on a folder without a warehouse now say so in
one line and exit non-zero; writing commands create it and say where; ``--home`` is accepted
after the subcommand too."""
from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from flows.cli import CREATES, NEEDS, WAREHOUSE_USE, build_parser, main
from warehouse import Lake

FIXTURES = Path(__file__).parents[1] / "fixtures"


def command_names() -> list[str]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(sub.choices)


def test_every_command_says_what_it_does_with_the_warehouse() -> None:
    assert sorted(WAREHOUSE_USE) == command_names()


@pytest.mark.parametrize("argv", [
    ["status"], ["sql", "select count(*) from games"], ["models"], ["compact"],
    ["ratings", "--tournament", "t1"], ["pgn", "--tournament", "t1"],
    ["sprt", "--tournament", "t1"], ["label", "--no-prefect"], ["train", "nnue"],
    ["evaluate", "nnue@1"], ["trigger", "refresh"],
    ["engine", "alphabeta", "--lmr", "lmr@1"],
])
@pytest.mark.parametrize("where", ["before", "after"])
def test_a_reading_command_refuses_a_folder_without_a_warehouse(
        argv: list[str], where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "typo"
    home = ["--home", str(missing)]
    assert main([*home, *argv] if where == "before" else [*argv, *home]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        f"chesslab {argv[0]}: error: no warehouse at {missing}: the folder does not exist; "
        f"give the home with --home or CHESSLAB_HOME, or create one with 'chesslab ingest' "
        f"or 'chesslab demo'\n")
    assert captured.out == "" and not missing.exists()


def test_a_folder_that_exists_but_holds_no_warehouse(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("not a warehouse")
    assert main(["sql", "select 1", "--home", str(tmp_path)]) == 2
    assert "holds no warehouse (no lake/)" in capsys.readouterr().err


def test_home_after_the_subcommand_wins_over_the_environment(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        selfplay_positions: list[dict[str, object]]) -> None:
    """CHESSLAB_HOME (the ``home`` fixture) stays the default; ``--home`` after the command
    is the home used, as before it."""
    other = Lake(tmp_path / "other")
    other.write("positions", selfplay_positions[:3])
    assert main(["status", "--home", str(other.home)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"home: {other.home}\n")
    assert main(["sql", "select count(*) as n from positions", "--home", str(other.home),
                 "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines() == ["n", "3"]
    assert main(["status"]) == 2          # the default, $CHESSLAB_HOME, holds none
    assert f"no warehouse at {home}" in capsys.readouterr().err


def test_a_writing_command_creates_the_warehouse_and_says_where(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    epd = FIXTURES / "perft.epd"
    assert main(["ingest", "--no-prefect", "--workers", "1", str(epd)]) == 0
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == f"chesslab: created a new warehouse at {home}"
    assert err.count("created a new warehouse") == 1
    assert main(["status"]) == 0 and "created" not in capsys.readouterr().err
    assert main(["ingest", "--no-prefect", "--workers", "1", str(epd)]) == 0
    assert "created a new warehouse" not in capsys.readouterr().err


def test_a_writing_command_that_fails_leaves_no_empty_warehouse(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A mistake found before anything was written is the one-line error only: the warehouse
    made for the command is removed again."""
    assert main(["ingest", "--no-prefect", str(home / "missing.pgn")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("chesslab ingest: error: ")
    assert not home.exists()


def test_commands_without_the_warehouse_do_not_create_one(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sprt", "--counts", "10,100,200,110,20"]) == 0
    assert main(["perft", "startpos", "2"]) == 0
    assert not home.exists()


def test_uses_are_needs_creates_or_none() -> None:
    namespace = argparse.Namespace(tournament=None, lmr="default")
    for use in WAREHOUSE_USE.values():
        value = use(namespace) if callable(use) else use
        assert value in (NEEDS, CREATES, None)


def test_only_the_command_line_reads_the_home_from_the_environment(
        home: Path, tmp_path: Path, selfplay_positions: list[dict[str, object]]) -> None:
    """Issue 34 §2: ``--home`` (default ``$CHESSLAB_HOME``) is resolved once, in the CLI, into
    the Lake handed down; no module below ``flows/`` reads the variable, and a Lake needs its
    home: a step given another lake writes there, whatever the environment says."""
    root = Path(__file__).resolve().parents[2]
    readers = [str(path.relative_to(root)) for package in ("engines", "pipelines", "warehouse",
                                                            "dashboards")
               for pattern in ("*.py", "*.pyx") for path in (root / package).rglob(pattern)
               if "CHESSLAB_HOME" in path.read_text()]
    assert readers == []
    with pytest.raises(TypeError):
        Lake()  # type: ignore[call-arg]
    from flows.ingest import INGEST, IngestJob
    from flows.step import run_step
    from pipelines.ingest import IngestConfig

    other = Lake(tmp_path / "other")
    run_step(INGEST, IngestJob((FIXTURES / "perft.epd",), IngestConfig.tiny()), other)
    assert other.parts("positions") and not home.exists()   # $CHESSLAB_HOME is the fixture's
