# cython: language_level=3
"""UCT as in paper 001 (Arenz, Monte Carlo Chess, algorithms 7.1-7.5 and 4.1), compiled.

One iteration: select (UCB1, C = 1, descend only into fully expanded nodes, ties to the last
child), expand one child in move-generator order, play one playout from it, add the result
(White's view: 1, 0.5, 0) to every node up to the root. A new tree per search.

Every modification of the thesis is a switch of :class:`Tree` (``engines.mcts.MctsConfig``
documents them): epsilon-greedy heavy playouts on SEE or on the evaluation, decisive moves
(mate in one played in playouts), a tablebase cut-off in playouts (a Python prober called for
positions with few pieces), progressive bias (formula 4 on the evaluation, centipawns from
the chooser's view) and the Monte-Carlo solver with mate distance. The solver keeps an
explicit proven flag and mate distance per node (the fix of algorithm 4.1: proven and
unproven values never share one number).

The search loop runs without the GIL (the UCI thread keeps answering ``stop``) except for a
tablebase probe.
"""
from libc.math cimport log, log10, sqrt
from libc.stdlib cimport free, malloc, realloc
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

import chess

from engines.alphabeta.evaluation cimport EVAL_PESTO, evaluate
from engines.core.position cimport (BISHOP, BLACK, FLAG_CASTLE, FLAG_DOUBLE, FLAG_EP, KING,
                                    KNIGHT, MAX_MOVES, PAWN, QUEEN, ROOK, WHITE, MoveList,
                                    Move, Position, attackers_to, bishop_attacks, fen_of,
                                    from_chess_move, generate_moves, gives_check, in_check,
                                    insufficient_material, king_attacks, king_square,
                                    knight_attacks, lsb, make_move, pawn_attacks, popcount,
                                    repetition_key, rook_attacks, see, set_from_board,
                                    to_chess_move, u64)

cdef enum:
    ONGOING = 0
    MATED = 1          # the side to move is checkmated
    DRAWN = 2
    HP_NONE = 0
    HP_SEE = 1
    HP_EVAL = 2
    HISTORY = 16384    # game history + tree path + playout plies
    MAX_PATH = 1024    # deepest tree path

HP_KINDS = {"none": HP_NONE, "see": HP_SEE, "eval": HP_EVAL}

cdef struct Node:
    Move move            # the move that leads here
    int parent
    int first_child      # start of the children block; -1 until the first expansion
    int n_children       # legal moves of this node's position
    int n_expanded       # children created so far (the first n_expanded of the block)
    int status           # ONGOING, MATED or DRAWN, fixed when the node is created
    int visits
    double total         # sum of results from White's view
    double bias          # evaluation after the move, centipawns, the mover's view
    int proven           # solver: 0 unproven, +1 White wins, -1 Black wins
    int mate_plies       # solver: plies to mate from this node's position when proven

cdef struct Settings:
    int hp
    double epsilon
    bint tie_random
    bint decisive
    int tb_pieces
    int tb_root_min_pieces
    double k_bias
    bint solver
    double c
    int repetition
    bint fifty
    int max_playout_plies
    int draw_retries


cdef inline double monotonic() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)    # the clock of Python's time.monotonic()
    return ts.tv_sec + ts.tv_nsec * 1e-9


cdef inline double white_result(int winner_side) noexcept nogil:
    return 1.0 if winner_side == WHITE else 0.0


# -- uniform random moves without the full legal move list ------------------------------
# A random playout needs one legal move per ply, not all of them: pick a pseudo-legal move at
# random, play it on a copy and keep it if the mover's king is safe, else drop it and pick
# again among the rest. That is a uniform choice among the legal moves (the thesis' rule)
# at the cost of one make and one attack test per ply instead of a legal generator run.

cdef extern from *:
    int __builtin_ctzll(unsigned long long) nogil

# Local copies of the core's leaper tables: cimported functions are called through pointers,
# too slow for the innermost loop.
cdef u64 KNIGHTS[64]
cdef u64 KINGS[64]
cdef u64 PAWNS[2][64]


cdef void init_leapers():
    cdef int sq
    for sq in range(64):
        KNIGHTS[sq] = knight_attacks(sq)
        KINGS[sq] = king_attacks(sq)
        PAWNS[WHITE][sq] = pawn_attacks(WHITE, sq)
        PAWNS[BLACK][sq] = pawn_attacks(BLACK, sq)


init_leapers()


cdef inline int first_square(u64 b) noexcept nogil:
    return __builtin_ctzll(b)


cdef inline void push(MoveList* ml, int frm, int to, int flags) noexcept nogil:
    ml.moves[ml.n] = frm | (to << 6) | flags
    ml.n += 1


cdef inline void push_targets(MoveList* ml, int frm, u64 targets) noexcept nogil:
    while targets:
        push(ml, frm, first_square(targets), 0)
        targets &= targets - 1


cdef inline void push_pawn(MoveList* ml, int frm, int to, int flags) noexcept nogil:
    if to >= 56 or to < 8:
        push(ml, frm, to, QUEEN << 12)
        push(ml, frm, to, ROOK << 12)
        push(ml, frm, to, BISHOP << 12)
        push(ml, frm, to, KNIGHT << 12)
    else:
        push(ml, frm, to, flags)


cdef inline bint attacked(const Position* p, int sq, int by) noexcept nogil:
    return (attackers_to(p, sq, p.all) & p.occ[by]) != 0


cdef void castling_moves(const Position* p, MoveList* ml) noexcept nogil:
    """Castling that is legal (king not in check, passing and landing squares safe)."""
    cdef int base = 0 if p.side == WHITE else 56, them = p.side ^ 1
    cdef int right = 1 if p.side == WHITE else 4
    if attacked(p, base + 4, them):
        return
    if (p.castling & right and not (p.all & ((<u64>3) << (base + 5)))
            and not attacked(p, base + 5, them) and not attacked(p, base + 6, them)):
        push(ml, base + 4, base + 6, FLAG_CASTLE)
    if (p.castling & (right << 1) and not (p.all & ((<u64>7) << (base + 1)))
            and not attacked(p, base + 3, them) and not attacked(p, base + 2, them)):
        push(ml, base + 4, base + 2, FLAG_CASTLE)


