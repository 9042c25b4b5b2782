# cython: language_level=3
"""Stockfish's ``.binpack`` training data, read and written in compiled code.

The layout (Stockfish ``docs/binpack.md``; nnue-pytorch's data loader ``binpack.h``,
``training_data_entry.h`` and ``chess.h`` implement it)::

    file      := block*             block := "BINP" <u32 size, little endian> chain*
    chain     := stem movetext      stem  := pos(24) move(2) score(2) ply_result(2) rule50(2)
    movetext  := <u16 count, big endian> (move score)*, packed bit by bit, most significant first

- ``pos``: the occupied squares (u64, big endian), then one nibble per occupied square in
  square order (a1 = 0 first), low nibble first: ``2 * type + colour`` (pawn .. king, white 0),
  or 12 a pawn that just moved two squares (en passant possible), 13/14 a white/black rook that
  can still castle, 15 the black king when Black is to move.
- ``move``: 2 bits type (normal, promotion, castle, en passant), 6 bits from, 6 bits to, 2 bits
  promotion piece (knight .. queen); castling is the king taking its own rook; 0 a null move.
- ``score``, ``ply_result``, ``rule50``: big endian; signed values are stored with
  ``signedToUnsigned`` (sign in bit 0); ``ply_result`` = ply | result << 14, result the game's
  from the side to move's view (-1, 0, 1).
- each following ply of a chain: the index of the moving piece among the mover's pieces (in
  square order), then the index of the move among that piece's pseudo-moves (pawn pushes and
  captures, king steps then castlings; four per target on a promotion), each in just enough
  bits to count them; then the score as ``signedToUnsigned(score + previous score)`` in blocks of
  4 bits plus a continuation bit (scores alternate sides, so the previous one is negated).

An en passant square counts only when a capture there is legal (as nnue-pytorch's loader
keeps it), which is python-chess's legal en passant. Keys and FENs of the positions come from
the engine core: the Polyglot key and python-chess's ``board.epd()``.
"""
from libc.stdint cimport int16_t, int64_t, uint8_t, uint16_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memset

import numpy as np
import pyarrow as pa

from engines.core.position cimport (
    BISHOP, BLACK, EMPTY, FLAG_CASTLE, FLAG_EP, FEN_OK, KING, KNIGHT, PAWN, QUEEN, ROOK, WHITE,
    Move, MoveList, Position, bishop_attacks, full_key, generate_moves, has_legal_ep,
    king_attacks, knight_attacks, lsb, make_move, pawn_attacks, popcount, rook_attacks,
    set_fen_bytes, write_epd, write_fen, write_uci,
)
from engines.core.position import FEN_REASONS

ctypedef uint64_t u64

cdef enum:
    STEM_BYTES = 32
    CHAIN_HEAD = 34          # a stem and its movetext count
    SCORE_BLOCK = 4
    FEN_MAX = 100
    NULL_MOVE_TYPE = -1

CHUNK_BYTES = 1 << 20        # a writer starts a new block once this much is packed
MAX_CHUNK_BYTES = 100 << 20  # nnue-pytorch refuses larger blocks as malformed
MAGIC = b"BINP"


class BinpackError(ValueError):
    """A binpack entry that cannot be written (bad FEN, illegal move): quotes it."""


# --- small helpers, exactly as binpack.h spells them ---------------------------------------

cdef inline uint16_t signed_to_unsigned(int16_t a) noexcept nogil:
    cdef uint16_t r = <uint16_t>a
    if r & 0x8000:
        r ^= 0x7FFF
    return <uint16_t>((r << 1) | (r >> 15))


cdef inline int16_t unsigned_to_signed(uint16_t r) noexcept nogil:
    cdef uint16_t v = <uint16_t>((r >> 1) | (0x8000 if r & 1 else 0))
    if v & 0x8000:
        v ^= 0x7FFF
    return <int16_t>v


cdef inline int used_bits_safe(unsigned int value) noexcept nogil:
    """Bits needed for an index below ``value`` (0 for one choice or none)."""
    cdef int n = 0
    if value == 0:
        return 0
    value -= 1
    while value:
        n += 1
        value >>= 1
    return n


