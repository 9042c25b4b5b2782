"""Every command's ``--help`` renders: argparse formats help texts with ``%``, so a config
field's help such as ``fen like '% w %'`` once crashed ``chesslab label --help``."""
from __future__ import annotations

import pytest

from flows.cli import build_parser


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
