"""Every command's ``--help`` renders: argparse formats help texts with ``%``, so a config
field's help such as ``fen like '% w %'`` once crashed ``chesslab label --help``."""
from __future__ import annotations

import argparse
import re

import pytest

from flows.cli import build_parser, main
from flows.parser import subparsers_of


def command_names() -> list[str]:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    return sorted(subparsers.choices)  # type: ignore[attr-defined]


@pytest.mark.parametrize("command", command_names())
def test_help_renders(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser(command).parse_args([command, "--help"])
    assert exit_info.value.code == 0
    assert f"usage: chesslab {command}" in capsys.readouterr().out


def help_text(command: str, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit):
        build_parser(command).parse_args([command, "--help"])
    return " ".join(capsys.readouterr().out.split())   # argparse wraps lines


def test_boolean_options_show_their_default(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 10 (paper 003 run): ``lmr-data --help`` showed no default for --paper-range
    (Python 3.11's BooleanOptionalAction adds none); every boolean config field now names
    the spelling that is on by default."""
    text = help_text("lmr-data", capsys)
    assert "(<= 10, then 15..30 by 5, 40..60 by 10) (default: --paper-range)" in text
    assert "(default: --promote)" in help_text("evaluate", capsys)


# --- issue 32 §3: help as plain, whole sentences; mistakes named in one line --------------

def all_parsers() -> list[argparse.ArgumentParser]:
    parser = build_parser()
    return [parser, *subparsers_of(parser)]


def test_help_shows_no_restructuredtext() -> None:
    """Top level, ``train``, ``serve`` and ``trigger`` showed ````chesslab serve [...]````,
    :func: roles and backquotes from the docstrings they reuse."""
    for parser in all_parsers():
        text = parser.format_help()
        assert "`" not in text and not re.search(r":[a-z]+:`", text), (parser.prog, text)


def test_help_texts_are_not_cut_mid_sentence() -> None:
    """The top-level description was the first line of a module docstring ("... adds its
    subcommands through") and each ``train`` kind's help the first line of its config's
    docstring ("... the 1 net of the shared")."""
    connectors = re.compile(r"\b(the|of|with|through|and|a|an|to|for|in|on|or|by)$")
    for parser in all_parsers():
        description = " ".join((parser.description or "x.").split())
        assert not connectors.search(description), (parser.prog, description)
        for action in parser._actions:
            for choice in getattr(action, "_choices_actions", []):
                assert not connectors.search(choice.help or ""), (parser.prog, choice.help)
    top = " ".join(build_parser().format_help().split())
    assert "warehouse" in top and "flows/commands" not in top
    train = " ".join(subcommand_help("train").split())
    assert "net of the shared contract, trained on Stockfish scores of the nnue_examples view" \
        in train
    assert "(will one more ply change the evaluation?) on the volatility_examples view" in train


def subcommand_help(*names: str) -> str:
    parser = build_parser(names[0])
    for name in names:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return parser.format_help()


def test_serve_and_trigger_help_start_with_a_sentence() -> None:
    serve = " ".join(subcommand_help("serve").split())
    assert "Register the scheduled jobs (refresh, retrain per model kind, evaluate) as " \
        "Prefect deployments" in serve
    assert "With PREFECT_API_URL set the deployments go to that server" in serve
    trigger = " ".join(subcommand_help("trigger").split())
    assert "Start a run of a served deployment now; --watch follows it" in trigger


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    return int(exit_info.value.code or 0), capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["stauts"], "chesslab: error: unknown command 'stauts': did you mean 'status'? "
                 "(see chesslab --help)"),
    (["tournamnet"], "chesslab: error: unknown command 'tournamnet': did you mean "
                     "'tournament'? (see chesslab --help)"),
    (["xyzzy"], "chesslab: error: unknown command 'xyzzy' (see chesslab --help)"),
    (["train", "nnu"], "chesslab train: error: unknown kind 'nnu': did you mean 'nnue'? "
                       "(see chesslab train --help)"),
    (["mcc", "slover", "x.epd"], "chesslab mcc: error: unknown experiment 'slover': did you "
                                 "mean 'solver'? (see chesslab mcc --help)"),
    (["sql", "--format", "xml", "select 1"],
     "chesslab sql: error: argument --format: unknown choice 'xml': choose from table, csv, "
     "json, jsonl (see chesslab sql --help)"),
])
def test_a_misspelling_is_one_line_with_the_nearest_name(
        argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The whole list of 26 commands (and the usage block) was printed instead."""
    code, err = run_cli(argv, capsys)
    assert code == 2 and err == message + "\n"


@pytest.mark.parametrize(("argv", "message"), [
    (["label", "--depths", "5,x"],
     "argument --depths: 'x' is not an integer: want comma-separated integers (such as "
     "5,6,7), got '5,x'"),
    (["evaluate", "--sprt", "0,ten"],
     "argument --sprt: 'ten' is not a number: want comma-separated numbers (such as 0,2.5), "
     "got '0,ten'"),
    (["label", "--workers", "two"], "argument --workers: want an integer (such as 5), got 'two'"),
])
def test_a_bad_option_value_names_the_value_and_the_type(
        argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``--depths 5,x`` said "invalid <lambda> value"."""
    code, err = run_cli(argv, capsys)
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith(f"chesslab {argv[0]}: error: {message}"), err


# --- issue 49 §4: what a user can read ----------------------------------------------------

def test_version_names_chesslab_its_commit_and_python(capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    """``chesslab --version`` was an unknown option: cluster workers and bug reports need
    the version (and, from a checkout, the commit)."""
    import platform
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0
    assert re.fullmatch(rf"chesslab {re.escape(version('chesslab'))} \(git [0-9a-f]{{10}}, "
                        rf"Python {re.escape(platform.python_version())}\)\n", out), out


def test_top_level_help_lists_the_commands_by_workflow() -> None:
    """``--help`` listed 29 commands in one block, in module order (``checkpoints``,
    ``perft``, ``bench``, ...): now by workflow, every command in exactly one group."""
    from flows.cli import WORKFLOWS

    grouped = [name for names in WORKFLOWS.values() for name in names]
    assert sorted(grouped) == command_names() and len(grouped) == len(set(grouped))
    text = build_parser().format_help()
    headings = [line for line in text.splitlines() if line.endswith("commands:")]
    assert headings == [f"{title} commands:" for title in WORKFLOWS]
    data = text.split("data commands:")[1].split("models commands:")[0]
    assert data.split()[0] == "ingest" and "tournament" not in data
    assert "positional arguments" not in text


def test_tournament_help_in_groups_and_its_type_is_not_format(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``tournament --help`` was 138 lines in one block, and ``--format`` meant the output
    (sql), the file format (ingest, export) and the tournament's type: the type is
    ``--type``, ``--format`` the output, and the old spelling says which to use."""
    text = subcommand_help("tournament")
    for title in ("players and schedule:", "openings:", "adjudication:",
                  "SPRT (two players):", "where the games are played:", "output:",
                  "how the command runs:"):
        assert f"\n{title}\n" in text, title
    limits = text.split("\nlimits (one of")[1].split("\nadjudication:")[0]
    assert all(flag in limits for flag in ("--tc", "--nodes", "--depth", "--movetime-ms"))
    games = text.split("\nwhere the games are played:")[1].split("\nhow the command")[0]
    assert "--workers" in games and "--concurrency" in games
    assert "--type {round-robin,gauntlet}" in text and "--format {table,json}" in text
    code, err = run_cli(["tournament", "a", "b", "--format", "gauntlet"], capsys)
    assert code == 2 and err == (
        "chesslab tournament: error: argument --format: 'gauntlet' is the tournament's type: "
        "give --type gauntlet (--format is the output's: table or json) (see chesslab "
        "tournament --help)\n")
    args = build_parser("tournament").parse_args(["tournament", "a", "b", "--type",
                                                  "gauntlet", "--nodes", "5"])
    assert (args.format, args.output) == ("gauntlet", "table")
