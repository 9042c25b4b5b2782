"""A lean streaming PGN reader: games are split by line rules, then their main lines tokenized.

The rules are those of ``chess.pgn.read_game`` (so game counts agree with python-chess), but
nothing is built per move: a game becomes its tags, its main-line SAN tokens and the
``[%clk]``/``[%eval]`` annotations that follow each of them. Variations, NAGs, ``;`` and ``%``
comments and termination markers are skipped; BOMs, CRLF and comments spanning lines (even over
blank lines) are tolerated.

Ingest reads with the compiled reader (:mod:`pipelines.ingest._pgn`) when it is built: it
applies these rules to bytes, and this module is the reference it is tested against (and the
reader when the compiled one is not built, or another replay is in use).

Broken games do not take their neighbours with them: a tag-pair line (``[Name "value"]``) at
the start of a line ends the movetext before it, even inside a ``{`` comment, so an unclosed
comment cuts only its own game (python-chess would read every later game into it). Such a game,
and one whose ``(`` variation never closes, carries a :class:`Problem` that ingest records.

>>> lines = ['[Event "x"]\\n', '\\n', '1. e4 {[%clk 0:01:00]} e5 (1... c5) 1-0\\n']
>>> game = parse_game(next(split_games(lines)))
>>> game.tags["Event"], game.sans, game.clocks
('x', ['e4', 'e5'], ['0:01:00', None])
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

# Same tag syntax as python-chess; a '[' line that does not match is a broken tag.
TAG_REGEX = re.compile(r"^\[([A-Za-z0-9][A-Za-z0-9_+#=:-]*)\s+\"([^\r]*)\"\]\s*$")
TAG_ESCAPE = re.compile(r"\\([\\\"])")

SAN_PATTERN = r"""([NBKRQ]?[a-h]?[1-8]?[\-x]?[a-h][1-8](?:=?[nbrqkNBRQK])?
      |[PNBRQK]?@[a-h][1-8]|--|Z0|0000|@@@@|O-O(?:-O)?|0-0(?:-0)?)"""
CLOCK_PATTERN = r"\[%clk\s(\d+:\d+:\d+(?:\.\d*)?)\]"
EVAL_PATTERN = r"\[%eval\s(\#[+-]?\d+|[+-]?(?:\d{0,10}\.\d{1,2}|\d{1,10}\.?))(?:,\d+)?\]"

# General tokenizer: one alternative per token kind; the SAN alternatives are python-chess's,
# a brace comment is matched whole (it may span lines), a semicolon comment ends its line.
TOKEN_REGEX = re.compile(r"""
    (\{[^}]*\}?)
    |""" + SAN_PATTERN + r"""
    |(;[^\n]*)
    |(\$[0-9]+|[?!]{1,2})
    |(\()
    |(\))
    |(\*|1-0|0-1|1/2-1/2)
    """, re.VERBOSE)
COMMENT, SAN, LINE_COMMENT, NAG, OPEN, CLOSE, RESULT = range(1, 8)

# Fast path for movetext without variations or ';' comments (every Lichess export): each SAN
# with the comment right after it, whose leading [%eval] and [%clk] are captured directly.
MAINLINE_REGEX = re.compile(r"(?=[NBKRQPa-h1-8@OZ0x{-])(?:" + SAN_PATTERN + r"""
    [+#]?(?:\s*(?:[?!]{1,2}|\$\d+))*
    (?:\s*\{\s*(?:""" + EVAL_PATTERN + r"""\s*)?(?:""" + CLOCK_PATTERN + r"""\s*)?([^}]*)\}?)?
    |\{[^}]*\}?)
    """, re.VERBOSE)

RESULT_AT_END = re.compile(r"(\*|1-0|0-1|1/2-1/2)\s*$")
CLOCK_REGEX = re.compile(CLOCK_PATTERN)
EVAL_REGEX = re.compile(EVAL_PATTERN)
BRACES = re.compile(r"[;{}]")


class Problem(NamedTuple):
    """Something wrong with a game's text that ingest records as an ``ingest_errors`` row."""

    line: int        # 1-based line in the file
    kind: str        # unclosed_comment, unclosed_variation
    message: str


