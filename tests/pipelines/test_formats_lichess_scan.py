"""The compiled scanner of the Lichess evaluation database (``_lichess_eval.scan_block``): the
plain lines it reads give the labels ``json`` gives (an independent reader, in the test); every
other line is left to the Arrow/line-by-line reader, so a block gives exactly what that reader
gives alone: the same records, labels and errors (kind, line and message), in line order."""
from __future__ import annotations

import json
import random
from typing import Any

import pyarrow as pa
import pytest

from pipelines.formats._lichess_eval import scan_block
from pipelines.formats.blocks import TextBlock
from pipelines.formats.lichess_eval import PV_MOVES, parse_block, parse_block_arrow
from pipelines.formats.records import resolve

START = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -"
MATED = "6k1/5ppp/8/8/8/8/8/R5K1 w - -"
PLAIN = [   # well-formed lines in the spellings JSON allows: each is read by the scanner
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 32, "line": "c7c5 g1f3"}}], '
    f'"knodes": 104152, "depth": 36}}]}}',
    f'{{ "fen" : "{START}" ,\t"evals" : [ {{ "pvs" : [ {{ "cp" : -7 , "line" : "e7e5" }} ] , '
    f'"depth" : 3 }} ] }}',
    f'{{"evals": [{{"depth": 20, "knodes": null, "pvs": [{{"line": "a1a8", "mate": 1, '
    f'"cp": null}}]}}], "fen": "{MATED}"}}',
    f'{{"fen": "{MATED}", "evals": [{{"pvs": [{{"mate": -3, "line": "a1a8 g8h7 a8h8"}}, '
    f'{{"cp": 12, "line": "a1a2"}}, {{"line": null}}], "knodes": 5, "depth": 9}}, '
    f'{{"pvs": [{{"cp": 0, "line": "a1b1"}}], "depth": 8}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": -0, "line": '
    f'"a7a6 b1c3 b7b5 c3b5 c7c6 b5a7 d7d5 a7c8 e7e5 c8b6"}}], "knodes": 0, "depth": 0}}]}}',
    '{"fen": "8/P6k/8/8/8/8/8/K7 w - -", "evals": [{"pvs": [{"cp": 900, "line": "a7a8q"}], '
    '"knodes": 1, "depth": 30, "note": {"by": "x\\"y\\\\z", "tags": [1, -2.5e3, true, false, '
    'null, [], {}]}}], "source": "caf\\u00e9", "id": 12}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 2147483647, "line": "g8f6"}}], '
    f'"depth": 1000}}]}}\r',
]
ODD = [     # lines the scanner leaves to the careful reader (each an error or a special case)
    'this line is not JSON',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 1.5, "line": "e7e5"}}], "depth": 20}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": "12", "line": "e7e5"}}], "depth": 20}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": true, "line": "e7e5"}}], "depth": 20}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 1, "mate": 2, "line": "e7e5"}}], '
    f'"depth": 20}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"line": "e7e5"}}], "depth": 20}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 1, "line": null}}], "depth": 20}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 1, "line": ""}}], "depth": 20}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 1, "line": " e7e5"}}], "depth": 20}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 1, "line": "e7e5  d7d5"}}], '
    f'"depth": 20}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 1, "line": "e7e9"}}], "depth": 20}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 1, "line": "E7E5"}}], "depth": 20}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 1, "line": "e7e5"}}]}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 1, "line": "e7e5"}}], "depth": null}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 1, "line": "e7e5"}}], "depth": 2.0}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [], "depth": 20}}]}}',
    f'{{"fen": "{START}", "evals": []}}',
    f'{{"fen": "{START}", "evals": null}}',
    '{"evals": [{"pvs": [{"cp": 1, "line": "e7e5"}], "depth": 20}]}',
    '{"fen": null, "evals": [{"pvs": [{"cp": 1, "line": "e7e5"}], "depth": 20}]}',
    '{"fen": 5, "evals": [{"pvs": [{"cp": 1, "line": "e7e5"}], "depth": 20}]}',
    '{"fen": "\\u0038/8/8/8/8/8/8/K6k w - -", "evals": [{"pvs": [{"cp": 1, "line": "a1a2"}], '
    '"depth": 20}]}',
    f'{{"fen": "{START}", "fen": "{MATED}", "evals": [{{"pvs": [{{"cp": 1, "line": "a1a2"}}], '
    f'"depth": 20}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 1, "line": "e7e5"}}], "depth": 20}}]}} x',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 1, "line": "e7e5"}}], "depth": 20}}]}} '
    f'{{"fen": "{START}", "evals": []}}',
    '[1, 2]',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 1, "line": "e7e5"}}], "depth": 2',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 99999999999, "line": "e7e5"}}], '
    f'"depth": 20}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 01, "line": "e7e5"}}], "depth": 20}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 1, "line": "e7e5"}}, 7], "depth": 20}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 1, "line": "e7e5"}}, {{"cp": "x"}}], '
    f'"depth": 20}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 1, "line": "e7e5"}}], "depth": 20}}, 3]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 1, "line": "e7e5"}}], '
    f'"depth": 99999999999}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 1, "line": "e7e5"}}], "depth": -5}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 1, "line": "e7e5"}}], "depth": 1001}}]}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 1, "line": "e7e5"}}], "depth": 20}}], '
    f'"x": [1, 2.}}',
    f'{{"fen": "{START}", "evals": [{{"pvs": [{{"cp": 1, "line": "e7\\u0065"}}], "depth": 20}}]}}',
]


