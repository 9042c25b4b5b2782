"""Random endgame starts (paper 004): 3 to 7 pieces, kings included, 20% of each piece count
and White and Black to move half each (exactly, by position index), legal and not already
decided.

Position ``i`` has ``3 + i % 5`` pieces and White to move when ``(i // 5) % 2 == 0``; it is
drawn from a generator seeded by ``(seed, i)``, so the same seed gives the same list and a
longer list starts with the shorter one. Non-king pieces are drawn uniformly from pawn,
knight, bishop, rook and queen, each of a random colour; pawns stand on ranks 2 to 7; no
castling, no en passant.

Rejected (and drawn again): illegal positions (python-chess' ``is_valid``: the side not to
move in check, kings touching, ...), positions already over (checkmate, stalemate,
insufficient material) and positions *trivially decided*, the rule paper 004 leaves open,
chosen here as: the side to move has a mate in one, or can capture a queen or a rook.

>>> fens = random_endgames(10, seed=1)
>>> [len(chess.Board(f).piece_map()) for f in fens]
[3, 4, 5, 6, 7, 3, 4, 5, 6, 7]
>>> [chess.Board(f).turn for f in fens][4:6]
[True, False]
"""
from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import chess

PIECE_COUNTS = (3, 4, 5, 6, 7)
RANDOM_PIECES = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN)
MAX_TRIES = 10_000


class EndgameError(ValueError):
    """A request the generator cannot satisfy: names the bad value."""


def decided(board: chess.Board) -> str | None:
    """Why ``board`` is not a fair start (None when it is one)."""
    if not board.is_valid():
        return "illegal"
    if board.is_checkmate() or board.is_stalemate() or board.is_insufficient_material():
        return "over"
    for move in board.legal_moves:
        victim = board.piece_type_at(move.to_square)
        if victim in (chess.QUEEN, chess.ROOK):
            return "wins a major piece"
        board.push(move)
        mate = board.is_checkmate()
        board.pop()
        if mate:
            return "mate in one"
    return None


def random_position(pieces: int, turn: chess.Color, rng: random.Random) -> chess.Board:
    """One position with ``pieces`` pieces (kings included), maybe not a fair start."""
    board = chess.Board(None)
    board.turn = turn
    squares = rng.sample(range(64), pieces)
    board.set_piece_at(squares[0], chess.Piece(chess.KING, chess.WHITE))
    board.set_piece_at(squares[1], chess.Piece(chess.KING, chess.BLACK))
    for square in squares[2:]:
        kind = rng.choice(RANDOM_PIECES)
        if kind == chess.PAWN and chess.square_rank(square) in (0, 7):
            square = chess.square(chess.square_file(square), rng.randint(1, 6))
            if board.piece_at(square) is not None:
                kind = chess.KNIGHT
                square = next(s for s in range(64) if board.piece_at(s) is None)
        board.set_piece_at(square, chess.Piece(kind, rng.random() < 0.5))
    return board


def endgame(index: int, seed: int, pieces: tuple[int, ...] = PIECE_COUNTS) -> str:
    """Start ``index`` of the list of ``seed`` (see the module docstring)."""
    rng = random.Random(f"{seed}:{index}")
    count = pieces[index % len(pieces)]
    turn = chess.WHITE if (index // len(pieces)) % 2 == 0 else chess.BLACK
    for _ in range(MAX_TRIES):
        board = random_position(count, turn, rng)
        if len(board.piece_map()) == count and decided(board) is None:
            return board.fen()
    raise EndgameError(f"no fair {count}-piece position found in {MAX_TRIES} tries")


def random_endgames(count: int, seed: int = 0,
                    pieces: tuple[int, ...] = PIECE_COUNTS) -> list[str]:
    return list(iter_endgames(count, seed, pieces))


def iter_endgames(count: int, seed: int = 0,
                  pieces: tuple[int, ...] = PIECE_COUNTS) -> Iterator[str]:
    if count < 0:
        raise EndgameError(f"count must be 0 or more, got {count!r}")
    if not pieces or min(pieces) < 3 or max(pieces) > 32:
        raise EndgameError(f"piece counts must lie in 3..32, got {pieces!r}")
    for index in range(count):
        yield endgame(index, seed, pieces)


def parse_pieces(text: str) -> tuple[int, ...]:
    """``3-7`` or ``3,5,7`` -> the piece counts.

    >>> parse_pieces("3-7"), parse_pieces("4,6")
    ((3, 4, 5, 6, 7), (4, 6))
    """
    try:
        if "-" in text:
            low, high = (int(p) for p in text.split("-", 1))
            return tuple(range(low, high + 1))
        return tuple(int(p) for p in text.split(",") if p.strip())
    except ValueError:
        raise EndgameError(f"bad piece counts {text!r}: use LOW-HIGH or a list") from None


@dataclass(frozen=True)
class EndgameSummary:
    path: Path
    count: int
    by_pieces: dict[int, int]
    white_to_move: int

    def __str__(self) -> str:
        shares = ", ".join(f"{k}: {v}" for k, v in sorted(self.by_pieces.items()))
        return (f"{self.count} endgame starts in {self.path} (pieces {shares}; White to move "
                f"{self.white_to_move}, Black {self.count - self.white_to_move})")


def write_endgames(path: Path, count: int, seed: int = 0,
                   pieces: tuple[int, ...] = PIECE_COUNTS) -> EndgameSummary:
    """Write ``count`` starts as an EPD file (one position a line, ``id "endgame-i"``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    by_pieces: dict[int, int] = {}
    white = 0
    temporary = path.with_suffix(path.suffix + ".tmp")
    with open(temporary, "w") as handle:
        for index, fen in enumerate(iter_endgames(count, seed, pieces)):
            board = chess.Board(fen)
            by_pieces[len(board.piece_map())] = by_pieces.get(len(board.piece_map()), 0) + 1
            white += board.turn == chess.WHITE
            handle.write(f"{board.epd()} id \"endgame-{index}\";\n")
    temporary.replace(path)
    return EndgameSummary(path, count, by_pieces, white)


__all__ = ["EndgameError", "EndgameSummary", "decided", "endgame", "parse_pieces",
           "random_endgames", "write_endgames"]