cdef int pseudo_legal_moves(const Position* p, MoveList* ml) noexcept nogil:
    """Moves that obey piece movement but may leave the king in check (castling is
    checked in full); the same encoding as the core's generator."""
    cdef int us = p.side, them = p.side ^ 1, sq, to, fwd = 8 if p.side == WHITE else -8
    cdef u64 own = p.occ[us], enemy = p.occ[them], b, targets
    ml.n = 0
    b = p.bb[us][KNIGHT]
    while b:
        sq = first_square(b)
        b &= b - 1
        push_targets(ml, sq, KNIGHTS[sq] & ~own)
    b = p.bb[us][BISHOP] | p.bb[us][QUEEN]
    while b:
        sq = first_square(b)
        b &= b - 1
        targets = bishop_attacks(sq, p.all)
        if p.bb[us][QUEEN] & ((<u64>1) << sq):
            targets |= rook_attacks(sq, p.all)
        push_targets(ml, sq, targets & ~own)
    b = p.bb[us][ROOK]
    while b:
        sq = first_square(b)
        b &= b - 1
        push_targets(ml, sq, rook_attacks(sq, p.all) & ~own)
    sq = first_square(p.bb[us][KING])
    push_targets(ml, sq, KINGS[sq] & ~own)
    b = p.bb[us][PAWN]
    while b:
        sq = first_square(b)
        b &= b - 1
        to = sq + fwd
        if not (p.all & ((<u64>1) << to)):
            push_pawn(ml, sq, to, 0)
            if (us == WHITE and sq < 16) or (us == BLACK and sq >= 48):
                if not (p.all & ((<u64>1) << (to + fwd))):
                    push(ml, sq, to + fwd, FLAG_DOUBLE)
        targets = PAWNS[us][sq] & enemy
        while targets:
            push_pawn(ml, sq, first_square(targets), 0)
            targets &= targets - 1
        if p.ep >= 0 and PAWNS[us][sq] & ((<u64>1) << p.ep):
            push(ml, sq, p.ep, FLAG_EP)
    if p.castling:
        castling_moves(p, ml)
    return ml.n


cdef inline bint leaves_king_safe(const Position* after, int mover) noexcept nogil:
    """The mover's king is not attacked by the side now to move."""
    cdef int them = mover ^ 1, king = first_square(after.bb[mover][KING])
    if (KNIGHTS[king] & after.bb[them][KNIGHT]) or (PAWNS[mover][king] & after.bb[them][PAWN]) \
            or (KINGS[king] & after.bb[them][KING]):
        return False
    if bishop_attacks(king, after.all) & (after.bb[them][BISHOP] | after.bb[them][QUEEN]):
        return False
    return not (rook_attacks(king, after.all) & (after.bb[them][ROOK] | after.bb[them][QUEEN]))


cdef inline bint play_random_legal(Position* p, u64 random) noexcept nogil:
    """Play a uniformly random legal move; False (nothing played) when there is none."""
    cdef MoveList ml
    cdef Position before = p[0]
    cdef int n = pseudo_legal_moves(p, &ml), i
    while n > 0:
        i = random % <u64>n
        make_move(p, ml.moves[i])
        if leaves_king_safe(p, before.side):
            return True
        p[0] = before
        n -= 1
        ml.moves[i] = ml.moves[n]
        random = random * 6364136223846793005ULL + 1442695040888963407ULL
        random ^= random >> 29
    return False


def legal_moves_by_filter(fen):
    """The legal moves (UCI, sorted) the playout's pseudo-legal filter accepts, for tests
    against the core's generator."""
    cdef Position p, child
    cdef MoveList ml
    cdef int i
    set_from_board(&p, chess.Board(fen))
    pseudo_legal_moves(&p, &ml)
    moves = []
    for i in range(ml.n):
        child = p
        make_move(&child, ml.moves[i])
        if leaves_king_safe(&child, p.side):
            moves.append(to_chess_move(ml.moves[i]).uci())
    return sorted(moves)


# -- fast tests for the playout modifications ---------------------------------------------
# Decisive moves test "gives check" for every legal move at every playout ply and "has no
# legal reply" for the checking ones; the heavy playouts score every legal move. The helpers
# below answer the same questions as the core's gives_check / generate_moves / see and the
# evaluation's PeSTO score (tests pin them to the core and to python-chess), without making
# every move on a copy or generating every reply.

cdef struct CheckInfo:
    u64 squares[6]     # squares from which a piece of the mover, by type, attacks the enemy king
    u64 slow           # the mover's pieces that may give a discovered check: tested in full


cdef inline void check_info(const Position* p, CheckInfo* ci) noexcept nogil:
    """Per position: a piece of type t moving to ``to`` gives a direct check iff ``to`` is
    in ``squares[t]`` (slider lines through the vacated square cannot open, or the enemy
    king would already be in check); pieces in front of one of our sliders on a line to the
    enemy king (a superset of the discovered checkers) take the core's full test."""
    cdef int us = p.side, them = p.side ^ 1
    cdef int ksq = first_square(p.bb[them][KING])
    cdef u64 own = p.occ[us], diag_att = bishop_attacks(ksq, p.all)
    cdef u64 orth_att = rook_attacks(ksq, p.all), cand
    ci.squares[PAWN] = PAWNS[them][ksq]
    ci.squares[KNIGHT] = KNIGHTS[ksq]
    ci.squares[BISHOP] = diag_att
    ci.squares[ROOK] = orth_att
    ci.squares[QUEEN] = diag_att | orth_att
    ci.squares[KING] = 0
    ci.slow = 0
    cand = diag_att & own
    if cand and (bishop_attacks(ksq, p.all ^ cand) & ~diag_att
                 & (p.bb[us][BISHOP] | p.bb[us][QUEEN])):
        ci.slow |= cand
    cand = orth_att & own
    if cand and (rook_attacks(ksq, p.all ^ cand) & ~orth_att
                 & (p.bb[us][ROOK] | p.bb[us][QUEEN])):
        ci.slow |= cand


