"""The Python PGN reader (``pipelines/ingest/pgn.py``) line by line, on small texts whose
games, line numbers and problems are worked out by hand (issue 48: what mutation testing
found that the comparisons with python-chess's main lines do not check)."""
from __future__ import annotations

import io
from collections.abc import Iterator

import chess.pgn
import pytest

from pipelines.ingest.pgn import CutStream, Problem, parse_game, split_games


def lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def test_a_stream_failing_before_its_first_line_is_cut_after_line_0() -> None:
    def failing() -> Iterator[str]:
        raise OSError("corrupt archive")
        yield ""                                    # a generator

    with pytest.raises(CutStream) as cut:
        list(split_games(failing()))
    assert (cut.value.line, cut.value.game_index) == (0, 0)
    assert str(cut.value) == "stream failed after line 0: corrupt archive"


def test_a_bom_is_dropped_and_nothing_else_of_the_line() -> None:
    """Only the byte-order mark goes; a game whose movetext starts with other text (here an
    ``X``, no tag pairs) keeps it, to be reported as it stands."""
    text = '\ufeff[Event "a"]\n\n1. e4 *\n\nXx junk\n'
    first, second = split_games(lines(text))
    assert first.tag_lines == [(1, '[Event "a"]\n')]
    assert (second.line, second.movetext, second.movetext_line) == (5, "Xx junk\n", 5)


def test_raw_problems_bad_tag_lines_and_unclosed_variations_reach_the_parsed_game() -> None:
    """Line numbers by hand: the game starts on line 1, its bad tag lines are 2 and 3 (kept
    as they stand but their newline: a final X, a trailing space), the movetext starts on
    line 5, the ``(`` that is never closed is on line 6 after three plies; the second game's
    comment opened on line 11 runs to the end of the file."""
    text = ('[Event "a"]\n'            # 1
            '[Broken tag X\n'          # 2
            '[Bad \n'                  # 3
            '\n'                       # 4
            '1. e4 e5\n'               # 5
            '2. Nf3 (2. f4 exf4\n'     # 6
            '3. Nf3 *\n'               # 7
            '\n'                       # 8
            '[Event "b"]\n'            # 9
            '\n'                       # 10
            '1. d4 { a comment\n'      # 11
            'that never ends\n')       # 12
    first, second = split_games(lines(text))
    game = parse_game(first)
    assert game.bad_tags == [(2, "[Broken tag X"), (3, "[Bad ")]
    assert game.tags == {"Event": "a"}
    assert game.problems == [Problem(6, "unclosed_variation",
                                     "unclosed ( variation opened on line 6: the main line "
                                     "stops at ply 3")]
    assert second.problems == [Problem(11, "unclosed_comment",
                                       "unclosed { comment opened on line 11: it runs to the "
                                       "end of the file")]
    assert parse_game(second).problems == second.problems


def test_a_comment_line_is_read_on_from_its_first_closing_brace() -> None:
    """Worked by hand. Game 1: the comment opened on line 3 closes on line 4, where ``{``
    right after the ``}`` opens another (the ``;`` before the ``}`` is inside the first
    comment, so it comments nothing out); the blank line 5 is inside that comment, so the game
    runs to line 6. Game 2: after the ``}`` on line 11 a ``;`` comments out the rest of the
    line, braces included, so the blank line 12 ends the game, cleanly."""
    text = ('[Event "c"]\n'                   # 1
            '\n'                              # 2
            '1. e4 { a comment\n'             # 3
            'ends;}{ another\n'               # 4
            '\n'                              # 5
            'still it } e5 2. Nf3 *\n'        # 6
            '\n'                              # 7
            '[Event "d"]\n'                   # 8
            '\n'                              # 9
            '1. d4 { note\n'                  # 10
            'ends } ; rest } {\n'             # 11
            '\n'                              # 12
            '[Event "e"]\n'                   # 13
            '\n'                              # 14
            '1. c4 *\n')                      # 15
    games = list(split_games(lines(text)))
    assert [(g.line, g.movetext_line, g.movetext.count("\n"), g.problems) for g in games] == [
        (1, 3, 4, []), (8, 10, 2, []), (13, 15, 1, [])]
    assert [parse_game(g).sans for g in games] == [["e4", "e5", "Nf3"], ["d4"], ["c4"]]
    stream, by_python_chess = io.StringIO(text), []           # the same games by python-chess
    while (game := chess.pgn.read_game(stream)) is not None:
        board = game.board()
        by_python_chess.append([board.san_and_push(move) for move in game.mainline_moves()])
    assert by_python_chess == [["e4", "e5", "Nf3"], ["d4"], ["c4"]]