class CutStream(OSError):
    """The lines stopped with an error after line ``line``, while reading game ``game_index``."""

    def __init__(self, line: int, game_index: int, reason: OSError) -> None:
        super().__init__(f"stream failed after line {line}: {reason}")
        self.line, self.game_index, self.reason = line, game_index, reason


@dataclass
class RawGame:
    """The text of one game: tag lines with their line numbers, and the movetext."""

    index: int                      # 0-based position in the file
    line: int                       # 1-based line of its first line
    tag_lines: list[tuple[int, str]]
    movetext: str
    movetext_line: int = 0          # 1-based line of the movetext's first line
    problems: list[Problem] = field(default_factory=list)
    ended_by_tags: bool = False     # the next game's tags, not a blank line, ended the movetext


@dataclass
class ParsedGame:
    """A game's tags and main line, ready to replay."""

    index: int
    line: int
    tags: dict[str, str] = field(default_factory=dict)
    bad_tags: list[tuple[int, str]] = field(default_factory=list)
    sans: list[str] = field(default_factory=list)
    clocks: list[str | None] = field(default_factory=list)  # [%clk] text after each move
    evals: list[str | None] = field(default_factory=list)   # [%eval] text after each move
    result: str | None = None                                # the termination marker
    problems: list[Problem] = field(default_factory=list)


def split_games(lines: Iterable[str]) -> Iterator[RawGame]:
    """Cut a stream of lines into games, by ``chess.pgn.read_game``'s rules.

    Leading blank and ``%``/``;`` lines are skipped; tags may be separated by one blank line;
    the movetext ends at a blank line outside a brace comment, or at a tag-pair line (which
    starts the next game; inside a comment, the game gets an ``unclosed_comment`` problem). A
    game is yielded only once its end is seen, so a stream that raises mid-game never yields
    the cut game.
    """
    numbered = enumerate(lines, 1)
    line_no, index = 0, 0
    try:
        line_no, line = next(numbered, (0, ""))
        while line:
            line = line.lstrip("\ufeff")
            while line and (line.isspace() or line[0] == "%" or line[0] == ";"):
                line_no, line = next(numbered, (line_no, ""))
            if not line:
                return
            start, tags, empty = line_no, [], 0
            while line:
                first = line[0]
                if first == "%" or first == ";":
                    pass
                elif empty < 1 and line.isspace():
                    empty += 1
                elif first != "[":
                    break
                else:
                    empty = 0
                    tags.append((line_no, line))
                line_no, line = next(numbered, (line_no, ""))
            body: list[str] = []
            body_line, opened, in_comment, ended_by_tags = line_no, 0, False, False
            while line:
                if line[0] == "[" and TAG_REGEX.match(line):
                    ended_by_tags = True
                    break
                if in_comment:
                    close = line.find("}")
                    if close >= 0:
                        in_comment, opened = ends_in_comment(line[close + 1:]), line_no
                elif line[0] == "%" or line[0] == ";":
                    line_no, line = next(numbered, (line_no, ""))
                    continue
                elif line.isspace():
                    break
                else:
                    in_comment, opened = ends_in_comment(line), line_no
                body.append(line)
                line_no, line = next(numbered, (line_no, ""))
            game = RawGame(index, start, tags, "".join(body), body_line,
                           ended_by_tags=ended_by_tags)
            if in_comment:
                game.problems.append(unclosed_comment(opened, line_no if line else 0))
            yield game
            index += 1
            if line and not ended_by_tags:
                line_no, line = next(numbered, (line_no, ""))
    except OSError as exc:  # the line source failed: a cut or corrupt archive
        raise CutStream(line_no, index, exc) from exc


