"""chesslab's argparse parser: help texts as plain text, and one-line errors that name the bad
value and what would be valid (the nearest command or choice for a misspelling).

Command modules write their help texts in the docstring style of the code (reStructuredText
literals such as ``--home``, roles such as :func:`name`); :func:`plain_text` turns them into
what a terminal should show.
"""
from __future__ import annotations

import argparse
import difflib
import re
import textwrap
from typing import Any, NoReturn

# ``literal``, :role:`~module.name`, `interpreted`
LITERAL = re.compile(r"``(.+?)``", re.DOTALL)
ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
INTERPRETED = re.compile(r"`([^`]+)`")
# a docstring's opening usage fragment: "``chesslab serve [--config FILE]``: register ..."
USAGE_PREFIX = re.compile(r"^``chesslab[^`]*``:\s*", re.DOTALL)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
# choices listed in full up to this many; beyond it, only the nearest (or a pointer to --help)
MAX_LISTED_CHOICES = 8


def plain_text(text: str) -> str:
    """Docstring markup as plain text; paragraphs (blank-line separated) are kept.

    >>> plain_text("``chesslab serve``: run :func:`~flows.server.serve` with `--limit`.")
    'Run serve with --limit.'
    """
    text = textwrap.dedent(text).strip()
    stripped = USAGE_PREFIX.sub("", text)
    if stripped != text:     # the usage line above says it: start with the sentence
        text = stripped[:1].upper() + stripped[1:]
    text = ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1], text)
    text = LITERAL.sub(r"\1", text)
    return INTERPRETED.sub(r"\1", text)


def summary(doc: str | None) -> str:
    """The first sentence of a docstring, plain and whole (for a command list's help entry).

    >>> summary('''``chesslab train nnue``: the HalfKP net of the shared
    ...     contract, trained on the nnue_examples view. More.''')
    'The HalfKP net of the shared contract, trained on the nnue_examples view'
    """
    paragraph = plain_text(doc or "").split("\n\n", 1)[0]
    sentence = SENTENCE_END.split(" ".join(paragraph.split()), maxsplit=1)[0]
    return sentence.rstrip(".")


class PlainFormatter(argparse.HelpFormatter):
    """Help without markup; a description's paragraphs stay paragraphs."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = plain_text(text).split("\n\n")
        return "\n\n".join(textwrap.fill(" ".join(p.split()), width, initial_indent=indent,
                                         subsequent_indent=indent) for p in paragraphs)

    def _expand_help(self, action: argparse.Action) -> str:
        return plain_text(super()._expand_help(action))


class ChesslabParser(argparse.ArgumentParser):
    """An ArgumentParser whose subparsers are ChesslabParsers too, with plain help and
    one-line errors; ``workflows`` (title: command names) lists its commands in groups."""

    def __init__(self, *args: Any, workflows: dict[str, tuple[str, ...]] | None = None,
                 **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", PlainFormatter)
        super().__init__(*args, **kwargs)
        self.workflows = workflows or {}

    def format_help(self) -> str:
        """argparse's help, with the commands listed by workflow when the parser has them
        (the usage line and the options as argparse writes them)."""
        commands = next((a for a in self._actions
                         if isinstance(a, argparse._SubParsersAction)), None)
        if not self.workflows or commands is None:
            return super().format_help()
        entries = {a.dest: a for a in commands._choices_actions}
        formatter = self._get_formatter()
        formatter.add_usage(self.usage, self._actions, self._mutually_exclusive_groups)
        formatter.add_text(self.description)
        for title, names in self.workflows.items():
            formatter.start_section(f"{title} commands")
            formatter.add_arguments([entries[name] for name in names if name in entries])
            formatter.end_section()
        listed = {name for names in self.workflows.values() for name in names}
        if others := [a for name, a in entries.items() if name not in listed]:
            formatter.start_section("other commands")
            formatter.add_arguments(others)
            formatter.end_section()
        for group in self._action_groups:
            actions = [a for a in group._group_actions if a is not commands]
            if actions:
                formatter.start_section(group.title)
                formatter.add_text(group.description)
                formatter.add_arguments(actions)
                formatter.end_section()
        formatter.add_text(self.epilog)
        return formatter.format_help()

    def error(self, message: str) -> NoReturn:
        """One line: the mistake, then where the options are described."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        if action.choices is None or value in action.choices:
            return
        is_command = isinstance(action, argparse._SubParsersAction)
        message = invalid_choice(action, str(value), is_command)
        raise argparse.ArgumentError(None if is_command else action, message)


def invalid_choice(action: argparse.Action, value: str, is_command: bool) -> str:
    """``unknown command 'stauts': did you mean 'status'?`` and the like."""
    assert action.choices is not None
    choices = [str(c) for c in action.choices]
    what = (action.dest if action.dest != argparse.SUPPRESS else "command") if is_command \
        else "choice"
    near = difflib.get_close_matches(value, choices, n=3, cutoff=0.6)
    if near:
        return f"unknown {what} {value!r}: did you mean {' or '.join(map(repr, near))}?"
    if len(choices) <= MAX_LISTED_CHOICES:
        return f"unknown {what} {value!r}: choose from {', '.join(choices)}"
    return f"unknown {what} {value!r}"


def subparsers_of(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every parser under ``parser`` (its subcommands, theirs, ...), depth first."""
    found: list[argparse.ArgumentParser] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):   # aliases once
                found += [sub, *subparsers_of(sub)]
    return found
