# cython: language_level=3
"""The compiled alpha-beta search: iterative deepening driven from Python, PVS below.

Principal variation search with a transposition table, quiescence over captures, queen
promotions and check evasions, move ordering (TT move, SEE/MVV-LVA captures, two killers,
history), reverse futility and null-move pruning, check extension, mate-distance scores and draw detection
(repetition against the game history and the search path, 50-move rule, insufficient
material). Late-move reductions come from a pluggable reduction(d, m, state): the paper 003
default r = floor(log d * log m / 1.95) and "none" run in C, so does any object with a
``table()`` of 64 x 64 reductions (a learned formula), a Python callable is called back with
the GIL. The search runs without the GIL so ``stop()`` works from another thread.
"""
from libc.math cimport floor, log
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memset
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

from engines.alphabeta.evaluation cimport (EVAL_NNUE, EVAL_PESTO, EVAL_SIMPLE, evaluate,
                                           non_pawn_material)
from engines.core.position cimport (EMPTY, KING, MAX_GAME_PLIES, MAX_MOVES, NO_MOVE, PAWN,
                                    QUEEN, MoveList, Move, Position, captured_type, fen_of,
                                    from_chess_move, full_key, generate_moves, in_check,
                                    insufficient_material, is_capture, make_move, make_null,
                                    move_from, move_promo, move_to, see, set_from_board,
                                    to_chess_move, uci_of, u64)
from engines.nnue.network cimport AccumulatorStack, Network

import chess

from engines import mate as _mate

# Mate scores on engines.mate's scale (a mate in p plies scores MATE - p), read once at import.
cdef int MATE = _mate.MATE
cdef int MATE_BOUND = _mate.MATE_BOUND     # |score| above this is a mate distance
cdef int INF = MATE + 1

cdef enum:
    MAX_PLY = 120
    TT_EXACT = 0
    TT_LOWER = 1
    TT_UPPER = 2
    LMR_DEFAULT = 0
    LMR_NONE = 1
    LMR_CALLABLE = 2
    NULL_MOVE_MIN_DEPTH = 3
    LMR_MIN_DEPTH = 3
    RFP_MAX_DEPTH = 6               # reverse futility pruning at depths 1..6
    RFP_MARGIN = 100                # centipawns per ply of remaining depth
    TIME_CHECK_MASK = 1023          # look at the clock every 1024 nodes
    HISTORY_LIMIT = 400000          # halve history before it reaches the killer scores
    # eval "nnue-hybrid" (Stockfish 12's hybrid): where the HCE's score is this far from
    # zero the position is decided by material, and the HCE's cheap score stands.
    HYBRID_CP = 400

# Move ordering bands: TT move, good captures/promotions, killers, quiet history, bad captures.
cdef int SCORE_TT = 4000000
cdef int SCORE_GOOD_CAPTURE = 2000000
cdef int SCORE_KILLER_1 = 900000
cdef int SCORE_KILLER_2 = 800000
cdef int SCORE_BAD_CAPTURE = -2000000
cdef int MVV[6]
MVV[:] = [100, 320, 330, 500, 900, 0]

cdef struct TTEntry:
    u64 key
    Move move
    short score
    signed char depth
    unsigned char flag

cdef struct LogRecord:
    # One LMR decision, the fields of paper 003 appendix A.2 (Stockfish's Record).
    Position child
    Move move
    bint pv
    bint improving
    int depth
    int move_no
    int depth_new
    int reduction_org
    int reduction
    int depth_searched
    int alpha
    int value
    int ply
    int game_ply
    int np_white
    int np_black
    int static_eval

cdef double monotonic() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)    # the clock of Python's time.monotonic()
    return ts.tv_sec + ts.tv_nsec * 1e-9


cdef int default_reduction(int d, int m) noexcept nogil:
    """Paper 003: r = floor(log(d) * log(m) / 1.95)."""
    if d < 1 or m < 1:
        return 0
    return <int>floor(log(d) * log(m) / 1.95)