def block_of(lines: list[str], first_line: int = 1) -> TextBlock:
    data = "".join(line + "\n" for line in lines).encode()
    return TextBlock(data, first_line, 0, len(data))


def careful(block: TextBlock) -> Any:
    """The block read by the Arrow/line-by-line reader alone (every non-blank line)."""
    return parse_block_arrow(block)


def flat(array: pa.Array | pa.ChunkedArray) -> list[Any]:
    return array.to_pylist()


def assert_same(got: Any, want: Any) -> None:
    assert got.records == want.records
    assert flat(got.fens) == flat(want.fens)
    assert flat(got.lines) == flat(want.lines)
    assert got.labels.to_pylist() == want.labels.to_pylist()
    assert got.labels.schema == want.labels.schema
    assert got.errors == want.errors


def expected_labels(lines: list[str]) -> list[dict[str, Any]]:
    """Each eval's label, read with ``json`` (the record is the line's index)."""
    out = []
    for record, line in enumerate(lines):
        for item in json.loads(line)["evals"]:
            pv = item["pvs"][0]
            moves = pv["line"].split()
            knodes = item.get("knodes")
            out.append({"record": record, "depth": item["depth"], "cp": pv.get("cp"),
                        "mate": pv.get("mate"), "best_move": moves[0],
                        "pv": moves[:PV_MOVES], "nodes": None if knodes is None else knodes * 1000,
                        "result": None, "engine_id": None})
    return out


def test_plain_lines_are_read_by_the_scanner_as_json_reads_them() -> None:
    """Blanks, any key order, unknown fields of every JSON type, nulls, several pvs, a long
    line cut to 8 moves, a promotion, CRLF: every line taken by the scanner, labels as json's."""
    lines = [PLAIN[0], "", "  \t", *PLAIN[1:]]
    scanned = scan_block(block_of(lines).data, PV_MOVES)
    assert scanned["slow"].tolist() == []
    assert scanned["blank"].tolist() == [1, 2]
    block = parse_block(block_of(lines, first_line=10))
    assert block.records == len(PLAIN)
    assert flat(block.lines) == [10, *range(13, 13 + len(PLAIN) - 1)]
    assert flat(block.fens) == [json.loads(line)["fen"] for line in PLAIN]
    assert block.labels.to_pylist() == expected_labels(PLAIN)
    assert block.errors == []
    assert_same(block, careful(block_of(lines, first_line=10)))


@pytest.mark.parametrize("index", range(len(ODD)))
def test_an_odd_line_is_left_to_the_careful_reader(index: int) -> None:
    """Each odd line, alone and between plain lines: not taken by the scanner, and the block
    gives what the careful reader gives (records, labels, errors with their line)."""
    lines = [PLAIN[0], ODD[index], PLAIN[3]]
    scanned = scan_block(block_of(lines).data, PV_MOVES)
    assert scanned["slow"].tolist() == [1]
    assert_same(parse_block(block_of([ODD[index]], 5)), careful(block_of([ODD[index]], 5)))
    alone = careful(block_of([ODD[index]], 5))
    got = parse_block(block_of(lines, 4))
    assert flat(got.lines) == sorted([4, 6, *flat(alone.lines)])
    assert [e["line"] for e in got.errors] == [e["line"] for e in alone.errors]
    assert got.errors == alone.errors


