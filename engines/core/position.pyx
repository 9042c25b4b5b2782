# cython: language_level=3
"""The compiled bitboard position: move generation, make, Zobrist keys, rules, SEE, SAN/UCI/FEN.

Everything here mirrors python-chess (squares a1 = 0 .. h8 = 63, the same legality rules, the
same SAN and FEN spelling, the Polyglot key of ``chess.polyglot.zobrist_hash``) and is checked
against it in tests/engines/test_core.py. Positions are plain C structs copied to make a move
("copy-make"): unmaking is restoring the copy, cheaper and safer than undoing piece by piece.
"""
from cpython.mem cimport PyMem_Free, PyMem_Realloc
from libc.string cimport memcmp, memcpy, memset

import chess
from chess.polyglot import POLYGLOT_RANDOM_ARRAY


class CoreError(ValueError):
    """Bad input to the compiled core; the message quotes it."""


class InvalidFenError(CoreError):
    """A FEN the core cannot set up (also: no single king per side, chess960 castling)."""


class IllegalMoveError(CoreError):
    """A SAN/UCI/chess.Move that is malformed, illegal or ambiguous in the position."""


# --- constants ---------------------------------------------------------------------------

# Piece values used by SEE (centipawns); the king is priced so that losing it ends any swap.
cdef int SEE_VALUE[6]
SEE_VALUE[:] = [100, 320, 330, 500, 900, 20000]

cdef u64 FILE_A = 0x0101010101010101ULL
cdef u64 RANK_1 = 0xFFULL
cdef u64 LIGHT_SQUARES = 0x55AA55AA55AA55AAULL
cdef u64 DARK_SQUARES = 0xAA55AA55AA55AA55ULL

cdef u64 KNIGHT_ATT[64]
cdef u64 KING_ATT[64]
cdef u64 PAWN_ATT[2][64]
cdef u64 RAYS[8][64]          # 0 N, 1 NE, 2 E, 3 NW (square grows); 4 S, 5 SW, 6 W, 7 SE
cdef u64 BISHOP_EMPTY[64]     # bishop attacks on an empty board: candidates for pins
cdef u64 ROOK_EMPTY[64]
cdef u64 BETWEEN[64][64]      # squares strictly between two aligned squares, else 0
cdef u64 LINE[64][64]         # the whole line through two aligned squares, else 0
cdef int CASTLE_MASK[64]      # castling rights kept when a move touches the square

cdef u64 Z_PIECE[2][6][64]
cdef u64 Z_CASTLE[16]
cdef u64 Z_EP[8]
cdef u64 Z_TURN

cdef str FEN_PIECES = "PNBRQKpnbrqk"


cdef inline u64 bit(int sq) noexcept nogil:
    return 1ULL << sq


cdef int lsb(u64 b) noexcept nogil:
    return __builtin_ctzll(b)


cdef int popcount(u64 b) noexcept nogil:
    return __builtin_popcountll(b)


cdef extern from *:
    int __builtin_ctzll(unsigned long long) nogil
    int __builtin_clzll(unsigned long long) nogil
    int __builtin_popcountll(unsigned long long) nogil


cdef inline int msb(u64 b) noexcept nogil:
    return 63 - __builtin_clzll(b)


cdef void init_tables():
    cdef int sq, f, r, d, df, nf, nr, a, i
    cdef int dirs[8][2]
    dirs[:] = [[0, 1], [1, 1], [1, 0], [-1, 1], [0, -1], [-1, -1], [-1, 0], [1, -1]]
    cdef int jumps[8][2]
    jumps[:] = [[1, 2], [2, 1], [2, -1], [1, -2], [-1, -2], [-2, -1], [-2, 1], [-1, 2]]
    memset(BETWEEN, 0, sizeof(BETWEEN))
    memset(LINE, 0, sizeof(LINE))
    for sq in range(64):
        f = sq & 7
        r = sq >> 3
        KNIGHT_ATT[sq] = 0
        KING_ATT[sq] = 0
        PAWN_ATT[0][sq] = 0
        PAWN_ATT[1][sq] = 0
        for i in range(8):
            nf = f + jumps[i][0]
            nr = r + jumps[i][1]
            if 0 <= nf < 8 and 0 <= nr < 8:
                KNIGHT_ATT[sq] |= bit(nr * 8 + nf)
            nf = f + dirs[i][0]
            nr = r + dirs[i][1]
            if 0 <= nf < 8 and 0 <= nr < 8:
                KING_ATT[sq] |= bit(nr * 8 + nf)
        for df in (-1, 1):
            if 0 <= f + df < 8 and r < 7:
                PAWN_ATT[0][sq] |= bit((r + 1) * 8 + f + df)
            if 0 <= f + df < 8 and r > 0:
                PAWN_ATT[1][sq] |= bit((r - 1) * 8 + f + df)
        for d in range(8):
            RAYS[d][sq] = 0
            nf = f + dirs[d][0]
            nr = r + dirs[d][1]
            while 0 <= nf < 8 and 0 <= nr < 8:
                RAYS[d][sq] |= bit(nr * 8 + nf)
                nf += dirs[d][0]
                nr += dirs[d][1]
    for sq in range(64):
        BISHOP_EMPTY[sq] = RAYS[1][sq] | RAYS[3][sq] | RAYS[5][sq] | RAYS[7][sq]
        ROOK_EMPTY[sq] = RAYS[0][sq] | RAYS[2][sq] | RAYS[4][sq] | RAYS[6][sq]
        for d in range(8):
            nf = (sq & 7) + dirs[d][0]
            nr = (sq >> 3) + dirs[d][1]
            while 0 <= nf < 8 and 0 <= nr < 8:
                a = nr * 8 + nf
                # The ray from sq up to a, without a; the full line through both.
                BETWEEN[sq][a] = RAYS[d][sq] & ~RAYS[d][a] & ~bit(a)
                LINE[sq][a] = RAYS[d][sq] | RAYS[(d + 4) & 7][sq] | bit(sq)
                nf += dirs[d][0]
                nr += dirs[d][1]
    for sq in range(64):
        CASTLE_MASK[sq] = 15
    CASTLE_MASK[0] = 15 & ~2
    CASTLE_MASK[7] = 15 & ~1
    CASTLE_MASK[4] = 15 & ~3
    CASTLE_MASK[56] = 15 & ~8
    CASTLE_MASK[63] = 15 & ~4
    CASTLE_MASK[60] = 15 & ~12


cdef void init_zobrist():
    # Polyglot: piece kind = 2 * (type) + (1 for white), index 64 * kind + square;
    # castling K Q k q at 768..771, en passant file at 772..779, white to move at 780.
    global Z_TURN
    cdef int c, t, sq, rights
    for c in range(2):
        for t in range(6):
            for sq in range(64):
                Z_PIECE[c][t][sq] = POLYGLOT_RANDOM_ARRAY[64 * (2 * t + (1 - c)) + sq]
    for rights in range(16):
        Z_CASTLE[rights] = 0
        for c in range(4):
            if rights & (1 << c):
                Z_CASTLE[rights] ^= <u64>POLYGLOT_RANDOM_ARRAY[768 + c]
    for c in range(8):
        Z_EP[c] = POLYGLOT_RANDOM_ARRAY[772 + c]
    Z_TURN = POLYGLOT_RANDOM_ARRAY[780]


init_tables()
init_zobrist()


# --- attacks -----------------------------------------------------------------------------

cdef inline u64 ray_up(int d, int sq, u64 occ) noexcept nogil:
    # Classical ray attacks: cut the ray behind its first blocker (lowest square going up).
    cdef u64 a = RAYS[d][sq]
    cdef u64 b = a & occ
    if b:
        a ^= RAYS[d][lsb(b)]
    return a


cdef inline u64 ray_down(int d, int sq, u64 occ) noexcept nogil:
    cdef u64 a = RAYS[d][sq]
    cdef u64 b = a & occ
    if b:
        a ^= RAYS[d][msb(b)]
    return a