def unclosed_comment(opened: int, next_game: int) -> Problem:
    where = (f"the game ends at line {next_game}, where the next game's tags start"
             if next_game else "it runs to the end of the file")
    return Problem(opened, "unclosed_comment", f"unclosed {{ comment opened on line {opened}: "
                                               f"{where}")


def ends_in_comment(text: str) -> bool:
    """Whether a line that starts outside a brace comment ends inside one."""
    opening = text.rfind("{")
    if opening < 0 or opening < text.rfind("}"):
        return False
    semicolon = text.find(";")
    if semicolon < 0 or semicolon > opening:
        return True
    in_comment = False
    for match in BRACES.finditer(text):
        token = match.group()
        if in_comment:
            in_comment = token != "}"
        elif token == "{":
            in_comment = True
        elif token == ";":
            return False
    return in_comment


def parse_game(raw: RawGame) -> ParsedGame:
    """Tags, main-line SANs and per-move clock/eval annotations of one game."""
    game = ParsedGame(raw.index, raw.line, problems=list(raw.problems))
    for line_no, line in raw.tag_lines:
        match = TAG_REGEX.match(line)
        if match:
            value = match.group(2)
            game.tags[match.group(1)] = TAG_ESCAPE.sub(r"\1", value) if "\\" in value else value
        else:
            game.bad_tags.append((line_no, line.rstrip("\n")))
    opened = parse_movetext(raw.movetext, game)
    if opened is not None:
        opened_line = raw.movetext_line + raw.movetext.count("\n", 0, opened)
        game.problems.append(Problem(opened_line, "unclosed_variation", (
            f"unclosed ( variation opened on line {opened_line}: the main line stops at ply "
            f"{len(game.sans)}")))
    return game


def parse_movetext(text: str, game: ParsedGame) -> int | None:
    """Fill ``game.sans``/``clocks``/``evals`` from the main line, skipping variations.

    Annotations are kept as text (``"0:03:00"``, ``"-0.36"``, ``"#-1"``); the writer converts
    whole columns at once. Returns the offset of a ``(`` that never closes, else None.
    """
    if "(" in text or ";" in text:
        return parse_movetext_general(text, game)
    moves = [m for m in MAINLINE_REGEX.findall(text) if m[0]]
    game.sans = [m[0] for m in moves]
    game.evals = [m[1] or None for m in moves]
    game.clocks = [m[2] or None for m in moves]
    for ply, move in enumerate(moves):
        if "%" in move[3]:
            annotate(move[3], game, ply)
    if marker := RESULT_AT_END.search(text):
        game.result = marker.group(1)
    return None


def parse_movetext_general(text: str, game: ParsedGame) -> int | None:
    """The token-by-token reader, for movetext with variations or ';' comments.

    As in python-chess, a ``(`` before the first move opens nothing and a stray ``)`` closes
    nothing. Returns the offset of the outermost ``(`` left open at the end, else None.
    """
    sans, clocks, evals = game.sans, game.clocks, game.evals
    depth = opened = 0
    for match in TOKEN_REGEX.finditer(text):
        kind = match.lastindex
        if kind == SAN:
            if not depth:
                sans.append(match.group(kind))
                clocks.append(None)
                evals.append(None)
        elif kind == COMMENT:
            if not depth and sans and "%" in match.group(kind):
                annotate(match.group(kind), game, len(sans) - 1)
        elif kind == OPEN:
            if depth or sans:
                opened = opened if depth else match.start()
                depth += 1
        elif kind == CLOSE:
            if depth:
                depth -= 1
        elif kind == RESULT and not depth:
            game.result = match.group(kind)
    return opened if depth else None


def annotate(comment: str, game: ParsedGame, ply: int) -> None:
    """Attach the first [%clk] and [%eval] of a comment to a move, unless it has them."""
    if game.clocks[ply] is None and (clock := CLOCK_REGEX.search(comment)):
        game.clocks[ply] = clock.group(1)
    if game.evals[ply] is None and (score := EVAL_REGEX.search(comment)):
        game.evals[ply] = score.group(1)