cdef inline bint fast_gives_check(const Position* p, const CheckInfo* ci, Move m) noexcept nogil:
    """The core's gives_check(p, m) for a legal move, by table lookup where it can."""
    cdef int frm = m & 63
    if (m & (FLAG_EP | FLAG_CASTLE)) or (m >> 12) & 7 or (ci.slow >> frm) & 1:
        return gives_check(p, m)
    return (ci.squares[p.board[frm] % 6] >> ((m >> 6) & 63)) & 1


cdef inline bint legal_after(const Position* p, Move m) noexcept nogil:
    cdef Position q = p[0]
    make_move(&q, m)
    return leaves_king_safe(&q, p.side)


cdef inline bint any_legal_to(const Position* p, int frm, u64 targets) noexcept nogil:
    while targets:
        if legal_after(p, frm | (first_square(targets) << 6)):
            return True
        targets &= targets - 1
    return False


cdef bint has_legal_evasion(const Position* p) noexcept nogil:
    """Whether the side to move, in check, has a legal move (generate_moves(p) > 0), stopping
    at the first one: king moves, then the other pieces' moves onto a superset of the
    checker's square and the squares between it and the king, each tested by playing it."""
    cdef int us = p.side, them = p.side ^ 1, sq, ct, fwd = 8 if p.side == WHITE else -8
    cdef int ksq = first_square(p.bb[us][KING]), c
    cdef u64 own = p.occ[us], enemy = p.occ[them], occ = p.all, b, targets, stops, checkers
    targets = KINGS[ksq] & ~own
    while targets:
        if not (attackers_to(p, first_square(targets), occ ^ ((<u64>1) << ksq)) & enemy):
            return True
        targets &= targets - 1
    checkers = attackers_to(p, ksq, occ) & enemy
    if checkers & (checkers - 1):
        return False           # double check: only the king moves
    c = first_square(checkers)
    ct = p.board[c] % 6
    stops = checkers
    if ct == BISHOP or ct == QUEEN:
        stops |= bishop_attacks(ksq, occ) & bishop_attacks(c, occ)
    if ct == ROOK or ct == QUEEN:
        stops |= rook_attacks(ksq, occ) & rook_attacks(c, occ)
    b = p.bb[us][KNIGHT]
    while b:
        sq = first_square(b)
        b &= b - 1
        if any_legal_to(p, sq, KNIGHTS[sq] & stops):
            return True
    b = p.bb[us][BISHOP] | p.bb[us][QUEEN]
    while b:
        sq = first_square(b)
        b &= b - 1
        if any_legal_to(p, sq, bishop_attacks(sq, occ) & stops):
            return True
    b = p.bb[us][ROOK] | p.bb[us][QUEEN]
    while b:
        sq = first_square(b)
        b &= b - 1
        if any_legal_to(p, sq, rook_attacks(sq, occ) & stops):
            return True
    b = p.bb[us][PAWN]
    while b:
        sq = first_square(b)
        b &= b - 1
        targets = PAWNS[us][sq] & checkers       # a promotion's piece cannot matter here
        if not (occ & ((<u64>1) << (sq + fwd))):
            targets |= ((<u64>1) << (sq + fwd)) & stops
            if ((us == WHITE and sq < 16) or (us == BLACK and sq >= 48)) and \
                    not (occ & ((<u64>1) << (sq + 2 * fwd))) and \
                    legal_after_flag(p, sq, sq + 2 * fwd, FLAG_DOUBLE, stops):
                return True
        if any_legal_to(p, sq, targets):
            return True
        if p.ep >= 0 and PAWNS[us][sq] & ((<u64>1) << p.ep) and \
                legal_after(p, sq | (p.ep << 6) | FLAG_EP):
            return True
    return False


cdef inline bint legal_after_flag(const Position* p, int frm, int to, int flags,
                                  u64 stops) noexcept nogil:
    return ((stops >> to) & 1) and legal_after(p, frm | (to << 6) | flags)


cdef Move find_mate_in_one(const Position* p, const MoveList* ml) noexcept nogil:
    """The first move of ``ml`` (the legal moves of ``p``) that checkmates, else 0."""
    cdef CheckInfo ci
    cdef Position child
    cdef int i
    check_info(p, &ci)
    for i in range(ml.n):
        if fast_gives_check(p, &ci, ml.moves[i]):
            child = p[0]
            make_move(&child, ml.moves[i])
            if not has_legal_evasion(&child):
                return ml.moves[i]
    return 0


cdef struct SeeDanger:
    u64 attacked       # squares the opponent attacks now
    u64 behind         # squares an enemy slider would reach through one of ``screens``
    u64 screens        # our pieces standing in an enemy slider's line


cdef void see_danger(const Position* p, SeeDanger* d) noexcept nogil:
    """Where a quiet move may have a SEE below 0: onto a square the opponent attacks, or a
    screening piece's move onto a square behind it (what moving it uncovers: a superset).
    Elsewhere a quiet, non-promoting move has no recapture and SEE 0."""
    cdef int us = p.side, them = p.side ^ 1, sq
    cdef u64 own = p.occ[us], occ = p.all, b, a
    d.attacked = KINGS[first_square(p.bb[them][KING])]
    d.behind = 0
    d.screens = 0
    b = p.bb[them][PAWN]
    while b:
        d.attacked |= PAWNS[them][first_square(b)]
        b &= b - 1
    b = p.bb[them][KNIGHT]
    while b:
        d.attacked |= KNIGHTS[first_square(b)]
        b &= b - 1
    b = p.bb[them][BISHOP] | p.bb[them][QUEEN]
    while b:
        sq = first_square(b)
        b &= b - 1
        a = bishop_attacks(sq, occ)
        d.attacked |= a
        if a & own:
            d.screens |= a & own
            d.behind |= bishop_attacks(sq, occ ^ (a & own))
    b = p.bb[them][ROOK] | p.bb[them][QUEEN]
    while b:
        sq = first_square(b)
        b &= b - 1
        a = rook_attacks(sq, occ)
        d.attacked |= a
        if a & own:
            d.screens |= a & own
            d.behind |= rook_attacks(sq, occ ^ (a & own))


