# The compiled board shared by the engines' Cython modules (cimport engines.core.position).
# Squares are 0..63 with a1 = 0, h8 = 63, exactly as in python-chess; piece types are
# 0..5 here (python-chess uses 1..6), colours 0 = white, 1 = black.
from libc.stdint cimport uint64_t

ctypedef uint64_t u64
ctypedef int Move   # from | to << 6 | promotion type << 12 | flags (FLAG_*)

cdef enum:
    WHITE = 0
    BLACK = 1
    PAWN = 0
    KNIGHT = 1
    BISHOP = 2
    ROOK = 3
    QUEEN = 4
    KING = 5
    EMPTY = 12          # board[] value of an empty square; otherwise type + 6 * colour
    MAX_MOVES = 256
    MAX_GAME_PLIES = 8192
    FLAG_EP = 1 << 15
    FLAG_CASTLE = 1 << 16
    FLAG_DOUBLE = 1 << 17
    NO_MOVE = 0         # a1a1 is never a move
    # set_fen_bytes results (FEN_REASONS in position.pyx words each)
    FEN_OK = 0
    FEN_FIELDS = 1
    FEN_BOARD = 2
    FEN_RANKS = 3
    FEN_TURN = 4
    FEN_CASTLING = 5
    FEN_EP = 6
    FEN_COUNTERS = 7
    FEN_KINGS = 8
    # san_move results (SAN_ERRORS in position.pyx words each)
    SAN_OK = 0
    SAN_INVALID = 1
    SAN_ILLEGAL = 2
    SAN_AMBIGUOUS = 3

cdef struct Position:
    u64 bb[2][6]        # pieces by colour and type
    u64 occ[2]          # pieces by colour
    u64 all
    unsigned char board[64]
    int side            # colour to move
    int castling        # 1 = K, 2 = Q, 4 = k, 8 = q
    int ep              # square behind a pawn that just moved two, else -1 (as python-chess)
    int halfmove
    int fullmove
    u64 key             # Polyglot key without the en passant term (see full_key)

cdef struct MoveList:
    int n
    Move moves[256]

cdef inline int move_from(Move m) noexcept nogil:
    return m & 63

cdef inline int move_to(Move m) noexcept nogil:
    return (m >> 6) & 63

cdef inline int move_promo(Move m) noexcept nogil:
    return (m >> 12) & 7

cdef inline bint is_file(char c) noexcept nogil:
    return b'a' <= c <= b'h'

cdef inline bint is_rank(char c) noexcept nogil:
    return b'1' <= c <= b'8'

cdef int lsb(u64 b) noexcept nogil
cdef int popcount(u64 b) noexcept nogil
cdef u64 knight_attacks(int sq) noexcept nogil
cdef u64 king_attacks(int sq) noexcept nogil
cdef u64 pawn_attacks(int colour, int sq) noexcept nogil
cdef u64 bishop_attacks(int sq, u64 occ) noexcept nogil
cdef u64 rook_attacks(int sq, u64 occ) noexcept nogil
cdef u64 attackers_to(const Position* p, int sq, u64 occ) noexcept nogil
cdef int king_square(const Position* p, int colour) noexcept nogil
cdef bint in_check(const Position* p) noexcept nogil
cdef bint gives_check(const Position* p, Move m) noexcept nogil
cdef int generate_moves(const Position* p, MoveList* ml, bint noisy_only) noexcept nogil
cdef void make_move(Position* p, Move m) noexcept nogil
cdef void make_null(Position* p) noexcept nogil
cdef bint is_capture(const Position* p, Move m) noexcept nogil
cdef int captured_type(const Position* p, Move m) noexcept nogil
cdef u64 full_key(const Position* p) noexcept nogil
cdef u64 repetition_key(const Position* p) noexcept nogil
cdef bint has_legal_ep(const Position* p) noexcept nogil
cdef bint insufficient_material(const Position* p) noexcept nogil
cdef int see(const Position* p, Move m) noexcept nogil
cdef u64 perft(Position* p, int depth) noexcept nogil
cdef void set_start(Position* p) noexcept nogil
cdef int set_fen(Position* p, str fen) except -1
cdef str fen_of(const Position* p, bint full)
cdef int write_fen(const Position* p, unsigned char* buf) noexcept nogil
cdef int write_epd(const unsigned char* board, int side, int castling, int ep,
                   unsigned char* buf) noexcept nogil
cdef int set_fen_bytes(Position* p, const unsigned char* s, Py_ssize_t n) noexcept nogil
cdef int san_move(const Position* p, const char* s, int n, MoveList* legal, Move* out,
                  u64* others) noexcept nogil
cdef int write_san(const Position* p, Move m, u64 others, char* buf) noexcept nogil
cdef char check_mark(const Position* p, MoveList* replies) noexcept nogil
cdef int write_uci(Move m, char* buf) noexcept nogil
cdef str uci_of(Move m)
cdef str san_of(const Position* p, Move m, const MoveList* legal)
cdef Move parse_san(const Position* p, str san, const MoveList* legal) except -1
cdef Move parse_uci(const Position* p, str uci) except -1
cdef int set_from_board(Position* p, object board) except -1
cdef Move from_chess_move(const Position* p, object move) except -1
cdef object to_chess_move(Move m)
