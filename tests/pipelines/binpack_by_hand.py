"""A binpack file built byte by byte from the format's documentation (issue 48 §3).

Every value below is worked out by hand from Stockfish's ``docs/binpack.md`` and the reader and
writer it points to (nnue-pytorch's ``nnue_training_data_formats.h``): none comes from the code
under test or from ``binpack_reference.py``. Squares: a1 = 0 .. h1 = 7, a2 = 8, .., h8 = 63.
Nibbles: 2 * piece type + colour (P 0, N 2, B 4, R 6, Q 8, K 10; black + 1); 12 a pawn that
can be taken en passant, 13/14 a white/black rook that can still castle, 15 the black king when
Black is to move. signedToUnsigned(v): 2v for v >= 0, -2v - 1 for v < 0. Scores and results
(-1, 0, 1) are the side to move's.
"""
from __future__ import annotations

# Chain A: Black to move, Black castles, White pushes two squares, Black takes en passant,
# White promotes. Stem: 4k2r/1P6/8/8/3p4/8/4P3/4K3 b k - 3 21 (ply 41).
#   occupied e1(4) e2(12) d4(27) b7(49) e8(60) h8(63):
#     0x10 + 0x1000 + 0x800_0000 + 0x2_0000_0000_0000 + 0x1000_0000_0000_0000
#     + 0x8000_0000_0000_0000 = 0x9002_0000_0800_1010
#   nibbles in square order: K 10, P 0, p 1, P 0, k (Black to move) 15, r (can castle) 14
#     -> bytes 0x0A 0x01 0xEF, then 13 zero bytes
#   move O-O: type castle (2), from e8 (60), to the rook's square h8 (63):
#     2 << 14 | 60 << 8 | 63 << 2 = 0x8000 + 0x3C00 + 0xFC = 0xBCFC
#   score -312 (Black's view; -150 centipawns at 208 a pawn): 2 * 312 - 1 = 623 = 0x026F
#   ply 41 = 0x29, result -1 (White won the game): signedToUnsigned(-1) = 1, 1 << 14 | 41
#     = 0x4029; rule50 3
A_STEM = bytes.fromhex("9002000008001010" "0A01EF" + "00" * 13 + "BCFC" "026F" "4029" "0003")
# Movetext, 3 plies, bits most significant first:
#   ply 42, White (e1 e2 b7: 3 pieces, 2 bits): e2 is piece 1 -> 01; its moves {e3, e4}
#     (1 bit), e4 is 1 -> 1; score 208, stored as signedToUnsigned(score - last), last the
#     previous score seen from this side (+312): 208 - 312 = -104 -> 207 = 0b1100_1111, in
#     4-bit blocks, low first, each after a continuation bit: 1 1111, 0 1100
#   ply 43, Black (d4 f8 g8: 2 bits): d4 is 0 -> 00; its moves {d3, e3 (en passant)}: e3 is
#     1 -> 1; score -250: -250 - (-208) = -42 -> 83 = 0b0101_0011: 1 0011, 0 0101
#   ply 44, White (e1 b7: 1 bit): b7 is 1 -> 1; its one destination b8 times four promotion
#     pieces (2 bits), queen 3 -> 11; score 520: 520 - 250 = 270 -> 540 = 0b10_0001_1100:
#     1 1100, 1 0001, 0 0010
#   0111111101100 | 0011001100101 | 111111001000100010 (44 bits, 4 zero bits of padding):
#   01111111 01100001 10011001 01111111 00100010 00100000
A_MOVETEXT = bytes.fromhex("0003" "7F61997F2220")
#
# Chain B: White to move, takes en passant, Black's king steps, White castles; mate scores.
# Stem: 4k3/8/8/3pP3/8/8/8/R3K2R w KQ d6 0 11 (ply 20).
#   occupied a1(0) e1(4) h1(7) d5(35) e5(36) e8(60): 0x91 + 0x8_0000_0000 + 0x10_0000_0000
#     + 0x1000_0000_0000_0000 = 0x1000_0018_0000_0091
#   nibbles: R (castles) 13, K 10, R (castles) 13, p (just moved two squares) 12, P 0,
#     k (White to move) 11 -> 0xAD 0xCD 0xB0
#   move exd6 e.p.: type 3, from e5 (36) to d6 (43): 0xC000 + 0x2400 + 0xAC = 0xE4AC
#   score 31997 (mate in 2 moves: 32000 - 3 plies): 2 * 31997 = 63994 = 0xF9FA
#   ply 20, result 1: 2 << 14 | 20 = 0x8014; rule50 0
B_STEM = bytes.fromhex("1000001800000091" "ADCDB0" + "00" * 13 + "E4AC" "F9FA" "8014" "0000")
#   ply 21, Black (one piece: 0 bits); king e8's squares {d7, e7, f7, d8, f8}, no castling
#     (3 bits): d7 is 0 -> 000; score -31996: -31996 - (-31997) = 1 -> 2: 0 0010
#   ply 22, White (a1 e1 h1 d6: 2 bits): e1 is 1 -> 01; the king's 5 squares {d1 f1 d2 e2
#     f2} then its 2 castlings (3 bits): O-O is 5 - 1 + 1 (it has the long one) + 1 = 6 -> 110;
#     score 31995: 31995 - 31996 = -1 -> 1: 0 0001
#   000 00010 | 01 110 00001 -> 00000010 01110000 01(000000)
B_MOVETEXT = bytes.fromhex("0002" "027040")
#
# Chain C: a stem alone, Black to move, Black underpromotes to a knight.
# r3k3/8/8/8/8/8/1p6/7K b q - 12 31 (ply 61).
#   occupied h1(7) b2(9) a8(56) e8(60): 0x280 + 0x0100_0000_0000_0000 + 0x1000_0000_0000_0000
#     = 0x1100_0000_0000_0280
#   nibbles: K 10, p 1, r (castles) 14, k (Black to move) 15 -> 0x1A 0xFE
#   move b2b1=N: type 1, from 9 to 1, knight 0: 0x4000 + 0x0900 + 0x04 = 0x4904
#   score -20: 39 = 0x0027; ply 61 = 0x3D, result 0: 0x003D; rule50 12; no movetext
C_CHAIN = bytes.fromhex("1100000000000280" "1AFE" + "00" * 14 + "4904" "0027" "003D" "000C"
                        "0000")
