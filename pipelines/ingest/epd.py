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
from typing import Any

import chess
import chess.polyglot

# EPD opcodes with their own column; every opcode is also kept in the JSON ``ops`` column.
MOVE_LIST_OPS = ("bm", "am")


def checked_board(board: chess.Board, text: str) -> chess.Board:
    """``board`` if it is a legal chess position, else ValueError naming its faults."""
    if not board.is_valid():
        faults = [name.lower().replace("_", " ")[7:] for name, flag in vars(chess).items()
                  if name.startswith("STATUS_") and flag and board.status() & flag]
        raise ValueError(f"invalid position ({', '.join(faults)}): {text!r}")
    return board


def parse_fen_line(text: str) -> dict[str, Any]:
    """A FEN-list line as a position_records row (without source and line)."""
    return record_row(checked_board(chess.Board(text), text), {})


def parse_epd_line(text: str) -> dict[str, Any]:
    """An EPD line as a position_records row; ValueError naming the fault otherwise."""
    board = chess.Board()
    try:
        ops = board.set_epd(text)
    except ValueError as exc:
        raise ValueError(f"{exc} in EPD {text!r}") from None
    return record_row(checked_board(board, text), ops)


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