def test_no_line_is_skipped_silently() -> None:
    """Plain and odd lines alternating: each line is a record or an error naming it (the
    odd ones that are still good JSON, an escaped FEN or move, a repeated field, are kept),
    and the block is what the careful reader gives."""
    lines = [PLAIN[i % len(PLAIN)] if i % 2 == 0 else ODD[i // 2] for i in range(2 * len(ODD))]
    block = parse_block(block_of(lines))
    assert_same(block, careful(block_of(lines)))
    assert set(flat(block.lines)) | {e["line"] for e in block.errors} == \
        set(range(1, len(lines) + 1))
    assert len(block.errors) >= len(ODD) - 3
    assert {2 * i + 1 for i in range(len(ODD))} <= set(flat(block.lines))


def test_random_mixtures_give_what_the_careful_reader_gives() -> None:
    """Seeded blocks of plain, odd and blank lines, a position repeated, in random order:
    the same records, labels and errors as the careful reader alone."""
    rng = random.Random(7)
    pool = PLAIN + ODD + ["", "   "]
    for _ in range(40):
        lines = [rng.choice(pool) for _ in range(rng.randrange(1, 30))]
        first = rng.randrange(1, 10_000)
        assert_same(parse_block(block_of(lines, first)), careful(block_of(lines, first)))


def test_a_block_without_a_last_newline_and_an_empty_block() -> None:
    data = (PLAIN[0] + "\n" + PLAIN[1]).encode()
    block = parse_block(TextBlock(data, 3, 0, len(data)))
    assert (block.records, flat(block.lines)) == (2, [3, 4])
    empty = parse_block(TextBlock(b"", 1, 0, 0))
    assert (empty.records, empty.labels.num_rows, empty.errors) == (0, 0, [])


def test_an_illegal_fen_read_by_the_scanner_is_recorded_with_its_line() -> None:
    """A plain line whose FEN has no kings: read, then refused when keyed (as the careful
    reader's records are): a bad_fen error naming line 2; the other lines' rows kept."""
    lines = [PLAIN[0], '{"fen": "8/8/8/8/8/8/8/8 w - -", "evals": [{"pvs": [{"cp": 0, '
             '"line": "a1a2"}], "depth": 20}]}', PLAIN[2]]
    assert scan_block(block_of(lines).data, PV_MOVES)["slow"].tolist() == []
    rows = resolve(parse_block(block_of(lines)), "lichess-eval", 0)
    assert [(e["kind"], e["line"]) for e in rows.errors] == [("bad_fen", 2)]
    assert "'8/8/8/8/8/8/8/8 w - -'" in rows.errors[0]["message"]
    assert rows.positions["line"].to_pylist() == [1, 3]
    assert rows.labels.num_rows == 2


def test_a_bad_eval_is_named_by_its_place_in_its_line() -> None:
    """Each error names the eval of its line it is about: the second eval of line 1 (no
    depth), the second of line 2's three (no pvs); the good evals are labels."""
    fen = "4k3/8/8/8/8/8/8/4K3 w - -"
    good = {"pvs": [{"cp": 5, "line": "e1e2"}], "knodes": 1, "depth": 10}
    lines = [json.dumps({"fen": fen, "evals": [good, {"pvs": [{"cp": 7, "line": "e1d1"}],
                                                     "knodes": 1}]}),
             json.dumps({"fen": fen.replace(" w ", " b "),
                         "evals": [{**good, "depth": 3}, {"pvs": [], "knodes": 1, "depth": 4},
                                   {**good, "depth": 5}]})]
    block = parse_block(block_of(lines))
    assert [(e["line"], e["kind"], e["message"].split(": ")[0]) for e in block.errors] == [
        (1, "bad_record", "an eval without a depth (eval 1 at depth None"),
        (2, "bad_record", "an eval without pvs (eval 1 at depth 4")]
    assert block.labels.column("depth").to_pylist() == [10, 3, 5]