cdef inline int nth_set_bit(u64 b, int n) noexcept nogil:
    """The square of the ``n``-th (0-based) set bit of ``b``, or -1 when it has fewer."""
    cdef int i
    for i in range(n):
        if not b:
            return -1
        b &= b - 1
    return lsb(b) if b else -1


cdef inline u64 bit(int sq) noexcept nogil:
    return (<u64>1) << sq


cdef inline u64 below(int sq) noexcept nogil:
    return bit(sq) - 1


cdef inline int sf_ep(const Position* p) noexcept nogil:
    """The en passant square as the binpack sees it: only when a capture there is legal."""
    if p.ep >= 0 and has_legal_ep(p):
        return p.ep
    return -1


def signed_to_unsigned_py(int value) -> int:
    """``signedToUnsigned`` of binpack.h, for tests and hand-built fixtures.

    >>> [signed_to_unsigned_py(v) for v in (0, 1, -1, 2, -2, 100)]
    [0, 2, 1, 4, 3, 200]
    """
    return signed_to_unsigned(<int16_t>value)


def unsigned_to_signed_py(int value) -> int:
    """The inverse of :func:`signed_to_unsigned_py`."""
    return unsigned_to_signed(<uint16_t>value)


# --- growable output buffers ---------------------------------------------------------------

cdef class Buffer:
    """Bytes appended in C, handed to numpy at the end."""
    cdef unsigned char* data
    cdef Py_ssize_t size, capacity

    def __cinit__(self, Py_ssize_t capacity=4096):
        self.data = <unsigned char*>malloc(capacity)
        self.size = 0
        self.capacity = capacity
        if self.data == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.data)

    cdef unsigned char* reserve(self, Py_ssize_t extra) except NULL:
        cdef Py_ssize_t wanted = self.size + extra
        cdef unsigned char* grown
        if wanted > self.capacity:
            while self.capacity < wanted:
                self.capacity *= 2
            grown = <unsigned char*>realloc(self.data, self.capacity)
            if grown == NULL:
                raise MemoryError()
            self.data = grown
        return self.data + self.size

    cdef int append(self, const void* source, Py_ssize_t n) except -1:
        memcpy(self.reserve(n), source, n)
        self.size += n
        return 0

    def to_bytes(self) -> bytes:
        return (<char*>self.data)[:self.size]

    def array(self, dtype):
        return np.frombuffer(self.to_bytes(), dtype).copy()


cdef class Entries:
    """The decoded entries of a chunk, column by column."""
    cdef Buffer keys, fens, fen_ends, moves, move_ends, scores, plies, results, rule50s
    cdef Buffer offsets, sides
    cdef public list errors
    cdef Py_ssize_t count

    def __cinit__(self):
        self.keys, self.fens, self.fen_ends = Buffer(), Buffer(), Buffer()
        self.moves, self.move_ends, self.scores = Buffer(), Buffer(), Buffer()
        self.plies, self.results, self.rule50s = Buffer(), Buffer(), Buffer()
        self.offsets, self.sides = Buffer(), Buffer()
        self.errors = []
        self.count = 0

    cdef int add(self, const Position* p, Move m, int16_t score, uint16_t ply, int result,
                 int rule50, int64_t offset) except -1:
        cdef u64 key = full_key(p)
        cdef unsigned char fen[FEN_MAX]
        cdef int n = write_fen(p, fen)
        cdef int end
        cdef char uci[5]
        cdef int length = write_uci(m, uci) if m else 0   # no move: an empty UCI
        cdef signed char side = p.side
        cdef signed char r = result
        cdef uint16_t r50 = rule50
        self.keys.append(&key, 8)
        self.fens.append(fen, n)
        end = <int>self.fens.size
        self.fen_ends.append(&end, 4)
        self.moves.append(uci, length)
        end = <int>self.moves.size
        self.move_ends.append(&end, 4)
        self.scores.append(&score, 2)
        self.plies.append(&ply, 2)
        self.results.append(&r, 1)
        self.rule50s.append(&r50, 2)
        self.offsets.append(&offset, 8)
        self.sides.append(&side, 1)
        self.count += 1
        return 0

    def columns(self) -> dict:
        """The entries as numpy arrays and Arrow strings (move: null for a null move)."""
        n = self.count
        fen_offsets = np.concatenate([[0], self.fen_ends.array(np.int32)]).astype(np.int32)
        move_offsets = np.concatenate([[0], self.move_ends.array(np.int32)]).astype(np.int32)
        fens = pa.StringArray.from_buffers(n, pa.py_buffer(fen_offsets),
                                           pa.py_buffer(self.fens.to_bytes() or b"\0"))
        moves = pa.StringArray.from_buffers(n, pa.py_buffer(move_offsets),
                                            pa.py_buffer(self.moves.to_bytes() or b"\0"))
        lengths = np.diff(move_offsets)
        moves = pa.array(moves.to_numpy(zero_copy_only=False), pa.string(),
                         mask=lengths == 0) if (lengths == 0).any() else moves
        return {"key": self.keys.array(np.uint64), "fen": fens, "move": moves,
                "score": self.scores.array(np.int16), "ply": self.plies.array(np.uint16),
                "result": self.results.array(np.int8), "rule50": self.rule50s.array(np.uint16),
                "offset": self.offsets.array(np.int64), "side": self.sides.array(np.int8)}