# One block: "BINP", then its size, 40 + 37 + 34 = 111, as a little-endian u32.
BY_HAND = b"BINP" + bytes.fromhex("6F000000") + A_STEM + A_MOVETEXT + B_STEM + B_MOVETEXT \
    + C_CHAIN

# What the documentation says those bytes hold: (FEN as python-chess's epd(), move, score,
# ply, result, rule50, offset of the chain). The FENs are written out by hand.
BY_HAND_ENTRIES = [
    ("4k2r/1P6/8/8/3p4/8/4P3/4K3 b k -", "e8g8", -312, 41, -1, 3, 8),
    ("5rk1/1P6/8/8/3p4/8/4P3/4K3 w - -", "e2e4", 208, 42, 1, 4, 8),
    ("5rk1/1P6/8/8/3pP3/8/8/4K3 b - e3", "d4e3", -250, 43, -1, 0, 8),
    ("5rk1/1P6/8/8/8/4p3/8/4K3 w - -", "b7b8q", 520, 44, 1, 0, 8),
    ("4k3/8/8/3pP3/8/8/8/R3K2R w KQ d6", "e5d6", 31997, 20, 1, 0, 48),
    ("4k3/8/3P4/8/8/8/8/R3K2R b KQ -", "e8d7", -31996, 21, -1, 0, 48),
    ("8/3k4/3P4/8/8/8/8/R3K2R w KQ -", "e1g1", 31995, 22, 1, 1, 48),
    ("r3k3/8/8/8/8/8/1p6/7K b q -", "b2b1n", -20, 61, 0, 12, 85),
]
# The labels those entries make (side to move's view, then White's): centipawns are
# 100 * score / 208 rounded (-312 -> -150, -250 -> -120.19 -> -120, 520 -> 250,
# -20 -> -9.6 -> -10); mates are (32000 - |score| + 1) // 2 moves (31997 -> 2, 31996 -> 2,
# 31995 -> 3); a result -1, 0, 1 is 0, 0.5, 1.
# (fen, score_cp, score_mate, white_cp, white_mate, result, best_move)
BY_HAND_LABELS = [
    ("4k2r/1P6/8/8/3p4/8/4P3/4K3 b k -", -150, None, 150, None, 0.0, "e8g8"),
    ("5rk1/1P6/8/8/3p4/8/4P3/4K3 w - -", 100, None, 100, None, 1.0, "e2e4"),
    ("5rk1/1P6/8/8/3pP3/8/8/4K3 b - e3", -120, None, 120, None, 0.0, "d4e3"),
    ("5rk1/1P6/8/8/8/4p3/8/4K3 w - -", 250, None, 250, None, 1.0, "b7b8q"),
    ("4k3/8/8/3pP3/8/8/8/R3K2R w KQ d6", None, 2, None, 2, 1.0, "e5d6"),
    ("4k3/8/3P4/8/8/8/8/R3K2R b KQ -", None, -2, None, 2, 0.0, "e8d7"),
    ("8/3k4/3P4/8/8/8/8/R3K2R w KQ -", None, 3, None, 3, 1.0, "e1g1"),
    ("r3k3/8/8/8/8/8/1p6/7K b q -", -10, None, 10, None, 0.5, "b2b1n"),
]
