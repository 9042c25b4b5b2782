"""EPD suites and FEN lists: one position per line, EPD opcodes kept.

>>> record = parse_epd_line('1k1r4/pp1b1R2/3q2pp/4p3/2B5/4Q3/PPP2B2/2K5 b - - bm Qd1+; id "BK.01";')
>>> record["id"], record["bm"], record["fen"]
('BK.01', ['Qd1+'], '1k1r4/pp1b1R2/3q2pp/4p3/2B5/4Q3/PPP2B2/2K5 b - - 0 1')
>>> parse_fen_line("8/8/8/8/8/8/8/8 w - - 0 1")
Traceback (most recent call last):
...
ValueError: invalid position (no white king, no black king, empty): '8/8/8/8/8/8/8/8 w - - 0 1'
"""
from __future__ import annotations

import json
import re
from typing import Any

import chess
import chess.polyglot

from pipelines.formats.depth import MAX_DEPTH, depth_problem

# Faults that make a board no chess position at all. Milder ones (an implausible en passant
# square, impossible checks in composed studies) are kept: the position is still well defined.
FATAL_STATUS = (chess.STATUS_EMPTY | chess.STATUS_NO_WHITE_KING | chess.STATUS_NO_BLACK_KING
                | chess.STATUS_TOO_MANY_KINGS | chess.STATUS_PAWNS_ON_BACKRANK
                | chess.STATUS_OPPOSITE_CHECK)
EPD_OPERATION = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)((?:\s+(?:"[^"]*"|[^;"\s]+))*)\s*(?:;|$)')


class BadOpcodes(ValueError):
    """An EPD line whose position is fine but whose opcodes are not (an illegal ``bm``...)."""

    def __init__(self, row: dict[str, Any], reason: str) -> None:
        super().__init__(reason)
        self.row = row


def checked_board(board: chess.Board, text: str) -> chess.Board:
    """``board`` unless it is no chess position at all (no king, ...): ValueError naming why."""
    fatal = board.status() & FATAL_STATUS
    if fatal:
        faults = [name.lower().replace("_", " ")[7:] for name, flag in vars(chess).items()
                  if name.startswith("STATUS_") and flag and fatal & flag]
        raise ValueError(f"invalid position ({', '.join(faults)}): {text!r}")
    return board


def parse_fen_line(text: str) -> dict[str, Any]:
    """A FEN-list line as a position_records row (without source and line)."""
    row = record_row(checked_board(chess.Board(text), text), {})
    row["fen"] = text
    return row


def parse_epd_line(text: str) -> dict[str, Any]:
    """An EPD line as a position_records row.

    ValueError when the position is bad; :class:`BadOpcodes` carrying the row (its opcodes
    kept as raw text) when only an opcode is, such as a ``bm`` move that is not legal there.
    """
    board = chess.Board()
    try:
        ops = board.set_epd(text)
    except ValueError as exc:
        fields = text.split(None, 4)
        try:
            board = chess.Board(" ".join(fields[:4]))
        except ValueError:
            raise ValueError(f"{exc} in EPD {text!r}") from None
        row = record_row(checked_board(board, text), raw_operations(text))
        raise BadOpcodes(row, f"{exc} in EPD {text!r}") from None
    return record_row(checked_board(board, text), ops)


def raw_operations(text: str) -> dict[str, str]:
    """The opcodes of an EPD line as raw operand text (quotes removed).

    >>> raw_operations('8/8/8/8/8/8/8/k1K5 w - - bm Kb3; id "a; b";')
    {'bm': 'Kb3', 'id': 'a; b'}
    """
    operations = text.split(None, 4)[4] if len(text.split(None, 4)) > 4 else ""
    return {m.group(1): m.group(2).strip().strip('"')
            for m in EPD_OPERATION.finditer(operations) if m.group(0).strip()}