# PeSTO terms as engines.alphabeta.evaluation keeps them, for scoring every move of a
# position from the position's sums instead of evaluating every child from scratch.
cdef int MG[2][6][64]
cdef int EG[2][6][64]
cdef int PHASE[6]


cdef void init_pesto():
    from engines import eval_tables as tables
    cdef int c, t, sq
    types = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING)
    if (tables.BISHOP_PAIR_MG, tables.BISHOP_PAIR_EG, tables.PESTO_PHASE_MAX) != (30, 50, 24):
        raise ValueError("PeSTO constants changed: update engines/mcts/tree.pyx")
    for t, piece_type in enumerate(types):
        PHASE[t] = tables.PESTO_PHASE_INC[piece_type]
        for sq in range(64):
            for c in range(2):
                idx = sq if c == WHITE else sq ^ 56
                MG[c][t][sq] = (tables.PESTO_MG_VALUES[piece_type]
                                + tables.PESTO_MG_PST[piece_type][idx])
                EG[c][t][sq] = (tables.PESTO_EG_VALUES[piece_type]
                                + tables.PESTO_EG_PST[piece_type][idx])


init_pesto()

cdef enum:
    PAIR_MG = 30
    PAIR_EG = 50
    EVAL_TEMPO = 10


cdef struct PestoSums:
    int mg[2]
    int eg[2]
    int bishops[2]
    int phase


cdef inline void pesto_sums(const Position* p, PestoSums* s) noexcept nogil:
    cdef int c, t, sq
    cdef u64 b
    s.phase = 0
    for c in range(2):
        s.mg[c] = 0
        s.eg[c] = 0
        s.bishops[c] = popcount(p.bb[c][BISHOP])
        for t in range(6):
            b = p.bb[c][t]
            s.phase += PHASE[t] * popcount(b)
            while b:
                sq = first_square(b)
                b &= b - 1
                s.mg[c] += MG[c][t][sq]
                s.eg[c] += EG[c][t][sq]