cdef u64 bishop_attacks(int sq, u64 occ) noexcept nogil:
    return ray_up(1, sq, occ) | ray_up(3, sq, occ) | ray_down(5, sq, occ) | ray_down(7, sq, occ)


cdef u64 rook_attacks(int sq, u64 occ) noexcept nogil:
    return ray_up(0, sq, occ) | ray_up(2, sq, occ) | ray_down(4, sq, occ) | ray_down(6, sq, occ)


cdef u64 knight_attacks(int sq) noexcept nogil:
    return KNIGHT_ATT[sq]


cdef u64 king_attacks(int sq) noexcept nogil:
    return KING_ATT[sq]


cdef u64 pawn_attacks(int colour, int sq) noexcept nogil:
    return PAWN_ATT[colour][sq]


cdef u64 attackers_to(const Position* p, int sq, u64 occ) noexcept nogil:
    """Pieces of both colours attacking ``sq`` when the board holds ``occ``."""
    cdef u64 diag = p.bb[0][BISHOP] | p.bb[0][QUEEN] | p.bb[1][BISHOP] | p.bb[1][QUEEN]
    cdef u64 orth = p.bb[0][ROOK] | p.bb[0][QUEEN] | p.bb[1][ROOK] | p.bb[1][QUEEN]
    return ((PAWN_ATT[WHITE][sq] & p.bb[BLACK][PAWN])
            | (PAWN_ATT[BLACK][sq] & p.bb[WHITE][PAWN])
            | (KNIGHT_ATT[sq] & (p.bb[0][KNIGHT] | p.bb[1][KNIGHT]))
            | (KING_ATT[sq] & (p.bb[0][KING] | p.bb[1][KING]))
            | (bishop_attacks(sq, occ) & diag)
            | (rook_attacks(sq, occ) & orth))


cdef int king_square(const Position* p, int colour) noexcept nogil:
    return lsb(p.bb[colour][KING])


cdef inline bint king_attacked(const Position* p, int colour) noexcept nogil:
    return (attackers_to(p, lsb(p.bb[colour][KING]), p.all) & p.occ[colour ^ 1]) != 0


cdef bint in_check(const Position* p) noexcept nogil:
    return king_attacked(p, p.side)


# --- move generation ---------------------------------------------------------------------

cdef inline void add(MoveList* ml, int frm, int to, int flags) noexcept nogil:
    ml.moves[ml.n] = frm | (to << 6) | flags
    ml.n += 1


cdef inline void add_pawn(MoveList* ml, int frm, int to, bint noisy_only) noexcept nogil:
    # Promotions: all four pieces, or just the queen when only noisy moves are wanted.
    if to >= 56 or to < 8:
        add(ml, frm, to, QUEEN << 12)
        if not noisy_only:
            add(ml, frm, to, ROOK << 12)
            add(ml, frm, to, BISHOP << 12)
            add(ml, frm, to, KNIGHT << 12)
    else:
        add(ml, frm, to, 0)


cdef inline bint ep_is_legal(const Position* p, int frm) noexcept nogil:
    # En passant removes two pieces from a rank: the only move checked by playing it.
    cdef Position q = p[0]
    make_move(&q, frm | (p.ep << 6) | FLAG_EP)
    return not king_attacked(&q, p.side)


cdef int generate_moves(const Position* p, MoveList* ml, bint noisy_only) noexcept nogil:
    """Legal moves (all, or captures and queen promotions); returns their number."""
    cdef int us = p.side, them = p.side ^ 1
    cdef int ksq = lsb(p.bb[us][KING])
    cdef u64 own = p.occ[us], enemy = p.occ[them], occ = p.all
    cdef u64 checkers = attackers_to(p, ksq, occ) & enemy
    cdef u64 targets, b, pinned, snipers, between, mask, block, pawns, pin_line
    cdef int sq, to, t, fwd, capsq
    ml.n = 0
    targets = KING_ATT[ksq] & ~own
    if noisy_only:
        targets &= enemy
    b = targets
    while b:
        to = lsb(b)
        b &= b - 1
        if not (attackers_to(p, to, occ ^ bit(ksq)) & enemy):
            add(ml, ksq, to, 0)
    if checkers & (checkers - 1):
        return ml.n            # double check: only the king moves
    block = ~0ULL              # where a piece may go: anywhere, or between king and checker
    if checkers:
        block = BETWEEN[ksq][lsb(checkers)] | checkers
    mask = block & ~own
    if noisy_only:
        mask &= enemy
    # Pinned pieces: our single piece between the king and an enemy slider on its line.
    pinned = 0
    snipers = ((BISHOP_EMPTY[ksq] & (p.bb[them][BISHOP] | p.bb[them][QUEEN]))
               | (ROOK_EMPTY[ksq] & (p.bb[them][ROOK] | p.bb[them][QUEEN])))
    while snipers:
        sq = lsb(snipers)
        snipers &= snipers - 1
        between = BETWEEN[ksq][sq] & occ
        if between and not (between & (between - 1)) and (between & own):
            pinned |= between
    b = p.bb[us][KNIGHT] & ~pinned
    while b:
        sq = lsb(b)
        b &= b - 1
        add_targets(ml, sq, KNIGHT_ATT[sq] & mask)
    for t in range(BISHOP, KING):
        b = p.bb[us][t]
        while b:
            sq = lsb(b)
            b &= b - 1
            targets = 0
            if t != ROOK:
                targets = bishop_attacks(sq, occ)
            if t != BISHOP:
                targets |= rook_attacks(sq, occ)
            targets &= mask
            if pinned & bit(sq):
                targets &= LINE[ksq][sq]
            add_targets(ml, sq, targets)
    # Pawns, one by one: pushes, double pushes, captures, promotions, en passant.
    fwd = 8 if us == WHITE else -8
    pawns = p.bb[us][PAWN]
    while pawns:
        sq = lsb(pawns)
        pawns &= pawns - 1
        pin_line = LINE[ksq][sq] if pinned & bit(sq) else ~0ULL
        to = sq + fwd
        if not (occ & bit(to)):
            if block & pin_line & bit(to) and (not noisy_only or to >= 56 or to < 8):
                add_pawn(ml, sq, to, noisy_only)
            if not noisy_only and ((us == WHITE and sq < 16) or (us == BLACK and sq >= 48)):
                if not (occ & bit(to + fwd)) and block & pin_line & bit(to + fwd):
                    add(ml, sq, to + fwd, FLAG_DOUBLE)
        b = PAWN_ATT[us][sq] & enemy & mask & pin_line
        while b:
            to = lsb(b)
            b &= b - 1
            add_pawn(ml, sq, to, noisy_only)
        if p.ep >= 0 and PAWN_ATT[us][sq] & bit(p.ep):
            capsq = p.ep - fwd
            if (not (occ & bit(p.ep)) and (p.bb[them][PAWN] & bit(capsq))
                    and ep_is_legal(p, sq)):
                add(ml, sq, p.ep, FLAG_EP)
    if not checkers and not noisy_only and p.castling:
        add_castling(p, ml)
    return ml.n


cdef inline void add_targets(MoveList* ml, int frm, u64 targets) noexcept nogil:
    cdef int to
    while targets:
        to = lsb(targets)
        targets &= targets - 1
        add(ml, frm, to, 0)


cdef inline bint attacked_by(const Position* p, int sq, int colour) noexcept nogil:
    return (attackers_to(p, sq, p.all) & p.occ[colour]) != 0


cdef void add_castling(const Position* p, MoveList* ml) noexcept nogil:
    # Rights are kept clean (king and rook at home), so only emptiness and attacks matter.
    cdef int base = 0 if p.side == WHITE else 56
    cdef int them = p.side ^ 1
    cdef int k_right = 1 if p.side == WHITE else 4
    if (p.castling & k_right and not (p.all & (bit(base + 5) | bit(base + 6)))
            and not attacked_by(p, base + 5, them) and not attacked_by(p, base + 6, them)):
        add(ml, base + 4, base + 6, FLAG_CASTLE)
    if (p.castling & (k_right << 1) and not (p.all & (bit(base + 1) | bit(base + 2) | bit(base + 3)))
            and not attacked_by(p, base + 3, them) and not attacked_by(p, base + 2, them)):
        add(ml, base + 4, base + 2, FLAG_CASTLE)