def record_row(board: chess.Board, ops: dict[str, Any]) -> dict[str, Any]:
    plain = {name: plain_value(board, value) for name, value in ops.items()}
    return {
        "position_key": chess.polyglot.zobrist_hash(board), "fen": board.fen(),
        "normalised_fen": board.epd(),
        "id": text_op(plain.get("id")), "c0": text_op(plain.get("c0")),
        "bm": plain.get("bm") if isinstance(plain.get("bm"), list) else None,
        "am": plain.get("am") if isinstance(plain.get("am"), list) else None,
        "dm": plain.get("dm") if isinstance(plain.get("dm"), int) else None,
        "ops": json.dumps(plain, ensure_ascii=False),
    }


def plain_value(board: chess.Board, value: Any) -> Any:
    """An opcode value as JSON: moves in SAN, numbers and strings as they are."""
    if isinstance(value, list):
        return [board.san(v) if isinstance(v, chess.Move) else plain_value(board, v)
                for v in value]
    if isinstance(value, chess.Move):
        return board.san(value)
    return value


def text_op(value: Any) -> str | None:
    return None if value is None else str(value)


# EPD opcodes a label is made of: ce (centipawns, side to move), bm (best moves, SAN), pv
# (predicted variation, SAN), acd (depth), acn (nodes); the game result from White's view in
# c9 (as Texel-tuning sets such as quiet-labeled.epd hold it) or c0.
RESULT_TEXT = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5, "1.0": 1.0, "0.0": 0.0, "0.5": 0.5,
               "1": 1.0, "0": 0.0}


class BadLabel(ValueError):
    """An EPD line whose label opcodes cannot be read (``ce`` not a number...)."""


class BadDepth(BadLabel):
    """An EPD line whose ``acd`` is no depth from 0 to MAX_DEPTH."""


def epd_label(row: dict[str, Any]) -> dict[str, Any] | None:
    """The label an EPD record's ``ce`` gives (side to move's view), or None without ``ce``.

    >>> row = record_row(chess.Board("4k3/8/8/8/8/8/8/4K2R b K - 0 1"),
    ...                  {"ce": 35, "acd": 12, "bm": [chess.Move.from_uci("e8d7")],
    ...                   "c9": "1-0"})
    >>> epd_label(row)
    {'cp': 35, 'depth': 12, 'best_move': 'e8d7', 'pv': None, 'nodes': None, 'result': 0.0}
    """
    ops = json.loads(row["ops"])
    if "ce" not in ops:
        return None
    board = chess.Board(row["fen"])
    score = whole_number(ops["ce"])
    if score is None:
        raise BadLabel(f"ce is not a whole number of centipawns: {ops['ce']!r}")
    depth = whole_number(ops.get("acd"))
    if "acd" in ops and (depth is None or depth_problem(depth)):
        raise BadDepth(f"acd {ops['acd']!r} is not a depth from 0 to {MAX_DEPTH}")
    nodes = whole_number(ops.get("acn"))
    best = (row.get("bm") or [None])[0]
    result = next((RESULT_TEXT[str(ops[op]).strip()] for op in ("c9", "c0")
                   if str(ops.get(op, "")).strip() in RESULT_TEXT), None)
    if result is not None and board.turn == chess.BLACK:
        result = 1.0 - result
    return {"cp": score, "depth": depth, "best_move": uci_of(board, best),
            "pv": uci_line(board, ops.get("pv")), "nodes": nodes, "result": result}


def whole_number(value: Any) -> int | None:
    """An opcode's integer (python-chess gives ints; a line kept raw gives text), else None.

    >>> whole_number(35), whole_number("-40"), whole_number("lots"), whole_number(True)
    (35, -40, None, None)
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and re.fullmatch(r"[-+]?[0-9]{1,9}", value.strip()):
        return int(value)
    return None


def uci_of(board: chess.Board, san: str | None) -> str | None:
    return None if san is None else board.parse_san(san).uci()


def uci_line(board: chess.Board, sans: Any) -> list[str] | None:
    """A ``pv`` opcode (SAN moves) in UCI; None when there is none or it is not legal."""
    if not isinstance(sans, list) or not sans:
        return None
    line, board = [], board.copy(stack=False)
    try:
        for san in sans:
            move = board.parse_san(str(san))
            line.append(move.uci())
            board.push(move)
    except ValueError:
        return None
    return line