cdef inline int eval_after(const Position* p, const PestoSums* s, Move m) noexcept nogil:
    """-evaluate(child, EVAL_PESTO) for the child after ``m``: the mover's view."""
    cdef int us = p.side, them = p.side ^ 1, frm = m & 63, to = (m >> 6) & 63
    cdef int promo = (m >> 12) & 7, t = p.board[frm] - 6 * us, placed, captured, capsq
    cdef int mg_us = s.mg[us], eg_us = s.eg[us], mg_them = s.mg[them], eg_them = s.eg[them]
    cdef int b_us = s.bishops[us], b_them = s.bishops[them], phase = s.phase
    cdef int mg_score, eg_score
    placed = promo if promo else t
    mg_us += MG[us][placed][to] - MG[us][t][frm]
    eg_us += EG[us][placed][to] - EG[us][t][frm]
    if promo:
        phase += PHASE[promo] - PHASE[PAWN]
        if promo == BISHOP:
            b_us += 1
    if m & FLAG_EP:
        capsq = to - 8 if us == WHITE else to + 8
        mg_them -= MG[them][PAWN][capsq]
        eg_them -= EG[them][PAWN][capsq]
    elif p.board[to] != 12:
        captured = p.board[to] - 6 * them
        mg_them -= MG[them][captured][to]
        eg_them -= EG[them][captured][to]
        phase -= PHASE[captured]
        if captured == BISHOP:
            b_them -= 1
    if m & FLAG_CASTLE:
        if to & 7 == 6:
            mg_us += MG[us][ROOK][to - 1] - MG[us][ROOK][to + 1]
            eg_us += EG[us][ROOK][to - 1] - EG[us][ROOK][to + 1]
        else:
            mg_us += MG[us][ROOK][to + 1] - MG[us][ROOK][to - 2]
            eg_us += EG[us][ROOK][to + 1] - EG[us][ROOK][to - 2]
    if b_us >= 2:
        mg_us += PAIR_MG
        eg_us += PAIR_EG
    if b_them >= 2:
        mg_them += PAIR_MG
        eg_them += PAIR_EG
    mg_score = mg_them - mg_us            # the child's side to move is ``them``
    eg_score = eg_them - eg_us
    if phase > 24:
        phase = 24
    return -((mg_score * phase + eg_score * (24 - phase)) // 24 + EVAL_TEMPO)


def mate_in_one_check(fen):
    """(the fast decisive-moves answer, the full one) as UCI or None, for tests."""
    cdef Position p, child
    cdef MoveList ml, replies
    cdef int i
    cdef Move fast, full = 0
    set_from_board(&p, chess.Board(fen))
    generate_moves(&p, &ml, False)
    fast = find_mate_in_one(&p, &ml)
    for i in range(ml.n):
        child = p
        make_move(&child, ml.moves[i])
        if in_check(&child) and generate_moves(&child, &replies, False) == 0:
            full = ml.moves[i]
            break
    return (to_chess_move(fast).uci() if fast else None,
            to_chess_move(full).uci() if full else None)


def move_scores_check(fen):
    """Per legal move (UCI): (fast SEE, core SEE, fast -eval, core -eval), for tests."""
    cdef Position p, child
    cdef MoveList ml
    cdef PestoSums sums
    cdef SeeDanger danger
    cdef int i
    set_from_board(&p, chess.Board(fen))
    generate_moves(&p, &ml, False)
    see_danger(&p, &danger)
    pesto_sums(&p, &sums)
    out = {}
    for i in range(ml.n):
        child = p
        make_move(&child, ml.moves[i])
        out[to_chess_move(ml.moves[i]).uci()] = (
            quick_see(&p, ml.moves[i], &danger), see(&p, ml.moves[i]),
            eval_after(&p, &sums, ml.moves[i]), -evaluate(&child, EVAL_PESTO))
    return out


cdef inline int quick_see(const Position* p, Move m, const SeeDanger* d) noexcept nogil:
    """see(p, m), answered 0 without the swap list for a quiet move to a safe square."""
    cdef int to = (m >> 6) & 63
    if p.board[to] == 12 and not (m & (FLAG_EP | 0x7000)) and not ((d.attacked >> to) & 1) \
            and not (((d.screens >> (m & 63)) & 1) and ((d.behind >> to) & 1)):
        return 0
    return see(p, m)


cdef class Tree:
    """The search tree and its playouts; one instance per engine, a new tree per search."""
    cdef Node* nodes
    cdef int n_nodes, capacity, max_nodes
    cdef Settings s
    cdef u64 rng
    cdef Position root
    cdef u64 history[HISTORY]
    cdef int base                # index of the root's key in history
    cdef int root_pieces
    cdef object probe            # fen -> win/draw/loss (1/0/-1) for the side to move, or None
    cdef bint has_probe
    cdef dict tb_cache
    cdef volatile int stop_flag
    cdef public long iterations, playouts, playout_plies, tb_hits, capped
    cdef public int seldepth

    def __cinit__(self):
        self.nodes = NULL
        self.capacity = 0

    def __dealloc__(self):
        free(self.nodes)

    def __init__(self, config, probe=None, max_nodes=None):
        """``config`` is an ``engines.mcts.MctsConfig``; ``probe(fen)`` answers the
        tablebase cut-off (win 1, draw 0, loss -1 for the side to move). The tree holds
        ``max_nodes`` nodes, by default as many as ``config.hash_mb`` MB hold."""
        self.s.hp = HP_KINDS[config.hp]
        self.s.epsilon = config.epsilon
        self.s.tie_random = config.tie_break == "random"
        self.s.decisive = config.decisive
        self.s.tb_pieces = config.tb_pieces
        self.s.tb_root_min_pieces = config.tb_root_min_pieces
        self.s.k_bias = config.k_bias
        self.s.solver = config.solver
        self.s.c = config.c
        self.s.repetition = config.repetition
        self.s.fifty = config.fifty
        self.s.max_playout_plies = config.max_playout_plies
        self.s.draw_retries = config.draw_retries
        self.rng = <u64>config.seed * 0x9E3779B97F4A7C15ULL + 1
        self.probe = probe
        self.has_probe = probe is not None
        self.tb_cache = {}
        if max_nodes is None:
            max_nodes = min(config.hash_mb * (1 << 20) // sizeof(Node), 2**31 - 2)
        self.max_nodes = max_nodes
        self.grow(1024)
        self.set_root(chess.Board())

    # -- set-up --------------------------------------------------------------------------

    cdef int grow(self, int wanted) except -1:
        cdef Node* bigger
        if wanted <= self.capacity:
            return 0
        wanted = max(wanted, 2 * self.capacity)
        bigger = <Node*>realloc(self.nodes, wanted * sizeof(Node))
        if bigger == NULL:
            raise MemoryError(f"mcts tree: no memory for {wanted} nodes")
        self.nodes = bigger
        self.capacity = wanted
        return 0

    def set_root(self, board, searchmoves=()):
        """A new tree for ``board`` (its move stack gives the repetition history);
        ``searchmoves`` restricts the root's children."""
        cdef Position pos
        cdef MoveList ml
        cdef int n = 0, i
        keep = board.move_stack[-(HISTORY - MAX_PATH - 4096):]
        replay = board.copy()
        for _ in keep:
            replay.pop()
        set_from_board(&pos, replay)
        self.history[0] = repetition_key(&pos)
        for move in keep:
            make_move(&pos, from_chess_move(&pos, move))
            n += 1
            self.history[n] = repetition_key(&pos)
        self.base = n
        self.root = pos
        self.root_pieces = popcount(pos.all)
        generate_moves(&pos, &ml, False)
        if searchmoves:
            allowed = {from_chess_move(&pos, m) for m in searchmoves}
            n = 0
            for i in range(ml.n):
                if ml.moves[i] in allowed:
                    ml.moves[n] = ml.moves[i]
                    n += 1
            ml.n = n
        self.n_nodes = 1
        self.init_node(0, 0, -1, ml.n, ONGOING if ml.n else (MATED if in_check(&pos) else DRAWN))
        self.nodes[0].first_child = 1
        self.grow(1 + ml.n)
        for i in range(ml.n):
            self.init_node(1 + i, ml.moves[i], 0, 0, ONGOING)
        self.n_nodes = 1 + ml.n
        self.iterations = self.playouts = self.playout_plies = self.tb_hits = self.capped = 0
        self.seldepth = 0
        self.stop_flag = 0

    cdef inline void init_node(self, int i, Move move, int parent, int n_children,
                               int status) noexcept nogil:
        cdef Node* node = &self.nodes[i]
        node.move = move
        node.parent = parent
        node.first_child = -1
        node.n_children = n_children
        node.n_expanded = 0
        node.status = status
        node.visits = 0
        node.total = 0.0
        node.bias = 0.0
        node.proven = 0
        node.mate_plies = 0

    def stop(self):
        self.stop_flag = 1

    # -- random numbers ------------------------------------------------------------------

    cdef inline u64 next_random(self) noexcept nogil:
        self.rng ^= self.rng >> 12
        self.rng ^= self.rng << 25
        self.rng ^= self.rng >> 27
        return self.rng * 2685821657736338717ULL

    cdef inline double uniform(self) noexcept nogil:
        return (self.next_random() >> 11) * (1.0 / 9007199254740992.0)

    # -- game rules ----------------------------------------------------------------------

    cdef int status(self, const Position* p, int n_legal, int ply) noexcept nogil:
        """ONGOING, MATED or DRAWN; ``history[ply]`` is the key of ``p``. A repetition is a
        draw when the position occurred ``repetition - 1`` times before (2: the first
        repetition, as Stockfish 2.x's is_draw; 3: threefold)."""
        cdef int i, seen = 1
        cdef u64 key
        if n_legal == 0:
            return MATED if in_check(p) else DRAWN
        if insufficient_material(p) or (self.s.fifty and p.halfmove >= 100):
            return DRAWN
        if p.halfmove >= 4:
            key = self.history[ply]
            i = ply - 4
            while i >= 0 and i >= ply - p.halfmove:
                if self.history[i] == key:
                    seen += 1
                    if seen >= self.s.repetition:
                        return DRAWN
                i -= 2
        return ONGOING

    # -- playouts (algorithm 7.4 and the playout modifications) --------------------------

    cdef Move mate_in_one(self, const Position* p, const MoveList* ml) noexcept nogil:
        """Decisive moves: the first move of ``ml`` that checkmates, else 0."""
        return find_mate_in_one(p, ml)

    cdef Move greedy_move(self, const Position* p, const MoveList* ml) noexcept nogil:
        """The best move by SEE or evaluation (the mover's view after the move); ties to
        the first or a random one."""
        cdef int i, value, best = -1000000, ties = 0
        cdef Move chosen = ml.moves[0]
        cdef SeeDanger danger
        cdef PestoSums sums
        if self.s.hp == HP_SEE:
            see_danger(p, &danger)
        else:
            pesto_sums(p, &sums)
        for i in range(ml.n):
            if self.s.hp == HP_SEE:
                value = quick_see(p, ml.moves[i], &danger)
            else:
                value = eval_after(p, &sums, ml.moves[i])
            if value > best:
                best, chosen, ties = value, ml.moves[i], 1
            elif value == best and self.s.tie_random:
                ties += 1
                if self.next_random() % <u64>ties == 0:
                    chosen = ml.moves[i]
        return chosen

    cdef Move playout_move(self, const Position* p, const MoveList* ml) noexcept nogil:
        cdef Move m
        if self.s.decisive:
            m = self.mate_in_one(p, ml)
            if m:
                return m
        if self.s.hp != HP_NONE and self.s.epsilon < 1.0 and self.uniform() >= self.s.epsilon:
            return self.greedy_move(p, ml)
        return ml.moves[self.next_random() % <u64>ml.n]

    cdef double tablebase(self, const Position* p) noexcept nogil:
        """The tablebase result (White's view), or -1 when the prober has no answer."""
        cdef u64 key = repetition_key(p)
        with gil:
            try:
                wdl = self.tb_cache.get(key)
                if wdl is None:
                    wdl = self.probe(fen_of(p, True))
                    self.tb_cache[key] = wdl
            except Exception:
                return -1.0
            if wdl is None:
                return -1.0
        self.tb_hits += 1
        if wdl == 0:
            return 0.5
        return white_result(p.side if wdl > 0 else p.side ^ 1)

    cdef int draw_state(self, const Position* p, int ply) noexcept nogil:
        """DRAWN or ONGOING without a move list: mate is tested first only where it can
        coincide with a draw (the fifty-move rule; a mate position cannot have occurred
        before, and insufficient material cannot mate)."""
        cdef MoveList ml
        if self.s.fifty and p.halfmove >= 100:
            return self.status(p, generate_moves(p, &ml, False), ply)
        return self.status(p, 1, ply)

    cdef double random_playout(self, Position pos, int ply) noexcept nogil:
        """Algorithm 7.4 with uniform random moves (no modification that needs the whole
        move list): the same rules and results as :meth:`playout`, faster."""
        cdef int start = ply, state
        cdef double value
        while True:
            state = self.draw_state(&pos, ply)
            if state != ONGOING:
                value = 0.5 if state == DRAWN else white_result(pos.side ^ 1)
                break
            if ply - start >= self.s.max_playout_plies or ply + 2 >= HISTORY:
                self.capped += 1
                value = 0.5
                break
            if not play_random_legal(&pos, self.next_random()):
                value = white_result(pos.side ^ 1) if in_check(&pos) else 0.5
                break
            ply += 1
            self.history[ply] = repetition_key(&pos)
        self.playouts += 1
        self.playout_plies += ply - start
        return value

    cdef double playout(self, Position pos, int ply) noexcept nogil:
        """One playout from ``pos`` (``history[ply]`` is its key) to the end of the game."""
        cdef MoveList ml
        cdef int start = ply, state
        cdef double value
        cdef bint use_tb = (self.s.tb_pieces > 0 and self.has_probe
                            and self.root_pieces >= self.s.tb_root_min_pieces)
        if not use_tb and not self.s.decisive and (self.s.hp == HP_NONE
                                                   or self.s.epsilon >= 1.0):
            return self.random_playout(pos, ply)
        while True:
            generate_moves(&pos, &ml, False)
            state = self.status(&pos, ml.n, ply)
            if state == MATED:
                value = white_result(pos.side ^ 1)
                break
            if state == DRAWN:
                value = 0.5
                break
            if use_tb and popcount(pos.all) <= self.s.tb_pieces:
                value = self.tablebase(&pos)
                if value >= 0.0:
                    break
            if ply - start >= self.s.max_playout_plies or ply + 2 >= HISTORY:
                self.capped += 1
                value = 0.5
                break
            make_move(&pos, self.playout_move(&pos, &ml))
            ply += 1
            self.history[ply] = repetition_key(&pos)
        self.playouts += 1
        self.playout_plies += ply - start
        return value

    cdef double simulate(self, int leaf, const Position* pos, int ply) noexcept nogil:
        """The leaf's value: its own result when terminal, else a playout; with draw
        retries, a drawn playout is repeated up to ``draw_retries`` times."""
        cdef Node* node = &self.nodes[leaf]
        cdef double value
        cdef int attempt
        if node.status == MATED:
            return white_result(pos.side ^ 1)
        if node.status == DRAWN:
            return 0.5
        if self.s.solver and node.proven:
            return 1.0 if node.proven > 0 else 0.0
        value = self.playout(pos[0], ply)
        attempt = 1
        while value == 0.5 and attempt < self.s.draw_retries:
            value = self.playout(pos[0], ply)
            attempt += 1
        return value

    # -- the tree (algorithms 7.2, 7.3, 7.5) ---------------------------------------------

    cdef int best_child(self, int parent, int side) noexcept nogil:
        """UCB1 (formula 1, plus formula 4's bias term). With the solver a proven win counts
        as a win rate of 1 (the search goes on below it, so a shorter mate can still be
        found) and proven losses are avoided unless every child is one."""
        cdef Node* node = &self.nodes[parent]
        cdef Node* child
        cdef int i, chosen = -1, longest_loss = -1
        cdef int win = 1 if side == WHITE else -1
        cdef double best = -1e300, value, rate
        cdef double log_n = log(node.visits if node.visits > 0 else 1)
        for i in range(node.first_child, node.first_child + node.n_children):
            child = &self.nodes[i]
            if self.s.solver and child.proven == -win:
                if longest_loss < 0 or child.mate_plies > self.nodes[longest_loss].mate_plies:
                    longest_loss = i
                continue
            rate = child.total / child.visits
            if side == BLACK:
                rate = 1.0 - rate
            if self.s.solver and child.proven == win:
                rate = 1.0
            value = (rate + self.s.c * sqrt(2.0 * log_n / child.visits)
                     + self.s.k_bias * child.bias / child.visits)
            if value >= best:
                best, chosen = value, i
        return chosen if chosen >= 0 else longest_loss

    cdef int select(self, Position* pos, int* ply) noexcept nogil:
        """Algorithm 7.2 (bestVal reset per level): descend through fully expanded nodes."""
        cdef int current = 0, depth = 0
        cdef Node* node
        while True:
            node = &self.nodes[current]
            if node.status != ONGOING or node.n_expanded < node.n_children:
                break
            if self.s.solver and node.proven and current != 0:
                break      # its value is known: a proven node is a leaf
            current = self.best_child(current, pos.side)
            make_move(pos, self.nodes[current].move)
            ply[0] += 1
            depth += 1
            self.history[ply[0]] = repetition_key(pos)
        if depth > self.seldepth:
            self.seldepth = depth
        return current

    cdef int expand(self, int leaf, Position* pos, int* ply) noexcept nogil:
        """Algorithm 7.3: add the next child in generator order; -1 when the tree is full."""
        cdef Node* node = &self.nodes[leaf]
        cdef MoveList ml
        cdef int i, child
        if node.status != ONGOING or node.n_expanded >= node.n_children:
            return leaf
        if self.s.solver and node.proven and leaf != 0:
            return leaf
        if node.first_child < 0:
            if self.n_nodes + node.n_children > self.max_nodes:
                return -1
            if self.n_nodes + node.n_children > self.capacity:
                with gil:
                    try:
                        self.grow(self.n_nodes + node.n_children)
                    except MemoryError:
                        return -1
                node = &self.nodes[leaf]
            generate_moves(pos, &ml, False)
            node.first_child = self.n_nodes
            for i in range(ml.n):
                self.init_node(self.n_nodes + i, ml.moves[i], leaf, 0, ONGOING)
            self.n_nodes += ml.n
        child = node.first_child + node.n_expanded
        node.n_expanded += 1
        make_move(pos, self.nodes[child].move)
        ply[0] += 1
        self.history[ply[0]] = repetition_key(pos)
        self.nodes[child].n_children = generate_moves(pos, &ml, False)
        self.nodes[child].status = self.status(pos, ml.n, ply[0])
        if self.s.k_bias != 0.0:
            self.nodes[child].bias = -evaluate(pos, EVAL_PESTO)
        if self.s.solver:
            self.mark_proven(child, pos, &ml)
        return child

    cdef void update(self, int node, double value) noexcept nogil:
        """Algorithm 7.5: the White-view result added to every node up to the root."""
        while node >= 0:
            self.nodes[node].visits += 1
            self.nodes[node].total += value
            node = self.nodes[node].parent

    # -- the solver (algorithm 4.1 with explicit proven flags) ---------------------------

    cdef void mark_proven(self, int node, const Position* pos,
                          const MoveList* ml) noexcept nogil:
        """A new node is proven when its side to move is mated (distance 0) or, with the
        solver's look-ahead, has a mate in one (distance 1): both distances are exact."""
        cdef Node* child = &self.nodes[node]
        if child.status == MATED:
            child.proven = -1 if pos.side == WHITE else 1
            child.mate_plies = 0
        elif child.status == ONGOING and self.mate_in_one(pos, ml):
            child.proven = 1 if pos.side == WHITE else -1
            child.mate_plies = 1

    cdef void propagate(self, int node) noexcept nogil:
        """Algorithm 4.1 with explicit proven flags: carry ``node``'s proof to the root.

        A node lost for its side to move makes its parent a win (distance + 1; the
        shortest win is kept). A won node makes its parent lost only when the parent is
        fully expanded and every child is a proven win for the same side; the parent's
        distance is the longest of those plus one."""
        cdef int winner = self.nodes[node].proven, parent, i, longest
        cdef bint lost = (self.side_to_move_at(node) == WHITE) != (winner == 1)
        while True:
            parent = self.nodes[node].parent
            if parent < 0:
                return
            if lost:
                longest = self.nodes[node].mate_plies
                if self.nodes[parent].proven == winner and \
                        self.nodes[parent].mate_plies <= longest + 1:
                    return
            else:
                if self.nodes[parent].n_expanded < self.nodes[parent].n_children:
                    return
                longest = -1
                for i in range(self.nodes[parent].first_child,
                               self.nodes[parent].first_child + self.nodes[parent].n_children):
                    if self.nodes[i].proven != winner:
                        return
                    longest = max(longest, self.nodes[i].mate_plies)
                if self.nodes[parent].proven == winner and \
                        self.nodes[parent].mate_plies == longest + 1:
                    return
            self.nodes[parent].proven = winner
            self.nodes[parent].mate_plies = longest + 1
            node = parent
            lost = not lost

    cdef int side_to_move_at(self, int node) noexcept nogil:
        cdef int depth = 0
        while self.nodes[node].parent >= 0:
            node = self.nodes[node].parent
            depth += 1
        return self.root.side ^ (depth & 1)

    # -- the loop (algorithm 7.1) --------------------------------------------------------

    cdef bint root_settled(self) noexcept nogil:
        """The solver proved the root lost, a mate in one, or every root move: more search
        cannot change the answer."""
        cdef Node* root = &self.nodes[0]
        cdef int i
        if not self.s.solver or root.proven == 0:
            return False
        if root.mate_plies <= 1 or root.proven != (1 if self.root.side == WHITE else -1):
            return True
        if root.n_expanded < root.n_children:
            return False
        for i in range(root.first_child, root.first_child + root.n_children):
            if self.nodes[i].proven == 0:
                return False
        return True

    def run(self, long iterations, double deadline=0.0):
        """Up to ``iterations`` more iterations (until ``deadline`` on time.monotonic(),
        ``stop()``, a full tree or a settled root); returns the iterations done."""
        cdef long done = 0
        with nogil:
            done = self.run_nogil(iterations, deadline)
        return done

    cdef long run_nogil(self, long iterations, double deadline) noexcept nogil:
        cdef Position pos
        cdef int ply, leaf, child
        cdef long done = 0
        cdef double value
        if self.nodes[0].n_children == 0:
            return 0
        while done < iterations and not self.stop_flag and not self.root_settled():
            if (done & 255) == 255 and deadline > 0.0 and monotonic() >= deadline:
                break
            pos = self.root
            ply = self.base
            leaf = self.select(&pos, &ply)
            child = self.expand(leaf, &pos, &ply)
            if child < 0:
                break
            value = self.simulate(child, &pos, ply)
            if self.s.solver and self.nodes[child].proven:
                self.propagate(child)
            self.update(child, value)
            done += 1
        self.iterations += done
        return done

    # -- reading the tree ----------------------------------------------------------------

    cdef int chosen_child(self, int node) noexcept nogil:
        """The move to play: the shortest proven win, else the most visited child that is
        not a proven loss (the longest proven loss when all are)."""
        cdef Node* parent = &self.nodes[node]
        cdef int i, best = -1, side = self.side_to_move_at(node)
        cdef int win = 1 if side == WHITE else -1
        for i in range(parent.first_child, parent.first_child + parent.n_expanded):
            if best < 0 or self.better_choice(i, best, win):
                best = i
        return best

    cdef bint better_choice(self, int a, int b, int win) noexcept nogil:
        cdef int rank_a = self.choice_rank(a, win), rank_b = self.choice_rank(b, win)
        if rank_a != rank_b:
            return rank_a > rank_b
        if rank_a == 2:
            return self.nodes[a].mate_plies < self.nodes[b].mate_plies
        if rank_a == 0:
            return self.nodes[a].mate_plies > self.nodes[b].mate_plies
        return self.nodes[a].visits > self.nodes[b].visits

    cdef inline int choice_rank(self, int i, int win) noexcept nogil:
        if not self.s.solver or self.nodes[i].proven == 0:
            return 1
        return 2 if self.nodes[i].proven == win else 0

    def lines(self, int count, int max_length=64):
        """The ``count`` best root moves, best first: dicts with the move, its visits, the
        win rate for the side to move, the proven mate distance in plies (positive: the
        side to move mates, negative: is mated, None: unproven) and the principal
        variation (chess.Move list)."""
        cdef int i, side = self.root.side
        root = self.nodes[0]
        order = [i for i in range(root.first_child, root.first_child + root.n_expanded)]
        best = self.chosen_child(0)
        order.sort(key=lambda i: (i != best, -self.nodes[i].visits))
        return [self.line(i, side, max_length) for i in order[:count]]

    cdef dict line(self, int first, int side, int max_length):
        cdef Node* node = &self.nodes[first]
        cdef int win = 1 if side == WHITE else -1
        rate = node.total / node.visits if node.visits else 0.5
        mate = None
        if self.s.solver and node.proven:
            mate = node.mate_plies + 1 if node.proven == win else -(node.mate_plies + 1)
        pv = [to_chess_move(node.move)]
        current = first
        while len(pv) < max_length and self.nodes[current].n_expanded > 0:
            current = self.chosen_child(current)
            pv.append(to_chess_move(self.nodes[current].move))
        return {"move": pv[0], "visits": node.visits,
                "win_rate": rate if side == WHITE else 1.0 - rate, "mate_plies": mate,
                "pv": pv}

    def root_info(self):
        """Root visits, proven result (plies, the root mover's view) and tree size."""
        cdef Node* root = &self.nodes[0]
        cdef int win = 1 if self.root.side == WHITE else -1
        mate = None
        if self.s.solver and root.proven:
            mate = root.mate_plies if root.proven == win else -root.mate_plies
        return {"visits": root.visits, "mate_plies": mate, "nodes": self.n_nodes}


def cp_from_win_rate(double rate):
    """Centipawns of a win rate on the logistic Elo scale (400 per factor 10 of odds),
    clamped to +-1500.

    >>> cp_from_win_rate(0.5), cp_from_win_rate(0.75)
    (0, 191)
    """
    rate = min(max(rate, 0.0001), 0.9999)
    return int(round(max(-1500.0, min(1500.0, -400.0 * log10(1.0 / rate - 1.0)))))


def playout_batch(config, long games, fen=None, probe=None):
    """``games`` playouts from ``fen`` (start position when None) with the playout rules
    and modifications of ``config``: counts of results and plies. The tablebase cut-off
    uses ``probe`` or, when None, the Gaviota tables."""
    if probe is None and config.tb_pieces:
        from engines.mcts import gaviota_prober
        probe = gaviota_prober()
    cdef Tree tree = Tree(config, probe)
    cdef long g, white = 0, black = 0, draws = 0
    cdef double value
    board = chess.Board(fen) if fen else chess.Board()
    tree.set_root(board)
    with nogil:
        for g in range(games):
            value = tree.playout(tree.root, tree.base)
            if value == 1.0:
                white += 1
            elif value == 0.0:
                black += 1
            else:
                draws += 1
    return {"games": games, "white_wins": white, "black_wins": black, "draws": draws,
            "plies": tree.playout_plies, "capped": tree.capped}