cdef Move find_legal(const Position* p, int frm, int to, int promo) noexcept nogil:
    """The legal move from ``frm`` to ``to`` (king destination for castling), or 0."""
    cdef MoveList legal
    cdef int i
    generate_moves(p, &legal, False)
    for i in range(legal.n):
        if legal.moves[i] & 0x7FFF == frm | (to << 6) | (promo << 12):
            return legal.moves[i]
    return 0


# --- reading -------------------------------------------------------------------------------

cdef class BitReader:
    """The movetext bit reader of binpack.h (``extractBitsLE8``), bounds checked."""
    cdef const unsigned char* data
    cdef Py_ssize_t available, offset
    cdef int bits_left
    cdef bint cut

    cdef void start(self, const unsigned char* data, Py_ssize_t available) noexcept:
        self.data, self.available, self.offset, self.bits_left = data, available, 0, 8
        self.cut = False

    cdef int bits(self, int count) noexcept:
        cdef unsigned int byte, value, spill
        if count == 0:
            return 0
        if self.bits_left == 0:
            self.offset += 1
            self.bits_left = 8
        if self.offset >= self.available:
            self.cut = True
            return 0
        byte = <uint8_t>(self.data[self.offset] << (8 - self.bits_left))
        value = byte >> (8 - count)
        if count > self.bits_left:
            spill = count - self.bits_left
            if self.offset + 1 >= self.available:
                self.cut = True
                return 0
            value |= self.data[self.offset + 1] >> (8 - spill)
            self.bits_left += 8
            self.offset += 1
        self.bits_left -= count
        return value

    cdef uint16_t vle16(self) noexcept:
        cdef uint16_t value = 0
        cdef int shift = 0, block
        while not self.cut:
            block = self.bits(SCORE_BLOCK + 1)
            value |= (block & 15) << shift
            if not (block >> SCORE_BLOCK):
                break
            shift += SCORE_BLOCK
            if shift > 16:
                self.cut = True
        return value

    cdef Py_ssize_t bytes_read(self) noexcept:
        return self.offset + (self.bits_left != 8)


cdef inline uint64_t big_endian(const unsigned char* s, int n) noexcept nogil:
    cdef uint64_t v = 0
    cdef int i
    for i in range(n):
        v = (v << 8) | s[i]
    return v