# --- make ----------------------------------------------------------------------------------

cdef inline void put(Position* p, int colour, int t, int sq) noexcept nogil:
    p.bb[colour][t] |= bit(sq)
    p.occ[colour] |= bit(sq)
    p.board[sq] = t + 6 * colour
    p.key ^= Z_PIECE[colour][t][sq]


cdef inline void remove(Position* p, int colour, int t, int sq) noexcept nogil:
    p.bb[colour][t] &= ~bit(sq)
    p.occ[colour] &= ~bit(sq)
    p.board[sq] = EMPTY
    p.key ^= Z_PIECE[colour][t][sq]


cdef void make_move(Position* p, Move m) noexcept nogil:
    """Play a legal move in place (callers keep a copy to unmake)."""
    cdef int frm = m & 63, to = (m >> 6) & 63, promo = (m >> 12) & 7
    cdef int us = p.side, them = p.side ^ 1
    cdef int t = p.board[frm] - 6 * us
    cdef int captured = p.board[to]
    cdef int rights
    p.halfmove += 1
    if m & FLAG_EP:
        remove(p, them, PAWN, to - 8 if us == WHITE else to + 8)
        p.halfmove = 0
    elif captured != EMPTY:
        remove(p, them, captured - 6 * them, to)
        p.halfmove = 0
    remove(p, us, t, frm)
    put(p, us, promo if promo else t, to)
    if t == PAWN:
        p.halfmove = 0
    if m & FLAG_CASTLE:
        if to & 7 == 6:
            remove(p, us, ROOK, to + 1)
            put(p, us, ROOK, to - 1)
        else:
            remove(p, us, ROOK, to - 2)
            put(p, us, ROOK, to + 1)
    rights = p.castling & CASTLE_MASK[frm] & CASTLE_MASK[to]
    if rights != p.castling:
        p.key ^= Z_CASTLE[p.castling] ^ Z_CASTLE[rights]
        p.castling = rights
    p.ep = (frm + to) >> 1 if m & FLAG_DOUBLE else -1
    if us == BLACK:
        p.fullmove += 1
    p.side = them
    p.key ^= Z_TURN
    p.all = p.occ[0] | p.occ[1]


cdef void make_null(Position* p) noexcept nogil:
    p.ep = -1
    p.halfmove += 1
    if p.side == BLACK:
        p.fullmove += 1
    p.side ^= 1
    p.key ^= Z_TURN


cdef bint is_capture(const Position* p, Move m) noexcept nogil:
    return (m & FLAG_EP) != 0 or p.board[(m >> 6) & 63] != EMPTY


cdef int captured_type(const Position* p, Move m) noexcept nogil:
    """Type of the piece taken (PAWN for en passant), -1 for a quiet move."""
    cdef int c = p.board[(m >> 6) & 63]
    if m & FLAG_EP:
        return PAWN
    return -1 if c == EMPTY else c % 6


cdef bint gives_check(const Position* p, Move m) noexcept nogil:
    cdef Position q = p[0]
    make_move(&q, m)
    return in_check(&q)


# --- keys and rules ----------------------------------------------------------------------

cdef inline bint ep_capturer_adjacent(const Position* p) noexcept nogil:
    # Polyglot hashes the en passant file only if a pawn of the side to move stands beside
    # the pawn that just moved two squares; whether the capture is legal does not matter.
    if p.ep < 0:
        return False
    return (PAWN_ATT[p.side ^ 1][p.ep] & p.bb[p.side][PAWN]) != 0


cdef u64 full_key(const Position* p) noexcept nogil:
    if ep_capturer_adjacent(p):
        return p.key ^ Z_EP[p.ep & 7]
    return p.key


cdef bint has_legal_ep(const Position* p) noexcept nogil:
    cdef u64 capturers
    cdef int fwd = 8 if p.side == WHITE else -8
    if not ep_capturer_adjacent(p) or p.all & bit(p.ep):
        return False
    if not (p.bb[p.side ^ 1][PAWN] & bit(p.ep - fwd)):
        return False
    capturers = PAWN_ATT[p.side ^ 1][p.ep] & p.bb[p.side][PAWN]
    while capturers:
        if ep_is_legal(p, lsb(capturers)):
            return True
        capturers &= capturers - 1
    return False


cdef u64 repetition_key(const Position* p) noexcept nogil:
    """Key for repetitions: en passant counts only when legal, as in python-chess."""
    if has_legal_ep(p):
        return p.key ^ Z_EP[p.ep & 7]
    return p.key


cdef bint side_insufficient(const Position* p, int c) noexcept nogil:
    # python-chess Board.has_insufficient_material, rule for rule.
    cdef int o = c ^ 1
    cdef u64 bishops
    if p.bb[c][PAWN] | p.bb[c][ROOK] | p.bb[c][QUEEN]:
        return False
    if p.bb[c][KNIGHT]:
        return popcount(p.occ[c]) <= 2 and not (p.occ[o] & ~p.bb[o][KING] & ~p.bb[o][QUEEN])
    bishops = p.bb[0][BISHOP] | p.bb[1][BISHOP]
    if p.bb[c][BISHOP]:
        return (((bishops & DARK_SQUARES) == 0 or (bishops & LIGHT_SQUARES) == 0)
                and not (p.bb[0][PAWN] | p.bb[1][PAWN])
                and not (p.bb[0][KNIGHT] | p.bb[1][KNIGHT]))
    return True


cdef bint insufficient_material(const Position* p) noexcept nogil:
    return side_insufficient(p, WHITE) and side_insufficient(p, BLACK)


# --- static exchange evaluation ------------------------------------------------------------

cdef int see(const Position* p, Move m) noexcept nogil:
    """Material won by ``m`` and the best sequence of recaptures on its square (swap list)."""
    cdef int gain[40]
    cdef int frm = m & 63, to = (m >> 6) & 63, promo = (m >> 12) & 7
    cdef int d = 0, side, t, on_square
    cdef u64 occ, attackers, mine, b
    cdef u64 diag = p.bb[0][BISHOP] | p.bb[0][QUEEN] | p.bb[1][BISHOP] | p.bb[1][QUEEN]
    cdef u64 orth = p.bb[0][ROOK] | p.bb[0][QUEEN] | p.bb[1][ROOK] | p.bb[1][QUEEN]
    if m & FLAG_CASTLE:
        return 0
    t = captured_type(p, m)
    gain[0] = SEE_VALUE[t] if t >= 0 else 0
    on_square = p.board[frm] % 6
    if promo:
        gain[0] += SEE_VALUE[promo] - SEE_VALUE[PAWN]
        on_square = promo
    occ = p.all ^ bit(frm)
    if m & FLAG_EP:
        occ ^= bit(to - 8 if p.side == WHITE else to + 8)
    attackers = attackers_to(p, to, occ) & occ
    side = p.side ^ 1
    while d < 38:
        mine = attackers & p.occ[side]
        if not mine:
            break
        for t in range(6):
            b = mine & p.bb[side][t]
            if b:
                break
        if t == KING and attackers & p.occ[side ^ 1]:
            break              # the king may not recapture into a defended square
        d += 1
        gain[d] = SEE_VALUE[on_square] - gain[d - 1]
        occ ^= b & (~b + 1)
        attackers = (attackers | (bishop_attacks(to, occ) & diag) | (rook_attacks(to, occ) & orth)) & occ
        on_square = t
        side ^= 1
    while d > 0:
        gain[d - 1] = -max(-gain[d - 1], gain[d])
        d -= 1
    return gain[0]


# --- perft ---------------------------------------------------------------------------------

cdef u64 perft(Position* p, int depth) noexcept nogil:
    """Leaf count, making (and unmaking, by copy) every move down to the leaves."""
    cdef MoveList ml
    cdef Position child
    cdef u64 nodes = 0
    cdef int i
    if depth == 0:
        return 1
    generate_moves(p, &ml, False)
    for i in range(ml.n):
        child = p[0]
        make_move(&child, ml.moves[i])
        nodes += perft(&child, depth - 1)
    return nodes


