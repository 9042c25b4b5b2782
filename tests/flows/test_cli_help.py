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