cdef int stem_position(Position* p, const unsigned char* s, int* ep_out, int rule50,
                       int ply) noexcept:
    """Set ``p`` from a stem's 24 position bytes; 0, or a negative code when they are no
    position (-1 a bad nibble, -2 a rook or ep pawn where none can be, -3 FEN refused)."""
    cdef u64 occupied = big_endian(s, 8)
    cdef unsigned char board[64]
    cdef unsigned char fen[FEN_MAX]
    cdef int i = 0, sq, nib, n, castling = 0, side = WHITE, ep = -1
    cdef u64 b = occupied
    if popcount(occupied) > 32:
        return -1
    memset(board, EMPTY, 64)
    while b:
        sq = lsb(b)
        b &= b - 1
        nib = (s[8 + i // 2] >> (4 * (i & 1))) & 15
        i += 1
        if nib < 12:                    # 2 * type + colour
            board[sq] = (nib >> 1) + 6 * (nib & 1)
        elif nib == 12:
            if sq >> 3 == 3:
                board[sq], ep = PAWN, sq - 8
            elif sq >> 3 == 4:
                board[sq], ep = PAWN + 6, sq + 8
            else:
                return -2
        elif nib == 13:
            board[sq] = ROOK
            if sq == 0:
                castling |= 2
            elif sq == 7:
                castling |= 1
            else:
                return -2
        elif nib == 14:
            board[sq] = ROOK + 6
            if sq == 56:
                castling |= 8
            elif sq == 63:
                castling |= 4
            else:
                return -2
        else:
            board[sq], side = KING + 6, BLACK
    n = write_epd(board, side, castling, ep, fen)
    n += write_counter(&fen[n], rule50)
    n += write_counter(&fen[n], ply // 2 + 1)
    if set_fen_bytes(p, fen, n) != FEN_OK:
        return -3
    ep_out[0] = ep
    return 0


cdef int write_counter(unsigned char* out, int value) noexcept nogil:
    cdef unsigned char digits[12]
    cdef int n = 0, i
    out[0] = 32
    if value == 0:
        out[1] = 48
        return 2
    while value:
        digits[n] = 48 + value % 10
        value //= 10
        n += 1
    for i in range(n):
        out[1 + i] = digits[n - 1 - i]
    return n + 1


cdef Move stem_move(const Position* p, uint16_t packed, int* kind) noexcept:
    """The core move of a stem's move field; ``kind`` -1 for a null move; 0 if illegal."""
    cdef int move_type = packed >> 14, frm = (packed >> 8) & 63, to = (packed >> 2) & 63
    cdef int promo = 0
    kind[0] = move_type
    if packed == 0:
        kind[0] = NULL_MOVE_TYPE
        return 0
    if move_type == 1:
        promo = KNIGHT + (packed & 3)
    elif move_type == 2:
        to = frm + 2 if to > frm else frm - 2
    return find_legal(p, frm, to, promo)


cdef Move next_move(const Position* p, int ep, BitReader reader) noexcept:
    """Read one movetext move for ``p`` (``ep``: the binpack's en passant square); the legal
    core move, or 0 when the bits name none (or run out)."""
    cdef int side = p.side
    cdef u64 ours = p.occ[side], theirs = p.occ[side ^ 1], occupied = p.all
    cdef u64 targets, destinations
    cdef int frm, to, kind, move_id, forward, count, rights, promo = 0, start, last
    frm = nth_set_bit(ours, reader.bits(used_bits_safe(popcount(ours))))
    if frm < 0 or reader.cut:
        return 0
    kind = p.board[frm] - 6 * side
    if kind == PAWN:
        forward = 8 if side == WHITE else -8
        start = 1 if side == WHITE else 6
        last = 6 if side == WHITE else 1
        targets = theirs | (bit(ep) if ep >= 0 else 0)
        destinations = pawn_attacks(side, frm) & targets
        if not occupied & bit(frm + forward):
            destinations |= bit(frm + forward)
            if frm >> 3 == start and not occupied & bit(frm + 2 * forward):
                destinations |= bit(frm + 2 * forward)
        count = popcount(destinations)
        if frm >> 3 == last:
            move_id = reader.bits(used_bits_safe(count * 4))
            to = nth_set_bit(destinations, move_id // 4)
            promo = KNIGHT + move_id % 4
        else:
            to = nth_set_bit(destinations, reader.bits(used_bits_safe(count)))
    elif kind == KING:
        targets = king_attacks(frm) & ~ours
        count = popcount(targets)
        rights = p.castling & (3 if side == WHITE else 12)
        move_id = reader.bits(used_bits_safe(count + popcount(rights)))
        if move_id >= count:
            long_right = 2 if side == WHITE else 8
            to = frm - 2 if move_id == count and rights & long_right else frm + 2
        else:
            to = nth_set_bit(targets, move_id)
    else:
        targets = piece_attacks(kind, frm, occupied) & ~ours
        to = nth_set_bit(targets, reader.bits(used_bits_safe(popcount(targets))))
    if to < 0 or reader.cut:
        return 0
    return find_legal(p, frm, to, promo)


cdef inline u64 piece_attacks(int kind, int sq, u64 occupied) noexcept nogil:
    if kind == KNIGHT:
        return knight_attacks(sq)
    if kind == BISHOP:
        return bishop_attacks(sq, occupied)
    if kind == ROOK:
        return rook_attacks(sq, occupied)
    if kind == QUEEN:
        return bishop_attacks(sq, occupied) | rook_attacks(sq, occupied)
    return 0


def decode_chunk(const unsigned char[:] chunk, int64_t base=0) -> Entries:
    """Every entry of one block's data (its bytes after the 8-byte header; ``base``: the
    offset of those bytes in the file). Errors (offset, kind, message) are in ``errors``: a
    chain that cannot be read ends the block there, a chain cut short keeps its plies before
    the cut."""
    cdef Entries out = Entries()
    cdef BitReader reader = BitReader()
    cdef Py_ssize_t size = chunk.shape[0], at = 0, stem_at
    cdef const unsigned char* s
    cdef Position pos
    cdef Move move, following
    cdef int ep, kind, code, result, rule50, k
    cdef uint16_t packed, plies
    cdef int16_t score, last_score
    cdef uint16_t ply
    while at < size:
        stem_at = at
        if size - at < CHAIN_HEAD:
            out.errors.append((base + at, "bad_chain", f"chain cut: {size - at} bytes left at "
                               f"the end of the block, a chain needs at least {CHAIN_HEAD}"))
            break
        s = &chunk[at]
        packed = <uint16_t>big_endian(s + 24, 2)
        score = unsigned_to_signed(<uint16_t>big_endian(s + 26, 2))
        ply = <uint16_t>big_endian(s + 28, 2)
        result = unsigned_to_signed(ply >> 14)
        ply &= 0x3FFF
        rule50 = <int>big_endian(s + 30, 2)
        plies = <uint16_t>big_endian(s + 32, 2)
        code = stem_position(&pos, s, &ep, rule50 & 0xFF, ply)
        if code:
            out.errors.append((base + at, "bad_chain", f"stem at byte {base + at} holds no "
                               f"position ({stem_problem(code)}): rest of the block "
                               f"({size - at} bytes) not read"))
            break
        move = stem_move(&pos, packed, &kind)
        if move == 0 and kind != NULL_MOVE_TYPE:
            out.errors.append((base + at, "bad_chain", f"stem at byte {base + at}: move "
                               f"{packed:#06x} is not legal in {fen_text(&pos)}: rest of the "
                               f"block ({size - at} bytes) not read"))
            break
        out.add(&pos, move, score, ply, result, rule50, base + stem_at)
        at += CHAIN_HEAD
        if plies == 0:
            continue
        if move == 0:
            out.errors.append((base + stem_at, "bad_chain", f"chain at byte {base + stem_at} "
                               f"continues after a null move: rest of the block not read"))
            break
        reader.start(&chunk[at], size - at)
        last_score = -score
        for k in range(plies):
            make_move(&pos, move)
            ep = sf_ep(&pos)
            following = next_move(&pos, ep, reader)
            if following == 0:
                break
            score = <int16_t>(last_score + unsigned_to_signed(reader.vle16()))
            if reader.cut:
                break
            last_score = -score
            result = -result
            out.add(&pos, following, score, <uint16_t>(ply + k + 1), result,
                    pos.halfmove, base + stem_at)
            move = following
        if reader.cut or k < plies - 1 or following == 0:
            what = "cut" if reader.cut else "holds an illegal move"
            out.errors.append((base + stem_at, "bad_chain",
                               f"chain at byte {base + stem_at} {what} after {k} of {plies} "
                               f"plies: rest of the block ({size - at} bytes) not read"))
            break
        at += reader.bytes_read()
    return out


cdef str stem_problem(int code):
    return {-1: "a bad nibble", -2: "a castling rook or en passant pawn out of place",
            -3: "the pieces make no legal FEN"}.get(code, "unknown")


cdef str fen_text(const Position* p):
    cdef unsigned char fen[FEN_MAX]
    cdef int n = write_fen(p, fen)
    return (<char*>fen)[:n].decode("ascii")


# --- writing -------------------------------------------------------------------------------

cdef class BitWriter:
    """The movetext bit writer of binpack.h (``addBitsLE8``, ``addBitsVle16``)."""
    cdef Buffer out
    cdef int bits_left

    def __cinit__(self):
        self.out = Buffer()
        self.bits_left = 0

    cdef void clear(self) noexcept:
        self.out.size = 0
        self.bits_left = 0

    cdef int bits(self, unsigned int value, int count) except -1:
        cdef unsigned char byte
        cdef int spill
        if count == 0:
            return 0
        if self.bits_left == 0:
            byte = <uint8_t>(value << (8 - count))
            self.out.append(&byte, 1)
            self.bits_left = 8
        elif count <= self.bits_left:
            self.out.data[self.out.size - 1] |= <uint8_t>(value << (self.bits_left - count))
        else:
            spill = count - self.bits_left
            self.out.data[self.out.size - 1] |= <uint8_t>(value >> spill)
            byte = <uint8_t>(value << (8 - spill))
            self.out.append(&byte, 1)
            self.bits_left += 8
        self.bits_left -= count
        return 0

    cdef int vle16(self, uint16_t value) except -1:
        cdef unsigned int block
        while True:
            block = (value & 15) | ((1 if value > 15 else 0) << SCORE_BLOCK)
            self.bits(block, SCORE_BLOCK + 1)
            value >>= SCORE_BLOCK
            if value == 0:
                break
        return 0


cdef int compress_position(const Position* p, unsigned char* out) noexcept nogil:
    """The 24 ``pos`` bytes of a stem."""
    cdef u64 occupied = p.all, b = occupied
    cdef int i = 0, sq, piece, colour, kind, nib, ep = sf_ep(p), rank
    memset(out, 0, 24)
    for i in range(8):
        out[i] = (occupied >> (56 - 8 * i)) & 0xFF
    i = 0
    while b:
        sq = lsb(b)
        b &= b - 1
        piece = p.board[sq]
        colour, kind = piece // 6, piece % 6
        nib = 2 * kind + colour
        rank = sq >> 3
        if kind == PAWN and ep >= 0 and (sq & 7) == (ep & 7) and (
                (rank == 3 and p.side == BLACK) or (rank == 4 and p.side == WHITE)):
            nib = 12
        elif kind == ROOK and colour == WHITE and (
                (sq == 0 and p.castling & 2) or (sq == 7 and p.castling & 1)):
            nib = 13
        elif kind == ROOK and colour == BLACK and (
                (sq == 56 and p.castling & 8) or (sq == 63 and p.castling & 4)):
            nib = 14
        elif kind == KING and colour == BLACK and p.side == BLACK:
            nib = 15
        out[8 + i // 2] |= nib << (4 * (i & 1))
        i += 1
    return 0


cdef uint16_t compress_move(Move m) noexcept nogil:
    """The stem's 2-byte move of a core move (0: none)."""
    cdef int frm = m & 63, to = (m >> 6) & 63, promo = (m >> 12) & 7
    if m == 0:
        return 0
    if m & FLAG_CASTLE:
        return <uint16_t>((2 << 14) | (frm << 8) | ((frm + 3 if to > frm else frm - 4) << 2))
    if m & FLAG_EP:
        return <uint16_t>((3 << 14) | (frm << 8) | (to << 2))
    if promo:
        return <uint16_t>((1 << 14) | (frm << 8) | (to << 2) | (promo - KNIGHT))
    return <uint16_t>((frm << 8) | (to << 2))


cdef int move_index(const Position* p, Move m, int* count) noexcept nogil:
    """The movetext index of ``m`` among its piece's pseudo-moves; ``count`` their number."""
    cdef int side = p.side, frm = m & 63, to = (m >> 6) & 63, promo = (m >> 12) & 7
    cdef u64 ours = p.occ[side], theirs = p.occ[side ^ 1], occupied = p.all
    cdef u64 targets, destinations
    cdef int kind = p.board[frm] - 6 * side, forward, start, last, ep, move_id, rights
    if kind == PAWN:
        forward = 8 if side == WHITE else -8
        start = 1 if side == WHITE else 6
        last = 6 if side == WHITE else 1
        ep = sf_ep(p)
        targets = theirs | (bit(ep) if ep >= 0 else 0)
        destinations = pawn_attacks(side, frm) & targets
        if not occupied & bit(frm + forward):
            destinations |= bit(frm + forward)
            if frm >> 3 == start and not occupied & bit(frm + 2 * forward):
                destinations |= bit(frm + 2 * forward)
        move_id = popcount(destinations & below(to))
        count[0] = popcount(destinations)
        if frm >> 3 == last:
            move_id = move_id * 4 + promo - KNIGHT
            count[0] *= 4
        return move_id
    if kind == KING:
        targets = king_attacks(frm) & ~ours
        rights = p.castling & (3 if side == WHITE else 12)
        count[0] = popcount(targets) + popcount(rights)
        if m & FLAG_CASTLE:
            move_id = popcount(targets) - 1
            if rights & (2 if side == WHITE else 8):
                move_id += 1
            if to > frm:
                move_id += 1
            return move_id
        return popcount(targets & below(to))
    targets = piece_attacks(kind, frm, occupied) & ~ours
    count[0] = popcount(targets)
    return popcount(targets & below(to))


cdef bint same_position(const Position* a, const Position* b) noexcept nogil:
    """Equal as the binpack compares them: pieces, side, castling, en passant square."""
    cdef int c, t
    if a.side != b.side or a.castling != b.castling or sf_ep(a) != sf_ep(b):
        return False
    for c in range(2):
        for t in range(6):
            if a.bb[c][t] != b.bb[c][t]:
                return False
    return True


cdef class BinpackWriter:
    """Entries to a binpack stream, chained as Stockfish's writer chains them: an entry that
    continues the previous one (its position follows from that one's move, its ply is one
    more and its result the other side's) joins its chain; any other starts a new stem.
    ``close()`` writes what is left (the stream stays open)."""
    cdef object stream
    cdef Buffer packed
    cdef BitWriter movetext
    cdef Position last
    cdef Move last_move
    cdef int last_ply, last_result, plies
    cdef int16_t last_score
    cdef bint first
    cdef public long long entries, stems, bytes_written

    def __cinit__(self, stream):
        self.stream = stream
        self.packed = Buffer(CHUNK_BYTES + 65536)
        self.movetext = BitWriter()
        self.first = True
        self.entries = self.stems = self.bytes_written = 0
        self.last_ply = -10
        self.last_result = 99

    def add(self, fens, moves, scores, plies, results):
        """Add entries: full or 4-field FENs, UCI moves (null/'' for none), side-to-move
        scores (int16), plies and results (-1, 0, 1 for the side to move). Returns a list of
        (index, message) of the entries refused (a bad FEN, an illegal move)."""
        refused = []
        cdef Position pos
        cdef Move m
        cdef Py_ssize_t i
        cdef bytes fen
        cdef int code
        score_values = np.asarray(scores, np.int16)
        ply_values = np.asarray(plies, np.int64)
        result_values = np.asarray(results, np.int64)
        for i in range(len(fens)):
            fen = fens[i].encode()
            code = set_fen_bytes(&pos, fen, len(fen))
            if code != FEN_OK:
                refused.append((i, f"{FEN_REASONS[code]}: {fens[i]!r}"))
                continue
            m = 0
            if moves[i]:
                m = parse_uci_move(&pos, moves[i])
                if m == 0:
                    refused.append((i, f"move {moves[i]!r} is not legal in {fens[i]!r}"))
                    continue
            self.add_entry(&pos, m, <int16_t>score_values[i], <int>ply_values[i],
                           <int>result_values[i])
        return refused

    cdef int add_entry(self, const Position* pos, Move m, int16_t score, int ply,
                       int result) except -1:
        cdef Position after
        cdef int count, move_id
        cdef unsigned char stem[STEM_BYTES]
        cdef uint16_t field
        continues = False
        if not self.first and self.last_move != 0 and self.last_result == -result \
                and self.last_ply + 1 == ply:
            after = self.last
            make_move(&after, self.last_move)
            continues = same_position(&after, pos)
        if continues and m != 0:
            move_id = move_index(pos, m, &count)
            self.movetext.bits(popcount(pos.occ[pos.side] & below(m & 63)),
                               used_bits_safe(popcount(pos.occ[pos.side])))
            self.movetext.bits(move_id, used_bits_safe(count))
            self.movetext.vle16(signed_to_unsigned(<int16_t>(score - self.last_score)))
            self.last_score = -score
            self.plies += 1
        else:
            if not self.first:
                self.end_chain()
            if self.packed.size >= CHUNK_BYTES:
                self.flush()
            compress_position(pos, stem)
            field = compress_move(m)
            stem[24], stem[25] = field >> 8, field & 0xFF
            field = signed_to_unsigned(score)
            stem[26], stem[27] = field >> 8, field & 0xFF
            field = <uint16_t>((ply & 0x3FFF) | (signed_to_unsigned(<int16_t>result) << 14))
            stem[28], stem[29] = field >> 8, field & 0xFF
            stem[30], stem[31] = 0, min(pos.halfmove, 255)
            self.packed.append(stem, STEM_BYTES)
            self.movetext.clear()
            self.plies = 0
            self.last_score = -score
            self.first = False
            self.stems += 1
        self.last = pos[0]
        self.last_move = m
        self.last_ply = ply
        self.last_result = result
        self.entries += 1
        return 0

    cdef int end_chain(self) except -1:
        cdef unsigned char count[2]
        count[0], count[1] = self.plies >> 8, self.plies & 0xFF
        self.packed.append(count, 2)
        if self.plies:
            self.packed.append(self.movetext.out.data, self.movetext.out.size)
        return 0

    cdef int flush(self) except -1:
        cdef unsigned char header[8]
        cdef uint64_t size = self.packed.size
        if size == 0:
            return 0
        header[0], header[1], header[2], header[3] = 66, 73, 78, 80
        header[4], header[5] = size & 0xFF, (size >> 8) & 0xFF
        header[6], header[7] = (size >> 16) & 0xFF, (size >> 24) & 0xFF
        self.stream.write((<char*>header)[:8])
        self.stream.write((<char*>self.packed.data)[:size])
        self.bytes_written += 8 + size
        self.packed.size = 0
        return 0

    def close(self):
        """Finish the last chain and write the last block."""
        if not self.first:
            self.end_chain()
            self.first = True
        self.flush()


cdef Move parse_uci_move(const Position* p, str uci):
    """The legal core move of a UCI string (castling as e1g1 or king takes rook), or 0."""
    cdef int frm, to, promo = 0
    if len(uci) not in (4, 5) or uci[0] not in "abcdefgh" or uci[2] not in "abcdefgh" \
            or uci[1] not in "12345678" or uci[3] not in "12345678":
        return 0
    frm = (ord(uci[1]) - 49) * 8 + ord(uci[0]) - 97
    to = (ord(uci[3]) - 49) * 8 + ord(uci[2]) - 97
    if len(uci) == 5:
        promo = "pnbrqk".find(uci[4])
        if promo <= 0:
            return 0
    if p.board[frm] == KING + 6 * p.side and p.board[to] == ROOK + 6 * p.side:
        to = frm + 2 if to > frm else frm - 2
    return find_legal(p, frm, to, promo)
