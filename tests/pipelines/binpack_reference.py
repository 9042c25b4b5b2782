"""A binpack encoder written from the format's documentation, in plain Python over python-chess.

Stockfish's ``docs/binpack.md`` gives the layout; nnue-pytorch's data loader (``binpack.h``,
``chess.h``) gives the details the doc points to: the 24-byte compressed position (occupied
squares big endian, one nibble per piece in square order, low nibble first, 12/13/14/15 for an
en passant pawn, a castling rook, the black king with Black to move), the 16-bit move (type,
from, to, promotion), ``signedToUnsigned``, the movetext's piece index / move index in just
enough bits and the scores in 4-bit blocks with a continuation bit. This module shares no code
with ``pipelines/formats/binpack.pyx``: it is the independent check of that reader and writer.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import chess

NORMAL, PROMOTION, CASTLE, EN_PASSANT = range(4)


def signed_to_unsigned(value: int) -> int:
    bits = value & 0xFFFF
    if bits & 0x8000:
        bits ^= 0x7FFF
    return ((bits << 1) | (bits >> 15)) & 0xFFFF


def used_bits_safe(count: int) -> int:
    """Bits for an index below ``count``: usedBits(count - 1), 0 for 0 or 1 choices."""
    return 0 if count <= 1 else (count - 1).bit_length()


def legal_ep(board: chess.Board) -> int | None:
    return board.ep_square if board.has_legal_en_passant() else None


def nibble(board: chess.Board, square: int) -> int:
    piece = board.piece_at(square)
    assert piece is not None
    colour = 0 if piece.color == chess.WHITE else 1
    value = 2 * (piece.piece_type - 1) + colour
    ep, rank = legal_ep(board), chess.square_rank(square)
    rights = board.clean_castling_rights()
    if piece.piece_type == chess.PAWN and ep is not None \
            and chess.square_file(square) == chess.square_file(ep) \
            and ((rank == 3 and board.turn == chess.BLACK) or (rank == 4 and board.turn == chess.WHITE)):
        return 12
    if piece.piece_type == chess.ROOK and rights & chess.BB_SQUARES[square]:
        return 13 if colour == 0 else 14
    if piece.piece_type == chess.KING and colour == 1 and board.turn == chess.BLACK:
        return 15
    return value


def compress_position(board: chess.Board) -> bytes:
    squares = list(chess.scan_forward(board.occupied))
    packed = bytearray(16)
    for index, square in enumerate(squares):
        packed[index // 2] |= nibble(board, square) << (4 * (index % 2))
    return board.occupied.to_bytes(8, "big") + bytes(packed)


def compress_move(board: chess.Board, move: chess.Move | None) -> int:
    if move is None:
        return 0
    kind, to = NORMAL, move.to_square
    if board.is_castling(move):
        kind = CASTLE
        to = move.from_square + 3 if move.to_square > move.from_square else move.from_square - 4
    elif board.is_en_passant(move):
        kind = EN_PASSANT
    elif move.promotion:
        kind = PROMOTION
    promo = move.promotion - chess.KNIGHT if move.promotion else 0
    return (kind << 14) | (move.from_square << 8) | (to << 2) | promo


def stem(board: chess.Board, move: chess.Move | None, score: int, ply: int, result: int) -> bytes:
    ply_result = (ply & 0x3FFF) | (signed_to_unsigned(result) << 14)
    return (compress_position(board) + compress_move(board, move).to_bytes(2, "big")
            + signed_to_unsigned(score).to_bytes(2, "big") + ply_result.to_bytes(2, "big")
            + min(board.halfmove_clock, 255).to_bytes(2, "big"))


class Bits:
    """Bits appended most significant first, as the doc's movetext packs them."""

    def __init__(self) -> None:
        self.bits: list[int] = []

    def add(self, value: int, count: int) -> None:
        self.bits.extend((value >> (count - 1 - i)) & 1 for i in range(count))

    def add_vle(self, value: int) -> None:
        while True:
            self.add((value & 15) | ((value > 15) << 4), 5)
            value >>= 4
            if value == 0:
                return

    def to_bytes(self) -> bytes:
        padded = self.bits + [0] * (-len(self.bits) % 8)
        return bytes(int("".join(map(str, padded[i:i + 8])), 2) for i in range(0, len(padded), 8))


def move_index(board: chess.Board, move: chess.Move) -> tuple[int, int]:
    """(index of the move among its piece's pseudo-moves, how many there are)."""
    ours = board.occupied_co[board.turn]
    theirs = board.occupied_co[not board.turn]
    source, target = move.from_square, move.to_square
    piece = board.piece_type_at(source)
    below = chess.BB_SQUARES[target] - 1
    if piece == chess.PAWN:
        forward = 8 if board.turn == chess.WHITE else -8
        ep = legal_ep(board)
        targets = theirs | (chess.BB_SQUARES[ep] if ep is not None else 0)
        destinations = chess.BB_PAWN_ATTACKS[board.turn][source] & targets
        if not board.occupied & chess.BB_SQUARES[source + forward]:
            destinations |= chess.BB_SQUARES[source + forward]
            start = 1 if board.turn == chess.WHITE else 6
            if chess.square_rank(source) == start and \
                    not board.occupied & chess.BB_SQUARES[source + 2 * forward]:
                destinations |= chess.BB_SQUARES[source + 2 * forward]
        index, count = chess.popcount(destinations & below), chess.popcount(destinations)
        if chess.square_rank(source) == (6 if board.turn == chess.WHITE else 1):
            assert move.promotion is not None
            return index * 4 + move.promotion - chess.KNIGHT, count * 4
        return index, count
    if piece == chess.KING:
        steps = chess.BB_KING_ATTACKS[source] & ~ours
        rights = board.clean_castling_rights() & (chess.BB_RANK_1 if board.turn else chess.BB_RANK_8)
        count = chess.popcount(steps) + chess.popcount(rights)
        if board.is_castling(move):
            long_right = chess.BB_A1 if board.turn else chess.BB_A8
            return (chess.popcount(steps) - 1 + bool(rights & long_right)
                    + (target > source)), count
        return chess.popcount(steps & below), count
    attacks = board.attacks_mask(source) & ~ours
    return chess.popcount(attacks & below), chess.popcount(attacks)


@dataclass
class Entry:
    board: chess.Board
    move: chess.Move | None
    score: int
    ply: int
    result: int


def chain(entries: Sequence[Entry]) -> bytes:
    """One chain: the first entry as its stem, the others (consecutive plies) as movetext."""
    first = entries[0]
    bits, last = Bits(), -first.score
    for entry in entries[1:]:
        assert entry.move is not None
        ours = entry.board.occupied_co[entry.board.turn]
        bits.add(chess.popcount(ours & (chess.BB_SQUARES[entry.move.from_square] - 1)),
                 used_bits_safe(chess.popcount(ours)))
        index, count = move_index(entry.board, entry.move)
        bits.add(index, used_bits_safe(count))
        bits.add_vle(signed_to_unsigned(entry.score - last))
        last = -entry.score
    return (stem(first.board, first.move, first.score, first.ply, first.result)
            + (len(entries) - 1).to_bytes(2, "big") + bits.to_bytes())


def block(chains: Sequence[bytes]) -> bytes:
    data = b"".join(chains)
    return b"BINP" + len(data).to_bytes(4, "little") + data