# --- FEN -----------------------------------------------------------------------------------

cdef void clear(Position* p) noexcept nogil:
    memset(p, 0, sizeof(Position))
    memset(p.board, EMPTY, 64)
    p.ep = -1
    p.fullmove = 1


cdef void set_start(Position* p) noexcept nogil:
    cdef int f
    cdef int back[8]
    back[:] = [ROOK, KNIGHT, BISHOP, QUEEN, KING, BISHOP, KNIGHT, ROOK]
    clear(p)
    for f in range(8):
        put(p, WHITE, back[f], f)
        put(p, WHITE, PAWN, 8 + f)
        put(p, BLACK, PAWN, 48 + f)
        put(p, BLACK, back[f], 56 + f)
    p.castling = 15
    p.key ^= Z_CASTLE[15] ^ Z_TURN
    p.all = p.occ[0] | p.occ[1]


cdef void clean_castling(Position* p) noexcept nogil:
    # As python-chess: a right needs the king on e1/e8 and the rook on its corner.
    cdef int rights = p.castling
    if not (p.bb[WHITE][KING] & bit(4)):
        rights &= ~3
    if not (p.bb[BLACK][KING] & bit(60)):
        rights &= ~12
    if not (p.bb[WHITE][ROOK] & bit(7)):
        rights &= ~1
    if not (p.bb[WHITE][ROOK] & bit(0)):
        rights &= ~2
    if not (p.bb[BLACK][ROOK] & bit(63)):
        rights &= ~4
    if not (p.bb[BLACK][ROOK] & bit(56)):
        rights &= ~8
    p.castling = rights


cdef int finish_setup(Position* p, str what) except -1:
    if popcount(p.bb[WHITE][KING]) != 1 or popcount(p.bb[BLACK][KING]) != 1:
        raise InvalidFenError(f"need exactly one king per side: {what!r}")
    p.all = p.occ[0] | p.occ[1]
    clean_castling(p)
    p.key ^= Z_CASTLE[p.castling]
    if p.side == WHITE:
        p.key ^= Z_TURN
    return 0


cdef int square_index(str name) except -2:
    if len(name) != 2 or name[0] not in "abcdefgh" or name[1] not in "12345678":
        return -1
    return (ord(name[1]) - ord("1")) * 8 + ord(name[0]) - ord("a")


cdef int set_fen(Position* p, str fen) except -1:
    """Set up from a FEN with 1 to 6 fields (missing ones default as in python-chess)."""
    cdef list parts = fen.split()
    cdef int rank = 7, file = 0, i
    cdef Py_UCS4 ch
    clear(p)
    if not parts or len(parts) > 6:
        raise InvalidFenError(f"expected 1 to 6 fields in fen: {fen!r}")
    for ch in parts[0]:
        if ch == "/":
            if file != 8 or rank == 0:
                raise InvalidFenError(f"bad rank in fen: {fen!r}")
            rank -= 1
            file = 0
        elif ch in "12345678":
            file += ord(ch) - ord("0")
            if file > 8:
                raise InvalidFenError(f"rank too long in fen: {fen!r}")
        else:
            i = FEN_PIECES.find(ch)
            if i < 0 or file > 7:
                raise InvalidFenError(f"bad board in fen: {fen!r}")
            put(p, 0 if i < 6 else 1, i % 6, rank * 8 + file)
            file += 1
    if rank != 0 or file != 8:
        raise InvalidFenError(f"board needs 8 ranks of 8 squares in fen: {fen!r}")
    turn = parts[1] if len(parts) > 1 else "w"
    if turn not in ("w", "b"):
        raise InvalidFenError(f"expected 'w' or 'b' for turn in fen: {fen!r}")
    p.side = WHITE if turn == "w" else BLACK
    castling = parts[2] if len(parts) > 2 else "-"
    if castling != "-":
        for ch in castling:
            i = "KQkq".find(ch)
            if i < 0 or p.castling & (1 << i):
                raise InvalidFenError(f"bad castling field in fen: {fen!r}")
            p.castling |= 1 << i
    ep = parts[3] if len(parts) > 3 else "-"
    if ep != "-":
        p.ep = square_index(ep)
        if p.ep < 0 or (p.ep >> 3) not in (2, 5):
            raise InvalidFenError(f"bad en passant square in fen: {fen!r}")
    try:
        p.halfmove = int(parts[4]) if len(parts) > 4 else 0
        p.fullmove = int(parts[5]) if len(parts) > 5 else 1
    except ValueError:
        raise InvalidFenError(f"bad move counters in fen: {fen!r}") from None
    if p.halfmove < 0 or p.fullmove < 0:
        raise InvalidFenError(f"negative move counters in fen: {fen!r}")
    p.fullmove = max(p.fullmove, 1)
    finish_setup(p, fen)
    return 0


cdef int write_fen(const Position* p, unsigned char* buf) noexcept nogil:
    """Write python-chess ``board.epd()`` (ep only if legal) into ``buf`` (>= 90 bytes);
    returns its length."""
    return write_epd(p.board, p.side, p.castling, p.ep if has_legal_ep(p) else -1, buf)


cdef int write_epd(const unsigned char* board, int side, int castling, int ep,
                   unsigned char* buf) noexcept nogil:
    """The four FEN fields of a board (``Position.board``'s codes), the side to move, the
    castling rights (1 K, 2 Q, 4 k, 8 q) and the en passant square (-1: none), as python-chess
    writes them, into ``buf`` (>= 90 bytes); returns their length."""
    cdef int n = 0, rank, file, empty, c
    for rank in range(7, -1, -1):
        empty = 0
        for file in range(8):
            c = board[rank * 8 + file]
            if c == EMPTY:
                empty += 1
            else:
                if empty:
                    buf[n] = 48 + empty
                    n += 1
                    empty = 0
                buf[n] = b"PNBRQKpnbrqk"[c]
                n += 1
        if empty:
            buf[n] = 48 + empty
            n += 1
        if rank:
            buf[n] = b'/'
            n += 1
    buf[n] = b' '
    buf[n + 1] = b'w' if side == WHITE else b'b'
    buf[n + 2] = b' '
    n += 3
    if not castling:
        buf[n] = b'-'
        n += 1
    for c in range(4):
        if castling & (1 << c):
            buf[n] = b"KQkq"[c]
            n += 1
    buf[n] = b' '
    n += 1
    if ep >= 0:
        buf[n] = 97 + (ep & 7)
        buf[n + 1] = 49 + (ep >> 3)
        n += 2
    else:
        buf[n] = b'-'
        n += 1
    return n


cdef str fen_of(const Position* p, bint full):
    """python-chess ``board.fen()`` (full) or ``board.epd()``: ep only if legal."""
    cdef unsigned char buf[100]
    cdef int n = write_fen(p, buf)
    text = (<char*>buf)[:n].decode("ascii")
    if full:
        return f"{text} {p.halfmove} {p.fullmove}"
    return text


# FEN_* codes of set_fen_bytes, and the reason each stands for (as set_fen words it).
FEN_REASONS = ("", "expected 1 to 6 fields in fen", "bad board in fen",
               "board needs 8 ranks of 8 squares in fen", "expected 'w' or 'b' for turn in fen",
               "bad castling field in fen", "bad en passant square in fen",
               "bad move counters in fen", "need exactly one king per side")


cdef inline bint is_space(unsigned char ch) noexcept nogil:
    return ch == 32 or (9 <= ch <= 13)


cdef int parse_counter(const unsigned char* s, Py_ssize_t a, Py_ssize_t b,
                       int* out) noexcept nogil:
    """A move counter as Python's int() reads it (optional sign, digits); -1 when it is not
    one, -2 when it is negative."""
    cdef long long value = 0
    cdef bint negative = False
    if a < b and (s[a] == 43 or s[a] == 45):
        negative = s[a] == 45
        a += 1
    if a == b:
        return -1
    while a < b:
        if not 48 <= s[a] <= 57:
            return -1
        value = value * 10 + s[a] - 48
        if value > 1000000000:
            return -1
        a += 1
    if negative and value:
        return -2
    out[0] = <int>value
    return 0