cdef class Searcher:
    """Search state: TT, killers, history, repetition keys and counters (all C)."""
    cdef TTEntry* tt
    cdef u64 tt_mask
    cdef int killers[MAX_PLY][2]
    cdef int history[2][64][64]
    cdef Move pv[MAX_PLY][MAX_PLY]
    cdef int pv_len[MAX_PLY]
    cdef int evals[MAX_PLY]
    cdef u64 keys[MAX_GAME_PLIES + MAX_PLY]   # game history, then the search path
    cdef int base                              # index of the root position in keys
    cdef Position root
    cdef public long nodes
    cdef long max_nodes
    cdef double deadline
    cdef int stop_flag
    cdef bint aborted
    cdef bint can_abort
    cdef public int seldepth
    cdef int eval_kind
    cdef public AccumulatorStack nnue     # eval "nnue" and "nnue-hybrid" only
    cdef bint hybrid                      # eval "nnue-hybrid"
    cdef int tempo                        # added to the network's score (eval "nnue")
    cdef int lmr_kind
    cdef object lmr_callable
    cdef object callback_error
    cdef double log_rate
    cdef u64 rng
    cdef LogRecord* records
    cdef int n_records
    cdef int records_capacity
    cdef int root_game_ply
    cdef signed char lmr_table[64][64]
    cdef bint root_filter                      # search only root_moves at the root
    cdef Move root_moves[MAX_MOVES]
    cdef int n_root_moves

    def __cinit__(self):
        self.tt = NULL
        self.records = NULL

    def __init__(self, str eval_name, lmr, int hash_mb, double log_rate, u64 seed=1,
                 Network network=None, int tempo=0):
        cdef u64 entries = 1
        cdef int d, m
        self.eval_kind = EVAL_SIMPLE if eval_name == "hce-simple" else EVAL_PESTO
        self.hybrid = eval_name == "nnue-hybrid"
        self.tempo = tempo
        if eval_name in ("nnue", "nnue-hybrid"):
            if network is None:
                raise ValueError("eval 'nnue' needs a network")
            self.eval_kind = EVAL_NNUE
            self.nnue = AccumulatorStack(network)
        table = lmr.table() if hasattr(lmr, "table") else None   # a formula of d and m
        if table is not None:
            self.lmr_kind = LMR_DEFAULT
        elif callable(lmr):
            self.lmr_kind = LMR_CALLABLE
            self.lmr_callable = lmr
        else:
            self.lmr_kind = LMR_NONE if lmr == "none" else LMR_DEFAULT
        while entries * 2 * sizeof(TTEntry) <= <u64>hash_mb * 1024 * 1024:
            entries *= 2
        self.tt = <TTEntry*> malloc(entries * sizeof(TTEntry))
        if self.tt == NULL:
            raise MemoryError(f"cannot allocate a {hash_mb} MB transposition table")
        self.tt_mask = entries - 1
        self.log_rate = log_rate
        self.rng = seed * 0x9E3779B97F4A7C15ULL + 1
        for d in range(64):
            for m in range(64):
                self.lmr_table[d][m] = table[d][m] if table is not None else default_reduction(d, m)
        self.clear()

    def __dealloc__(self):
        free(self.tt)
        free(self.records)

    def clear(self):
        """New game: forget the TT, killers and history."""
        memset(self.tt, 0, (self.tt_mask + 1) * sizeof(TTEntry))
        memset(self.killers, 0, sizeof(self.killers))
        memset(self.history, 0, sizeof(self.history))

    def stop(self):
        self.stop_flag = 1

    def set_root(self, board):
        """Root position and its game history (for repetitions) from a chess.Board."""
        cdef Position pos
        cdef int n = 0
        replay = board.root()
        set_from_board(&pos, replay)
        moves = board.move_stack[-(MAX_GAME_PLIES - 1):]
        if len(moves) < len(board.move_stack):
            replay = board.copy()
            for _ in moves:
                replay.pop()
            set_from_board(&pos, replay)
        self.keys[0] = full_key(&pos)
        for move in moves:
            make_move(&pos, from_chess_move(&pos, move))
            n += 1
            self.keys[n] = full_key(&pos)
        self.base = n
        self.root = pos
        if self.eval_kind == EVAL_NNUE:
            self.nnue.set_root(&self.root)
        self.root_game_ply = board.ply()
        self.root_filter = False

    def set_root_moves(self, moves):
        """Search only ``moves`` (chess.Move, legal at the root) at the root; None: every
        move. MultiPV excludes the lines already found this way, ``searchmoves`` restricts."""
        cdef int n = 0
        if moves is None:
            self.root_filter = False
            return
        if len(moves) > MAX_MOVES:
            raise ValueError(f"at most {MAX_MOVES} root moves, got {len(moves)}")
        for move in moves:
            self.root_moves[n] = from_chess_move(&self.root, move)
            n += 1
        self.n_root_moves = n
        self.root_filter = True

    cdef inline bint root_allowed(self, Move m) noexcept nogil:
        cdef int i
        for i in range(self.n_root_moves):
            if self.root_moves[i] == m:
                return True
        return False

    def static_eval(self):
        return self.static_value(&self.root, 0)

    def search_depth(self, int depth, long max_nodes, double deadline, bint can_abort):
        """One iteration at ``depth``; (completed, score, pv moves)."""
        cdef int score
        cdef int i
        self.max_nodes = max_nodes
        self.deadline = deadline
        self.can_abort = can_abort
        self.aborted = False
        self.callback_error = None
        if self.history_too_big():
            self.age_history()
        with nogil:
            score = self.search(&self.root, -INF, INF, depth, 0, False)
        if self.callback_error is not None:
            error, self.callback_error = self.callback_error, None
            raise error
        if self.aborted:
            return False, 0, []
        return True, score, [to_chess_move(self.pv[0][i]) for i in range(self.pv_len[0])]

    def reset_counters(self):
        self.nodes = 0
        self.seldepth = 0
        self.stop_flag = 0

    cdef bint history_too_big(self) noexcept nogil:
        cdef int c, f, t
        for c in range(2):
            for f in range(64):
                for t in range(64):
                    if self.history[c][f][t] > HISTORY_LIMIT:
                        return True
        return False

    cdef void age_history(self) noexcept nogil:
        cdef int c, f, t
        for c in range(2):
            for f in range(64):
                for t in range(64):
                    self.history[c][f][t] //= 2

    # --- helpers -------------------------------------------------------------------------

    cdef inline int static_value(self, const Position* p, int ply) noexcept nogil:
        cdef int hce
        if self.eval_kind == EVAL_NNUE:
            if self.hybrid:
                hce = evaluate(p, EVAL_PESTO)
                if hce > HYBRID_CP or hce < -HYBRID_CP:
                    return hce
            return self.nnue.evaluate(p, ply) + self.tempo
        return evaluate(p, self.eval_kind)

    cdef inline void moved(self, int ply, const Position* parent, Move m,
                           const Position* child) noexcept nogil:
        # The child's accumulators follow from the parent's and the move (NO_MOVE: a null move).
        if self.eval_kind == EVAL_NNUE:
            self.nnue.push(ply, parent, m, child)

    cdef inline bint out_of_time(self) noexcept nogil:
        if not self.can_abort:
            return False
        if self.stop_flag or (self.max_nodes > 0 and self.nodes >= self.max_nodes):
            return True
        return (self.nodes & TIME_CHECK_MASK) == 0 and self.deadline > 0 and monotonic() >= self.deadline

    cdef inline bint is_draw(self, const Position* p, int ply) noexcept nogil:
        cdef int i, idx = self.base + ply
        cdef u64 key = self.keys[idx]
        if p.halfmove >= 100 or insufficient_material(p):
            return True
        # Same side to move, back to the last capture or pawn move; one repetition is enough
        # (the second would only repeat the same moves).
        i = idx - 4
        while i >= 0 and i >= idx - p.halfmove:
            if self.keys[i] == key:
                return True
            i -= 2
        return False

    cdef inline u64 next_random(self) noexcept nogil:
        self.rng ^= self.rng >> 12
        self.rng ^= self.rng << 25
        self.rng ^= self.rng >> 27
        return self.rng * 2685821657736338717ULL

    cdef int reduction(self, int d, int m, bint pv, bint improving, int ply, int alpha,
                       int static_eval) noexcept nogil:
        if self.lmr_kind == LMR_NONE:
            return 0
        if self.lmr_kind == LMR_DEFAULT:
            return self.lmr_table[d if d < 64 else 63][m if m < 64 else 63]
        with gil:
            try:
                return int(self.lmr_callable(d, m, {
                    "pv": pv, "improving": improving, "ply": ply, "alpha": alpha,
                    "static_eval": static_eval}))
            except BaseException as exc:
                self.callback_error = exc
                self.stop_flag = 1
                self.can_abort = True
                return 0

    cdef void log_decision(self, const Position* child, Move m, bint pv, bint improving,
                           int depth, int move_no, int r_org, int r, int depth_searched,
                           int alpha, int value, int ply, int static_eval) noexcept nogil:
        cdef LogRecord* rec
        cdef int capacity
        if self.n_records == self.records_capacity:
            capacity = max(1024, 2 * self.records_capacity)
            rec = <LogRecord*> realloc(self.records, capacity * sizeof(LogRecord))
            if rec == NULL:
                return
            self.records = rec
            self.records_capacity = capacity
        rec = &self.records[self.n_records]
        self.n_records += 1
        rec.child = child[0]
        rec.move = m
        rec.pv = pv
        rec.improving = improving
        rec.depth = depth
        rec.move_no = move_no
        rec.depth_new = depth - 1 - r
        rec.reduction_org = r_org
        rec.reduction = r
        rec.depth_searched = depth_searched
        rec.alpha = alpha
        rec.value = value
        rec.ply = ply
        rec.game_ply = self.root_game_ply + ply
        rec.np_white = non_pawn_material(child, 0)
        rec.np_black = non_pawn_material(child, 1)
        rec.static_eval = static_eval

    def take_records(self) -> list:
        """The logged LMR decisions as row dicts, emptied from the buffer."""
        cdef int i
        cdef LogRecord* rec
        rows = []
        for i in range(self.n_records):
            rec = &self.records[i]
            rows.append({
                "fen": fen_of(&rec.child, True), "move": uci_of(rec.move), "pv": rec.pv,
                "improving": rec.improving, "depth": rec.depth, "move_no": rec.move_no,
                "depth_new": rec.depth_new, "reduction_org": rec.reduction_org,
                "reduction": rec.reduction, "depth_searched": rec.depth_searched,
                "alpha": rec.alpha, "value": rec.value, "ply": rec.ply,
                "game_ply": rec.game_ply, "np_material_w": rec.np_white,
                "np_material_b": rec.np_black, "np_material": rec.np_white + rec.np_black,
                "stat_eval": rec.static_eval})
        self.n_records = 0
        return rows

    # --- move ordering -------------------------------------------------------------------

    cdef void score_moves(self, const Position* p, const MoveList* ml, int* scores, Move tt_move,
                          int ply, bint qsearch) noexcept nogil:
        cdef int i, victim, s
        cdef Move m
        for i in range(ml.n):
            m = ml.moves[i]
            if m == tt_move:
                scores[i] = SCORE_TT
                continue
            victim = captured_type(p, m)
            if victim >= 0 or move_promo(m) == QUEEN:
                # MVV-LVA inside the band; losing captures (SEE < 0) go last.
                s = (MVV[victim] if victim >= 0 else 0) * 16 - p.board[move_from(m)] % 6
                if move_promo(m) == QUEEN:
                    s += 800 * 16
                if (victim >= 0 and MVV[victim] >= MVV[p.board[move_from(m)] % 6]) or see(p, m) >= 0:
                    scores[i] = SCORE_GOOD_CAPTURE + s
                else:
                    scores[i] = SCORE_BAD_CAPTURE + s
            elif qsearch:
                scores[i] = 0
            elif m == self.killers[ply][0]:
                scores[i] = SCORE_KILLER_1
            elif m == self.killers[ply][1]:
                scores[i] = SCORE_KILLER_2
            else:
                scores[i] = self.history[p.side][move_from(m)][move_to(m)]

    cdef inline Move pick(self, MoveList* ml, int* scores, int start) noexcept nogil:
        # Selection sort one step at a time: most nodes cut off after a move or two.
        cdef int i, best = start, s
        cdef Move m
        for i in range(start + 1, ml.n):
            if scores[i] > scores[best]:
                best = i
        m = ml.moves[best]
        ml.moves[best] = ml.moves[start]
        ml.moves[start] = m
        s = scores[best]
        scores[best] = scores[start]
        scores[start] = s
        return m

    # --- search --------------------------------------------------------------------------

    cdef int search(self, Position* p, int alpha, int beta, int depth, int ply,
                    bint null_ok) noexcept nogil:
        cdef bint pv_node = beta - alpha > 1
        cdef bint check, improving, quiet, gives
        cdef int idx = self.base + ply
        cdef int static_eval, score, best, orig_alpha = alpha, r, r_org, i, j, tt_score
        cdef int searched = 0, new_depth, depth_searched
        cdef Move m, best_move = NO_MOVE, tt_move = NO_MOVE
        cdef u64 key = self.keys[idx]
        cdef TTEntry* entry
        cdef Position child
        cdef MoveList ml
        cdef int scores[MAX_MOVES]
        self.pv_len[ply] = 0
        if ply > 0:
            if self.is_draw(p, ply):
                return 0
            # Mate distance pruning: no line can beat a mate already found nearer the root.
            alpha = max(alpha, -MATE + ply)
            beta = min(beta, MATE - ply - 1)
            if alpha >= beta:
                return alpha
        if ply >= MAX_PLY - 8:
            return self.static_value(p, ply)
        check = in_check(p)
        if check:
            depth += 1
        if depth <= 0:
            return self.qsearch(p, alpha, beta, ply)
        self.nodes += 1
        if ply > self.seldepth:
            self.seldepth = ply
        if self.out_of_time():
            self.aborted = True
            return 0
        entry = &self.tt[key & self.tt_mask]
        if entry.key == key:
            tt_move = entry.move
            if not pv_node and entry.depth >= depth:
                tt_score = entry.score
                if tt_score > MATE_BOUND:
                    tt_score -= ply
                elif tt_score < -MATE_BOUND:
                    tt_score += ply
                if (entry.flag == TT_EXACT or (entry.flag == TT_LOWER and tt_score >= beta)
                        or (entry.flag == TT_UPPER and tt_score <= alpha)):
                    return tt_score
        static_eval = -INF if check else self.static_value(p, ply)
        self.evals[ply] = static_eval
        improving = ply >= 2 and not check and static_eval > self.evals[ply - 2]
        # Reverse futility: a quiet node far above beta near the leaves will not fall back.
        if (not pv_node and not check and depth <= RFP_MAX_DEPTH and beta > -MATE_BOUND
                and beta < MATE_BOUND and static_eval - RFP_MARGIN * depth >= beta):
            return static_eval
        # Null move: if passing still fails high, a real move will too (not in zugzwang-prone
        # pawn endings: the side to move needs a piece).
        if (not pv_node and not check and null_ok and depth >= NULL_MOVE_MIN_DEPTH
                and static_eval >= beta and non_pawn_material(p, p.side) > 0):
            child = p[0]
            make_null(&child)
            self.moved(ply + 1, p, NO_MOVE, &child)
            self.keys[idx + 1] = full_key(&child)
            score = -self.search(&child, -beta, -beta + 1, depth - 1 - (3 + depth // 6), ply + 1, False)
            if self.aborted:
                return 0
            if score >= beta:
                return beta if score < MATE_BOUND else score
        generate_moves(p, &ml, False)
        if ml.n == 0:
            return -MATE + ply if check else 0
        self.score_moves(p, &ml, scores, tt_move, ply, False)
        best = -INF
        for i in range(ml.n):
            m = self.pick(&ml, scores, i)
            if ply == 0 and self.root_filter and not self.root_allowed(m):
                continue
            quiet = not is_capture(p, m) and not move_promo(m)
            child = p[0]
            make_move(&child, m)
            self.moved(ply + 1, p, m, &child)
            self.keys[idx + 1] = full_key(&child)
            searched += 1
            if searched == 1:
                score = -self.search(&child, -beta, -alpha, depth - 1, ply + 1, True)
            else:
                r = 0
                r_org = -1
                gives = in_check(&child)
                if (depth >= LMR_MIN_DEPTH and quiet and not check and not gives
                        and m != self.killers[ply][0] and m != self.killers[ply][1]):
                    r_org = self.reduction(depth, searched, pv_node, improving, ply, alpha,
                                           static_eval)
                    r = max(0, min(r_org, depth - 2))
                new_depth = depth - 1 - r
                score = -self.search(&child, -alpha - 1, -alpha, new_depth, ply + 1, True)
                depth_searched = new_depth
                if r > 0 and score > alpha and not self.aborted:
                    score = -self.search(&child, -alpha - 1, -alpha, depth - 1, ply + 1, True)
                    depth_searched = depth - 1
                if pv_node and score > alpha and score < beta and not self.aborted:
                    score = -self.search(&child, -beta, -alpha, depth - 1, ply + 1, True)
                    depth_searched = depth - 1
                if (r_org >= 0 and self.log_rate > 0 and not self.aborted
                        and (self.next_random() >> 11) * (1.0 / 9007199254740992.0) < self.log_rate):
                    self.log_decision(&child, m, pv_node, improving, depth, searched, r_org, r,
                                      depth_searched, alpha, score, ply, static_eval)
            if self.aborted:
                return 0
            if score > best:
                best = score
                best_move = m
                if score > alpha:
                    alpha = score
                    self.pv[ply][0] = m
                    for j in range(self.pv_len[ply + 1]):
                        self.pv[ply][j + 1] = self.pv[ply + 1][j]
                    self.pv_len[ply] = self.pv_len[ply + 1] + 1
                    if score >= beta:
                        if quiet:
                            if self.killers[ply][0] != m:
                                self.killers[ply][1] = self.killers[ply][0]
                                self.killers[ply][0] = m
                            self.history[p.side][move_from(m)][move_to(m)] += depth * depth
                        break
        if ply == 0 and self.root_filter:
            return best        # the best of some root moves is not the position's value
        entry.key = key
        entry.move = best_move
        entry.depth = depth
        entry.flag = TT_LOWER if best >= beta else (TT_EXACT if best > orig_alpha else TT_UPPER)
        entry.score = best + ply if best > MATE_BOUND else (best - ply if best < -MATE_BOUND else best)
        return best

    cdef int qsearch(self, Position* p, int alpha, int beta, int ply) noexcept nogil:
        cdef bint check
        cdef int best, score, i
        cdef Move m
        cdef Position child
        cdef MoveList ml
        cdef int scores[MAX_MOVES]
        self.pv_len[ply] = 0
        self.nodes += 1
        if ply > self.seldepth:
            self.seldepth = ply
        if self.out_of_time():
            self.aborted = True
            return 0
        if ply >= MAX_PLY - 1:
            return self.static_value(p, ply)
        check = in_check(p)
        if check:
            # In check every evasion is searched: no stand-pat, and no move means mate.
            if generate_moves(p, &ml, False) == 0:
                return -MATE + ply
            best = -INF
        else:
            best = self.static_value(p, ply)
            if best >= beta:
                return best
            if best > alpha:
                alpha = best
            generate_moves(p, &ml, True)
        self.score_moves(p, &ml, scores, NO_MOVE, ply, True)
        for i in range(ml.n):
            m = self.pick(&ml, scores, i)
            if not check and scores[i] < SCORE_GOOD_CAPTURE - 100000:
                break          # the rest lose material by SEE
            child = p[0]
            make_move(&child, m)
            self.moved(ply + 1, p, m, &child)
            score = -self.qsearch(&child, -beta, -alpha, ply + 1)
            if self.aborted:
                return 0
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    if score >= beta:
                        break
        return best