def test_a_line_ending_in_its_second_comment_goes_on_past_a_blank_line() -> None:
    """``{ x }`` closes on line 3 and ``{ open`` does not: the blank line 4 is inside the
    comment, and the game (one game, by python-chess too) runs to line 5."""
    text = '[Event "f"]\n\n1. e4 { x } e5 { open\n\nstill } 2. Nf3 *\n'
    games = list(split_games(lines(text)))
    assert [(g.line, g.movetext.count("\n"), g.problems) for g in games] == [(1, 3, [])]
    assert parse_game(games[0]).sans == ["e4", "e5", "Nf3"]
    stream = io.StringIO(text)
    first = chess.pgn.read_game(stream)
    assert first is not None and len(list(first.mainline_moves())) == 3
    assert chess.pgn.read_game(stream) is None


def test_a_semicolon_comments_out_an_opening_brace_but_not_inside_a_comment() -> None:
    """Game 1: ``;`` on line 3 makes the rest of the line a comment, its ``{`` included, so
    the blank line 4 ends the game. Game 2: the ``;`` on line 7 is inside ``{ a ; b }``, and
    ``{ open`` is a comment the blank line 8 is inside of. Counts by python-chess too."""
    text = ('[Event "g"]\n'                      # 1
            '\n'                                 # 2
            '1. e4 ; note { not a comment\n'     # 3
            '\n'                                 # 4
            '[Event "h"]\n'                      # 5
            '\n'                                 # 6
            '1. d4 { a ; b } d5 { open\n'        # 7
            '\n'                                 # 8
            'still } 2. c4 *\n')                 # 9
    games = list(split_games(lines(text)))
    assert [(g.line, g.movetext.count("\n"), g.problems) for g in games] == \
        [(1, 1, []), (5, 3, [])]
    assert [parse_game(g).sans for g in games] == [["e4"], ["d4", "d5", "c4"]]
    stream, counts = io.StringIO(text), []
    while (game := chess.pgn.read_game(stream)) is not None:
        counts.append(len(list(game.mainline_moves())))
    assert counts == [1, 3]


def test_annotations_in_another_order_are_read_from_the_comment() -> None:
    """``[%clk]`` before ``[%eval]`` (Lichess writes eval first): both still reach the move,
    as python-chess reads them."""
    text = '[Event "i"]\n\n1. e4 { [%clk 0:01:00] [%eval 0.31] } e5 { [%eval -0.2] } *\n'
    (raw,) = split_games(lines(text))
    game = parse_game(raw)
    assert (game.sans, game.clocks, game.evals) == (
        ["e4", "e5"], ["0:01:00", None], ["0.31", "-0.2"])
    node = chess.pgn.read_game(io.StringIO(text))
    assert node is not None
    first = node.next()
    assert first is not None and first.clock() == 60.0
    assert first.eval() is not None and first.eval().white().score() == 31


@pytest.mark.parametrize(("line", "in_comment"), [
    ("1. d4 { a } e5 ; x {\n", False),     # the ; after the closed comment comments out the {
    ("1. d4 { a ; b ; c } d5 {\n", True),  # both ; inside the first comment, then one opens
    ("1. e4 ; x { y ; z\n", False),        # the first ; decides, not the last
])
def test_whether_a_movetext_line_ends_inside_a_comment(line: str, in_comment: bool) -> None:
    """By hand, and by python-chess: the line, a blank line, then ``2. c4 *``. Ending inside
    a comment, the blank line is in it and the game goes on to ``c4``; else the blank line
    ends the game and ``2. c4 *`` is a second one."""
    text = f'[Event "j"]\n\n{line}\n2. c4 *\n'
    games = list(split_games(lines(text)))
    assert len(games) == (1 if in_comment else 2)
    stream, count = io.StringIO(text), 0
    while chess.pgn.read_game(stream) is not None:
        count += 1
    assert count == len(games)


def test_a_comment_closed_then_a_semicolon_first_on_the_rest() -> None:
    """Inside a comment, ``end}`` closes it and the rest, ``;x {``, is a ``;`` comment from its
    first character: the ``{`` opens nothing, so the blank line ends the game (as for
    python-chess: two games)."""
    text = '[Event "k"]\n\n1. e4 { a\nend};x {\n\n2. c4 *\n'
    assert len(list(split_games(lines(text)))) == 2
    stream, count = io.StringIO(text), 0
    while chess.pgn.read_game(stream) is not None:
        count += 1
    assert count == 2