cdef int set_fen_bytes(Position* p, const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """``set_fen`` on ASCII bytes without the GIL: 0, or the FEN_* code of what is wrong
    (FEN_REASONS words it)."""
    cdef Py_ssize_t starts[7]
    cdef Py_ssize_t ends[7]
    cdef int fields = 0, rank = 7, file = 0, i, sq
    cdef Py_ssize_t k = 0
    cdef unsigned char ch
    clear(p)
    while k < n:
        while k < n and is_space(s[k]):
            k += 1
        if k == n:
            break
        if fields == 6:
            return FEN_FIELDS
        starts[fields] = k
        while k < n and not is_space(s[k]):
            k += 1
        ends[fields] = k
        fields += 1
    if fields == 0:
        return FEN_FIELDS
    for k in range(starts[0], ends[0]):
        ch = s[k]
        if ch == 47:
            if file != 8 or rank == 0:
                return FEN_BOARD
            rank -= 1
            file = 0
        elif 49 <= ch <= 56:
            file += ch - 48
            if file > 8:
                return FEN_BOARD
        else:
            i = piece_index(ch)
            if i < 0 or file > 7:
                return FEN_BOARD
            put(p, 0 if i < 6 else 1, i % 6, rank * 8 + file)
            file += 1
    if rank != 0 or file != 8:
        return FEN_RANKS
    if fields > 1:
        if ends[1] - starts[1] != 1 or (s[starts[1]] != 119 and s[starts[1]] != 98):
            return FEN_TURN
        p.side = WHITE if s[starts[1]] == 119 else BLACK
    if fields > 2 and not (ends[2] - starts[2] == 1 and s[starts[2]] == 45):
        for k in range(starts[2], ends[2]):
            i = castling_index(s[k])
            if i < 0 or p.castling & (1 << i):
                return FEN_CASTLING
            p.castling |= 1 << i
    if fields > 3 and not (ends[3] - starts[3] == 1 and s[starts[3]] == 45):
        if ends[3] - starts[3] != 2:
            return FEN_EP
        file = s[starts[3]] - 97
        rank = s[starts[3] + 1] - 49
        if not 0 <= file <= 7 or rank not in (2, 5):
            return FEN_EP
        p.ep = rank * 8 + file
    if fields > 4:
        i = parse_counter(s, starts[4], ends[4], &p.halfmove)
        if i:
            return FEN_COUNTERS
    if fields > 5:
        i = parse_counter(s, starts[5], ends[5], &p.fullmove)
        if i:
            return FEN_COUNTERS
        p.fullmove = max(p.fullmove, 1)
    if popcount(p.bb[WHITE][KING]) != 1 or popcount(p.bb[BLACK][KING]) != 1:
        return FEN_KINGS
    p.all = p.occ[0] | p.occ[1]
    clean_castling(p)
    p.key ^= Z_CASTLE[p.castling]
    if p.side == WHITE:
        p.key ^= Z_TURN
    return FEN_OK


cdef inline int piece_index(unsigned char ch) noexcept nogil:
    cdef const char* pieces = b"PNBRQKpnbrqk"
    cdef int i
    for i in range(12):
        if pieces[i] == ch:
            return i
    return -1


cdef inline int castling_index(unsigned char ch) noexcept nogil:
    if ch == 75:
        return 0
    if ch == 81:
        return 1
    if ch == 107:
        return 2
    if ch == 113:
        return 3
    return -1


# --- UCI and SAN ---------------------------------------------------------------------------

# san_move's results, worded (the words python-chess's errors use).
SAN_ERRORS = ("", "invalid", "illegal", "ambiguous")

cdef enum:
    SAN_UNLISTED = 4    # found_san leaves the token to listed_san


cdef int write_uci(Move m, char* buf) noexcept nogil:
    """A move's UCI into ``buf`` (>= 5 bytes); returns its length."""
    cdef int frm = m & 63, to = (m >> 6) & 63, promo = (m >> 12) & 7
    buf[0] = 97 + (frm & 7)
    buf[1] = 49 + (frm >> 3)
    buf[2] = 97 + (to & 7)
    buf[3] = 49 + (to >> 3)
    if promo:
        buf[4] = b"pnbrqk"[promo]
        return 5
    return 4


cdef str uci_of(Move m):
    cdef char buf[5]
    cdef int n = write_uci(m, buf)
    return buf[:n].decode("ascii")


cdef Move find_move(const MoveList* legal, int frm, int to, int promo) noexcept nogil:
    cdef int i
    cdef Move m
    for i in range(legal.n):
        m = legal.moves[i]
        if m & 0x7FFF == frm | (to << 6) | (promo << 12):
            return m
    return NO_MOVE


cdef Move parse_uci(const Position* p, str uci) except -1:
    cdef MoveList legal
    cdef int frm, to, promo = 0
    if len(uci) not in (4, 5):
        raise IllegalMoveError(f"invalid uci {uci!r}")
    frm = square_index(uci[:2])
    to = square_index(uci[2:4])
    if len(uci) == 5:
        promo = "pnbrqk".find(uci[4])
        if promo <= 0:
            raise IllegalMoveError(f"invalid uci {uci!r}")
    if frm < 0 or to < 0:
        raise IllegalMoveError(f"invalid uci {uci!r}")
    generate_moves(p, &legal, False)
    if p.board[frm] == KING + 6 * p.side and p.board[to] == ROOK + 6 * p.side:
        to = frm + 2 if to > frm else frm - 2   # king takes own rook: castling, as python-chess
    cdef Move m = find_move(&legal, frm, to, promo)
    if m == NO_MOVE:
        raise IllegalMoveError(f"illegal uci {uci!r} in {fen_of(p, True)}")
    return m


cdef struct SanParts:          # a SAN token read, before the position is asked
    int castle          # 0, or the king's target file: 6 (O-O) or 2 (O-O-O)
    int piece           # the piece letter's type, -1 when none is given
    int from_file       # -1 when not given
    int from_rank
    int to
    int promo


cdef int read_san(const char* s, int n, SanParts* sp) noexcept nogil:
    """A SAN token's parts, read as leniently as python-chess ``Board.parse_san`` (``0-0``,
    ``e7e8q``, ``Nb1-c3``; no check mark): SAN_OK, or SAN_INVALID."""
    cdef int i = 0
    cdef char c
    sp.castle = 0
    sp.piece = -1
    sp.from_file = -1
    sp.from_rank = -1
    sp.to = -1
    sp.promo = 0
    if (n == 3 and (memcmp(s, b"O-O", 3) == 0 or memcmp(s, b"0-0", 3) == 0)) or (
            n == 5 and (memcmp(s, b"O-O-O", 5) == 0 or memcmp(s, b"0-0-0", 5) == 0)):
        sp.castle = 6 if n == 3 else 2
        return SAN_OK
    if n >= 3:
        c = s[n - 1]
        if (c == b'n' or c == b'b' or c == b'r' or c == b'q' or c == b'k' or c == b'N'
                or c == b'B' or c == b'R' or c == b'Q' or c == b'K') and (
                s[n - 2] == b'=' or is_rank(s[n - 2])):
            if c == b'n' or c == b'N':
                sp.promo = 1
            elif c == b'b' or c == b'B':
                sp.promo = 2
            elif c == b'r' or c == b'R':
                sp.promo = 3
            elif c == b'q' or c == b'Q':
                sp.promo = 4
            else:
                sp.promo = 5
            n -= 1
            if s[n - 1] == b'=':
                n -= 1
    if n < 2 or not is_file(s[n - 2]) or not is_rank(s[n - 1]):
        return SAN_INVALID
    sp.to = (s[n - 1] - 49) * 8 + s[n - 2] - 97
    n -= 2
    if n and (s[n - 1] == b'-' or s[n - 1] == b'x'):
        n -= 1
    if i < n:
        c = s[i]
        if c == b'N':
            sp.piece = 1
        elif c == b'B':
            sp.piece = 2
        elif c == b'R':
            sp.piece = 3
        elif c == b'Q':
            sp.piece = 4
        elif c == b'K':
            sp.piece = 5
        if sp.piece >= 0:
            i += 1
    if i < n and is_file(s[i]):
        sp.from_file = s[i] - 97
        i += 1
    if i < n and is_rank(s[i]):
        sp.from_rank = s[i] - 49
        i += 1
    if i != n:
        return SAN_INVALID
    return SAN_OK


cdef int listed_san(const Position* p, const SanParts* sp, const MoveList* legal,
                    Move* out) noexcept nogil:
    """The move of a read SAN token among the ``legal`` moves: SAN_OK and the move, or why
    not."""
    cdef int i, to = sp.to, promo = sp.promo, piece = sp.piece, found = 0
    cdef int from_file = sp.from_file, from_rank = sp.from_rank
    cdef Move m, match = NO_MOVE
    if sp.castle:
        to = sp.castle + (0 if p.side == WHITE else 56)
        for i in range(legal.n):
            if legal.moves[i] & FLAG_CASTLE and (legal.moves[i] >> 6) & 63 == to:
                out[0] = legal.moves[i]
                return SAN_OK
        return SAN_ILLEGAL
    if piece < 0 and from_file >= 0 and from_rank >= 0:
        for i in range(legal.n):
            m = legal.moves[i]
            if m & 0x7FFF == (from_rank * 8 + from_file) | (to << 6) | (promo << 12):
                out[0] = m
                return SAN_OK
        return SAN_ILLEGAL
    if piece < 0:
        piece = PAWN
        if from_file < 0:
            from_file = to & 7
    for i in range(legal.n):
        m = legal.moves[i]
        if ((m >> 6) & 63 != to or (m >> 12) & 7 != promo or p.board[m & 63] % 6 != piece
                or (from_file >= 0 and m & 7 != from_file)
                or (from_rank >= 0 and (m & 63) >> 3 != from_rank)):
            continue
        if found:
            return SAN_AMBIGUOUS
        found = 1
        match = m
    if not found:
        return SAN_ILLEGAL
    out[0] = match
    return SAN_OK


cdef u64 listed_others(const Position* p, Move m, const MoveList* legal) noexcept nogil:
    """The squares of the other ``legal`` moves of the moving piece's type to its target."""
    cdef int frm = m & 63, to = (m >> 6) & 63, t = p.board[m & 63] % 6, i
    cdef u64 others = 0
    cdef Move o
    for i in range(legal.n):
        o = legal.moves[i]
        if (o >> 6) & 63 == to and o & 63 != frm and p.board[o & 63] % 6 == t:
            others |= bit(o & 63)
    return others


cdef inline bint is_legal(const Position* p, Move m) noexcept nogil:
    """Whether a pseudo-legal move (not castling) leaves its side's king unattacked: played
    on a copy, as the core checks en passant."""
    cdef Position q = p[0]
    make_move(&q, m)
    return (attackers_to(&q, king_square(&q, p.side), q.all) & q.occ[p.side ^ 1]) == 0


cdef int pawn_san(const Position* p, const SanParts* sp, Move* out) noexcept nogil:
    """:func:`found_san` for a pawn move: its one candidate square, checked."""
    cdef int us = p.side, to = sp.to, fwd = 8 if p.side == WHITE else -8
    cdef int from_file = sp.from_file if sp.from_file >= 0 else to & 7, frm, flags = 0
    if (sp.promo != 0) != (to >= 56 or to < 8) or sp.promo == KING:
        return SAN_ILLEGAL    # a promotion is to the last rank, to N, B, R or Q; nothing else is
    if from_file == to & 7:                         # a push, one or two squares
        frm = to - fwd
        if p.all & bit(to) or frm < 0 or frm > 63:
            return SAN_ILLEGAL
        if not p.bb[us][PAWN] & bit(frm):
            if p.all & bit(frm):
                return SAN_ILLEGAL
            frm -= fwd
            if (frm < 0 or frm > 63 or not p.bb[us][PAWN] & bit(frm)
                    or not ((us == WHITE and frm < 16) or (us == BLACK and frm >= 48))):
                return SAN_ILLEGAL
            flags = FLAG_DOUBLE
    else:                                           # a capture, from the file given
        if from_file - (to & 7) != 1 and (to & 7) - from_file != 1:
            return SAN_ILLEGAL
        frm = to - fwd - (to & 7) + from_file
        if frm < 0 or frm > 63 or not p.bb[us][PAWN] & bit(frm):
            return SAN_ILLEGAL
        if not p.occ[us ^ 1] & bit(to):
            if to != p.ep or not p.bb[us ^ 1][PAWN] & bit(to - fwd):
                return SAN_ILLEGAL
            flags = FLAG_EP
    if sp.from_rank >= 0 and frm >> 3 != sp.from_rank:
        return SAN_ILLEGAL
    out[0] = frm | (to << 6) | (sp.promo << 12) | flags
    return SAN_OK if is_legal(p, out[0]) else SAN_ILLEGAL


cdef int found_san(const Position* p, const SanParts* sp, Move* out, u64* others) noexcept nogil:
    """:func:`listed_san` without the legal moves: only the pieces of the type named that
    reach the target are tried, each played on a copy to see that it is legal; ``others``:
    the squares of the other legal ones (for the SAN written back). SAN_UNLISTED for the tokens
    it leaves to :func:`listed_san`: castling, a from-square without a piece letter, and a
    king move to a castling square while its side may castle (``Kg1`` can mean O-O)."""
    cdef int us = p.side, to = sp.to, piece = sp.piece, frm, base, found = 0
    cdef u64 candidates, legal_from = 0
    cdef Move m, match = NO_MOVE
    if sp.castle or (piece < 0 and sp.from_file >= 0 and sp.from_rank >= 0):
        return SAN_UNLISTED
    base = 0 if us == WHITE else 56
    if piece == KING and p.castling & (3 if us == WHITE else 12) and (
            to == base + 6 or to == base + 2):
        return SAN_UNLISTED
    if p.occ[us] & bit(to):
        return SAN_ILLEGAL
    if piece < 0:
        others[0] = 0
        return pawn_san(p, sp, out)
    if sp.promo:
        return SAN_ILLEGAL
    if piece == KNIGHT:
        candidates = knight_attacks(to)
    elif piece == BISHOP:
        candidates = bishop_attacks(to, p.all)
    elif piece == ROOK:
        candidates = rook_attacks(to, p.all)
    elif piece == QUEEN:
        candidates = bishop_attacks(to, p.all) | rook_attacks(to, p.all)
    else:
        candidates = king_attacks(to)
    candidates &= p.bb[us][piece]
    while candidates:
        frm = lsb(candidates)
        candidates &= candidates - 1
        m = frm | (to << 6)
        if not is_legal(p, m):
            continue
        legal_from |= bit(frm)
        if (sp.from_file >= 0 and frm & 7 != sp.from_file) or (
                sp.from_rank >= 0 and frm >> 3 != sp.from_rank):
            continue
        if found:
            return SAN_AMBIGUOUS
        found = 1
        match = m
    if not found:
        return SAN_ILLEGAL
    out[0] = match
    others[0] = legal_from & ~bit(match & 63)
    return SAN_OK


cdef int write_san(const Position* p, Move m, u64 others, char* buf) noexcept nogil:
    """SAN without the check mark, disambiguated exactly as python-chess does it (``others``:
    the squares of the other legal moves of the piece's type to its target, as
    :func:`listed_others` or :func:`san_move` give them) into ``buf`` (>= 8 bytes); returns
    its length."""
    cdef int frm = m & 63, to = (m >> 6) & 63, promo = (m >> 12) & 7
    cdef int t = p.board[frm] % 6, n = 0
    cdef bint row = False, column = False
    if m & FLAG_CASTLE:
        if to & 7 == 6:
            memcpy(buf, b"O-O", 3)
            return 3
        memcpy(buf, b"O-O-O", 5)
        return 5
    if t == PAWN:
        if is_capture(p, m):
            buf[0] = 97 + (frm & 7)
            buf[1] = b'x'
            n = 2
    else:
        buf[0] = b"PNBRQK"[t]
        n = 1
        if others:
            if others & (RANK_1 << (frm & 56)):
                column = True
            if others & (FILE_A << (frm & 7)):
                row = True
            else:
                column = True
            if column:
                buf[n] = 97 + (frm & 7)
                n += 1
            if row:
                buf[n] = 49 + (frm >> 3)
                n += 1
        if is_capture(p, m):
            buf[n] = b'x'
            n += 1
    buf[n] = 97 + (to & 7)
    buf[n + 1] = 49 + (to >> 3)
    n += 2
    if promo:
        buf[n] = b'='
        buf[n + 1] = b"PNBRQK"[promo]
        n += 2
    return n


cdef int san_move(const Position* p, const char* s, int n, MoveList* legal, Move* out,
                  u64* others) noexcept nogil:
    """The move a SAN token (no check mark) names: SAN_OK, the move and ``others`` (for
    :func:`write_san`), or why not. Only the pieces of the type named that reach the target
    are tried (:func:`found_san`); ``legal`` is generated for the few tokens that need every
    legal move (castling and the like), else left as it was."""
    cdef SanParts sp
    cdef int err = read_san(s, n, &sp)
    if err == SAN_OK:
        err = found_san(p, &sp, out, others)
        if err == SAN_UNLISTED:
            generate_moves(p, legal, False)
            err = listed_san(p, &sp, legal, out)
            if err == SAN_OK:
                others[0] = listed_others(p, out[0], legal)
    return err


cdef char check_mark(const Position* p, MoveList* replies) noexcept nogil:
    """The SAN check mark of the move that led to ``p``: ``#``, ``+`` or 0 (no check); the
    legal ``replies`` are generated only in check, to tell mate."""
    if not in_check(p):
        return 0
    return b'#' if generate_moves(p, replies, False) == 0 else b'+'


cdef str san_of(const Position* p, Move m, const MoveList* legal):
    cdef char buf[12]
    cdef Position q = p[0]
    cdef MoveList replies
    cdef int n = write_san(p, m, listed_others(p, m, legal), buf)
    make_move(&q, m)
    cdef char mark = check_mark(&q, &replies)
    if mark:
        buf[n] = mark
        n += 1
    return buf[:n].decode("ascii")


cdef bytes san_bytes(str san):
    """A SAN string without its "+#!?" suffixes, as bytes for :func:`read_san`: None when it
    is not ASCII (no SAN is)."""
    cdef str s = san.rstrip("+#!?")
    return s.encode("ascii") if s.isascii() else None


cdef Move parse_san(const Position* p, str san, const MoveList* legal) except -1:
    """A SAN move, read as leniently as python-chess ``Board.parse_san`` (and "!?" suffixes)."""
    cdef bytes text = san_bytes(san)
    cdef SanParts sp
    cdef Move m = NO_MOVE
    cdef int err = SAN_INVALID if text is None else read_san(text, len(text), &sp)
    if err == SAN_OK:
        err = listed_san(p, &sp, legal, &m)
    if err != SAN_OK:
        raise IllegalMoveError(f"{SAN_ERRORS[err]} san {san!r} in {fen_of(p, True)}")
    return m


# --- python-chess boundary -----------------------------------------------------------------

cdef int set_from_board(Position* p, object board) except -1:
    """Copy a chess.Board's current position (not its history)."""
    cdef int c, t, sq
    cdef u64 b
    if board.chess960:
        raise InvalidFenError(f"chess960 positions are not supported: {board.fen()!r}")
    clear(p)
    masks = (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings)
    for c in range(2):
        co = board.occupied_co[c == 0]
        for t in range(6):
            b = masks[t] & co
            while b:
                sq = lsb(b)
                b &= b - 1
                put(p, c, t, sq)
    p.side = WHITE if board.turn else BLACK
    rights = board.castling_rights
    p.castling = ((1 if rights & chess.BB_H1 else 0) | (2 if rights & chess.BB_A1 else 0)
                  | (4 if rights & chess.BB_H8 else 0) | (8 if rights & chess.BB_A8 else 0))
    p.ep = -1 if board.ep_square is None else board.ep_square
    p.halfmove = board.halfmove_clock
    p.fullmove = board.fullmove_number
    finish_setup(p, board.fen())
    return 0


cdef Move from_chess_move(const Position* p, object move) except -1:
    cdef MoveList legal
    generate_moves(p, &legal, False)
    cdef int promo = (move.promotion - 1) if move.promotion else 0
    cdef Move m = find_move(&legal, move.from_square, move.to_square, promo)
    if m == NO_MOVE:
        raise IllegalMoveError(f"illegal move {move.uci()!r} in {fen_of(p, True)}")
    return m


cdef object to_chess_move(Move m):
    cdef int promo = (m >> 12) & 7
    return chess.Move(m & 63, (m >> 6) & 63, promo + 1 if promo else None)


# --- Python API ----------------------------------------------------------------------------

cdef int setup(Position* p, object fen) except -1:
    if fen is None:
        set_start(p)
    elif isinstance(fen, chess.Board):
        set_from_board(p, fen)
    elif isinstance(fen, str):
        set_fen(p, fen)
    else:
        raise TypeError(f"expected a FEN, a chess.Board or None, got {fen!r}")
    return 0


NULL_SANS = frozenset(["--", "Z0", "0000", "@@@@"])


def replay_san(fen, sans):
    """Replay SAN moves from ``fen`` (None: the start position); see engines.core."""
    cdef Position pos
    cdef MoveList legal
    cdef Move m
    cdef u64 others
    cdef bytes text
    cdef char buf[12]
    cdef char mark
    cdef int ply, n, err
    setup(&pos, fen)
    keys = [full_key(&pos)]
    fens = [fen_of(&pos, False)]
    ucis = []
    sans_out = []
    error = None
    for ply, san in enumerate(sans):
        if san in NULL_SANS:
            # A null move (python-chess reads these too): pass, as Board.push(Move.null()).
            make_null(&pos)
            ucis.append("0000")
            sans_out.append("--")
            keys.append(full_key(&pos))
            fens.append(fen_of(&pos, False))
            continue
        text = san_bytes(san)
        err = SAN_INVALID if text is None else san_move(&pos, text, len(text), &legal, &m,
                                                         &others)
        if err != SAN_OK:
            error = (ply, f"{SAN_ERRORS[err]} san {san!r} in {fen_of(&pos, True)}")
            break
        n = write_san(&pos, m, others, buf)
        ucis.append(uci_of(m))
        make_move(&pos, m)
        mark = check_mark(&pos, &legal)
        if mark:
            buf[n] = mark
            n += 1
        sans_out.append(buf[:n].decode("ascii"))
        keys.append(full_key(&pos))
        fens.append(fen_of(&pos, False))
    return keys, fens, ucis, sans_out, error


def position_key(fen) -> int:
    """Polyglot Zobrist key of a FEN (or chess.Board), equal to chess.polyglot.zobrist_hash."""
    cdef Position pos
    setup(&pos, fen)
    return full_key(&pos)


def normalise_fen(fen) -> str:
    """The 4-field FEN python-chess ``board.epd()`` writes for this position."""
    cdef Position pos
    setup(&pos, fen)
    return fen_of(&pos, False)


def perft_count(fen, int depth) -> int:
    """Leaves of the legal move tree ``depth`` plies deep (every move made and unmade)."""
    cdef Position pos
    if depth < 0:
        raise ValueError(f"perft depth must be >= 0, got {depth}")
    setup(&pos, fen)
    with nogil:
        nodes = perft(&pos, depth)
    return nodes


def perft_divide(fen, int depth) -> dict:
    """Perft split by root move: {uci: leaves}."""
    cdef Position pos, child
    cdef MoveList ml
    cdef int i
    if depth < 1:
        raise ValueError(f"perft --divide needs depth >= 1, got {depth}")
    setup(&pos, fen)
    generate_moves(&pos, &ml, False)
    result = {}
    for i in range(ml.n):
        child = pos
        make_move(&child, ml.moves[i])
        result[uci_of(ml.moves[i])] = perft(&child, depth - 1)
    return result


cdef class XorShift:
    """xorshift64*: a small deterministic generator for playouts."""
    cdef u64 state

    def __init__(self, u64 seed):
        self.state = seed * 0x9E3779B97F4A7C15ULL + 1

    cdef inline u64 next(self) noexcept:
        self.state ^= self.state >> 12
        self.state ^= self.state << 25
        self.state ^= self.state >> 27
        return self.state * 2685821657736338717ULL


cdef int game_status(const Position* p, int n_legal, const u64* history, int plies) noexcept nogil:
    """0 ongoing, 1 checkmate, 2 draw, as python-chess ``is_game_over()`` (no claims)."""
    cdef int i, count = 1
    cdef u64 key
    if n_legal == 0:
        return 1 if in_check(p) else 2
    if insufficient_material(p) or p.halfmove >= 150:
        return 2
    if p.halfmove >= 8:
        key = history[plies]
        i = plies - 2
        while i >= 0 and i >= plies - p.halfmove:
            if history[i] == key:
                count += 1
            i -= 2
        if count >= 5:
            return 2
    return 0


def random_playouts(int games, u64 seed=1, fen=None) -> dict:
    """Play uniformly random legal moves to the end of each game; counts results and plies.

    The end of a game is python-chess ``Board.is_game_over()``: mate, stalemate, insufficient
    material, the 75-move rule or fivefold repetition.
    """
    cdef Position start, pos
    cdef MoveList ml
    cdef XorShift rng = XorShift(seed)
    cdef u64 history[MAX_GAME_PLIES]
    cdef int g, plies, status
    cdef long total_plies = 0
    cdef long white = 0, black = 0, draws = 0
    setup(&start, fen)
    for g in range(games):
        pos = start
        plies = 0
        history[0] = repetition_key(&pos)
        while True:
            generate_moves(&pos, &ml, False)
            status = game_status(&pos, ml.n, history, plies)
            if status or plies + 1 >= MAX_GAME_PLIES:
                break
            make_move(&pos, ml.moves[rng.next() % <u64>ml.n])
            plies += 1
            history[plies] = repetition_key(&pos)
        total_plies += plies
        if status == 1:
            if pos.side == WHITE:
                black += 1
            else:
                white += 1
        else:
            draws += 1
    return {"games": games, "plies": total_plies, "white_wins": white, "black_wins": black,
            "draws": draws}


cdef class CoreBoard:
    """The compiled board behind a small python-chess-like interface, for engines and tests.

    >>> board = CoreBoard()
    >>> board.push_san("e4").uci()
    'e2e4'
    >>> board.epd()
    'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -'
    """
    cdef Position pos
    cdef Position* stack  # positions before each move: pop() restores one (copy-unmake)
    cdef u64* keys
    cdef int size, capacity
    cdef list moves

    def __cinit__(self):
        self.capacity = 0
        self.size = 0
        self.stack = NULL
        self.keys = NULL

    def __init__(self, fen=None):
        setup(&self.pos, fen)
        self.moves = []
        self.size = 0
        self._grow()
        self.keys[0] = repetition_key(&self.pos)
        if isinstance(fen, chess.Board):
            self._replay_history(fen)

    def _replay_history(self, board):
        """Rebuild from the root so repetitions across the game's move stack are seen."""
        root = board.root()
        setup(&self.pos, root)
        self.keys[0] = repetition_key(&self.pos)
        for move in board.move_stack:
            self.push(move)

    def __dealloc__(self):
        PyMem_Free(self.stack)
        PyMem_Free(self.keys)

    def _grow(self):
        cdef int capacity = max(64, 2 * self.capacity)
        cdef Position* stack = <Position*> PyMem_Realloc(self.stack, capacity * sizeof(Position))
        cdef u64* keys = <u64*> PyMem_Realloc(self.keys, (capacity + 1) * sizeof(u64))
        if stack == NULL or keys == NULL:
            raise MemoryError()
        self.stack = stack
        self.keys = keys
        self.capacity = capacity

    cdef void _push(self, Move m) except *:
        if self.size + 1 >= self.capacity:
            self._grow()
        self.stack[self.size] = self.pos
        self.size += 1
        make_move(&self.pos, m)
        self.keys[self.size] = repetition_key(&self.pos)
        self.moves.append(m)

    def push(self, move) -> None:
        """Play a legal chess.Move."""
        self._push(from_chess_move(&self.pos, move))

    def push_san(self, str san):
        cdef MoveList legal
        generate_moves(&self.pos, &legal, False)
        cdef Move m = parse_san(&self.pos, san, &legal)
        self._push(m)
        return to_chess_move(m)

    def push_uci(self, str uci):
        cdef Move m = parse_uci(&self.pos, uci)
        self._push(m)
        return to_chess_move(m)

    def pop(self):
        """Unmake the last move and return it."""
        if self.size == 0:
            raise IndexError("pop from a board without moves")
        self.size -= 1
        self.pos = self.stack[self.size]
        return to_chess_move(self.moves.pop())

    def legal_moves(self) -> list:
        cdef MoveList ml
        generate_moves(&self.pos, &ml, False)
        return [to_chess_move(ml.moves[i]) for i in range(ml.n)]

    def noisy_moves(self) -> list:
        """Legal captures (en passant included) and queen promotions."""
        cdef MoveList ml
        generate_moves(&self.pos, &ml, True)
        return [to_chess_move(ml.moves[i]) for i in range(ml.n)]

    @property
    def turn(self) -> bool:
        return self.pos.side == WHITE

    @property
    def key(self) -> int:
        """Polyglot key (chess.polyglot.zobrist_hash)."""
        return full_key(&self.pos)

    def fen(self) -> str:
        return fen_of(&self.pos, True)

    def epd(self) -> str:
        return fen_of(&self.pos, False)

    def san(self, move) -> str:
        cdef MoveList legal
        generate_moves(&self.pos, &legal, False)
        return san_of(&self.pos, from_chess_move(&self.pos, move), &legal)

    def parse_san(self, str san):
        cdef MoveList legal
        generate_moves(&self.pos, &legal, False)
        return to_chess_move(parse_san(&self.pos, san, &legal))

    def parse_uci(self, str uci):
        return to_chess_move(parse_uci(&self.pos, uci))

    def uci(self, move) -> str:
        return uci_of(from_chess_move(&self.pos, move))

    def see(self, move) -> int:
        """Static exchange evaluation of a legal move, centipawns for the side to move."""
        return see(&self.pos, from_chess_move(&self.pos, move))

    def gives_check(self, move) -> bool:
        return gives_check(&self.pos, from_chess_move(&self.pos, move))

    def is_check(self) -> bool:
        return in_check(&self.pos)

    def _has_moves(self) -> bool:
        cdef MoveList ml
        return generate_moves(&self.pos, &ml, False) > 0

    def is_checkmate(self) -> bool:
        return in_check(&self.pos) and not self._has_moves()

    def is_stalemate(self) -> bool:
        return not in_check(&self.pos) and not self._has_moves()

    def is_insufficient_material(self) -> bool:
        return insufficient_material(&self.pos)

    def is_repetition(self, int count=3) -> bool:
        """The current position occurred ``count`` times (this one included) since set-up."""
        cdef int i = self.size - 2, seen = 1
        while i >= 0:
            if self.keys[i] == self.keys[self.size]:
                seen += 1
            i -= 2
        return seen >= count

    def is_fifty_moves(self) -> bool:
        """Fifty-move rule (claimable: 100 halfmoves without capture or pawn move)."""
        return self.pos.halfmove >= 100 and self._has_moves()

    def is_game_over(self) -> bool:
        """As python-chess ``Board.is_game_over()``: no claims, 75 moves and fivefold only."""
        cdef MoveList ml
        generate_moves(&self.pos, &ml, False)
        return game_status(&self.pos, ml.n, self.keys, self.size) != 0

    def perft(self, int depth) -> int:
        cdef Position copy = self.pos
        return perft(&copy, depth)

    def __len__(self) -> int:
        return self.size
