# cython: language_level=3
"""The compiled PGN reader: game boundaries, tags, main-line tokens, annotations and replay.

It follows :mod:`pipelines.ingest.pgn` (the Python reader, kept as the reference) rule for rule,
on UTF-8 text, with nothing built per move but bytes in buffers:

* :class:`Splitter` (the main process) cuts text blocks into games by ``split_games``' line
  rules and packs them into chunks: ``(text, games, tags)``, the games' tag lines and movetext
  as UTF-8 bytes plus int64 records (:data:`GAME_FIELDS` per game, ``(start, end, line)`` per
  tag line). A chunk pickles as three bytes objects.
* :class:`ChunkReader` (a worker) reads a chunk in two steps: :meth:`ChunkReader.parse` reads
  every game's tags (``TAG_REGEX``), main-line SANs, ``[%clk]``/``[%eval]`` annotations and
  result marker (``parse_movetext_general``'s token rules), and returns each game's base key
  (:func:`pipelines.ingest.keys.game_key`); :meth:`ChunkReader.replay` replays the games it is
  told to (the compiled core's board and its SAN and FEN routines, the ones
  ``engines.core.replay_san`` uses; Chess960 games through a Python callback) into the
  columns of ``moves`` and of the chunk's distinct positions, and gives each game's plies
  and error.

Regular-expression details kept: ``\\s`` is Unicode whitespace (``str.isspace``), a tag value
is everything between the first quote and the last ``"]`` before trailing whitespace, SAN
tokens match the reader's alternatives in their order. One difference: ``[%clk]``/``[%eval]``
digits are ASCII only (Python's ``\\d`` takes any decimal digit, which the old column
conversion could not read), and an eval or mate outside int32 is null (it failed the old
conversion).
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_DecodeUTF8

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, realloc, strtod
from libc.string cimport memchr, memcmp, memcpy, memset

from engines.core.position cimport (
    SAN_OK,
    Move,
    MoveList,
    Position,
    check_mark,
    fen_of,
    full_key,
    in_check,
    is_file,
    is_rank,
    make_move,
    make_null,
    san_move,
    set_fen,
    set_start,
    u64,
    write_fen,
    write_san,
    write_uci,
)
from engines.core.position import SAN_ERRORS

import hashlib

import pyarrow as pa

# Fields of a game record in a chunk (int64 each).
GAME_FIELDS = 10
cdef enum:
    G_INDEX = 0         # 0-based index of the game in its file
    G_LINE = 1          # line of its first line
    G_TAG_FIRST = 2     # its first tag line in the chunk's tag records
    G_TAG_COUNT = 3
    G_BODY_START = 4    # its movetext in the chunk's text
    G_BODY_END = 5
    G_BODY_LINE = 6     # line of the movetext's first line
    G_ENDED_BY_TAGS = 7
    G_COMMENT_OPENED = 8    # line of an unclosed { comment, else 0
    G_COMMENT_NEXT = 9      # line where the next game's tags start (0: end of file)
    NG = 10
    TAG_FIELDS = 3      # start, end (newline excluded), line

cdef enum:
    S_OUTER = 0         # top of split_games' loop: the line may start with BOMs
    S_SKIP = 1          # blank, % and ; lines before a game
    S_TAGS = 2
    S_BODY = 3
    S_DONE = 4          # a last line of BOMs only: split_games returns

RESULTS = (None, "1-0", "0-1", "1/2-1/2", "*")
RESULT_BYTES = (b"", b"1-0", b"0-1", b"1/2-1/2", b"*")
# The games table's columns of the first eleven KNOWN_TAGS.
GAME_COLUMNS = ("event", "site", "date", "round", "white", "black", "result", "time_control",
                "termination", "eco", "opening")
# Tags with a column of their own in ``games`` (and the two read for replay), in this order.
KNOWN_TAGS = ("Event", "Site", "Date", "Round", "White", "Black", "Result", "TimeControl",
              "Termination", "ECO", "Opening", "WhiteElo", "BlackElo", "Variant", "FEN")
# A position's in_check byte when the reader did not see the board (a replay made elsewhere).
cdef enum:
    CHECK_UNKNOWN = 2

cdef int N_KNOWN = 15
cdef int K_VARIANT = 13
cdef int K_FEN = 14


# --- growable buffers ------------------------------------------------------------------------

cdef struct Buf:
    char* data
    Py_ssize_t len
    Py_ssize_t cap


cdef int reserve(Buf* b, Py_ssize_t extra) except -1:
    cdef Py_ssize_t need = b.len + extra
    cdef Py_ssize_t cap = b.cap * 2
    cdef char* data
    if need <= b.cap:
        return 0
    if cap < need:
        cap = need
    if cap < 4096:
        cap = 4096
    data = <char*>realloc(b.data, cap)
    if data == NULL:
        raise MemoryError()
    b.data = data
    b.cap = cap
    return 0


cdef inline int put_bytes(Buf* b, const char* p, Py_ssize_t n) except -1:
    if b.len + n > b.cap:
        reserve(b, n)
    memcpy(b.data + b.len, p, n)
    b.len += n
    return 0


cdef inline int put_byte(Buf* b, char c) except -1:
    if b.len + 1 > b.cap:
        reserve(b, 1)
    b.data[b.len] = c
    b.len += 1
    return 0


cdef inline int put_i64(Buf* b, int64_t v) except -1:
    if b.len + 8 > b.cap:
        reserve(b, 8)
    (<int64_t*>(b.data + b.len))[0] = v
    b.len += 8
    return 0


cdef inline int put_i32(Buf* b, int32_t v) except -1:
    if b.len + 4 > b.cap:
        reserve(b, 4)
    (<int32_t*>(b.data + b.len))[0] = v
    b.len += 4
    return 0


cdef inline int put_u64(Buf* b, uint64_t v) except -1:
    if b.len + 8 > b.cap:
        reserve(b, 8)
    (<uint64_t*>(b.data + b.len))[0] = v
    b.len += 8
    return 0


cdef inline int put_f64(Buf* b, double v) except -1:
    if b.len + 8 > b.cap:
        reserve(b, 8)
    (<double*>(b.data + b.len))[0] = v
    b.len += 8
    return 0


cdef void release(Buf* b) noexcept:
    free(b.data)
    b.data = NULL
    b.len = b.cap = 0


cdef bytes take_bytes(Buf* b):
    """The buffer's bytes (copied); the buffer is emptied."""
    cdef bytes out = PyBytes_FromStringAndSize(b.data, b.len)
    b.len = 0
    return out


cdef bytes as_bytes(const Buf* b):
    return PyBytes_FromStringAndSize(b.data, b.len)


cdef class Block:
    """Bytes taken out of a buffer, handed to Arrow without a copy (the buffer protocol);
    freed with the last Arrow array that uses them."""

    cdef char* data
    cdef Py_ssize_t size

    def __dealloc__(self):
        free(self.data)

    def __getbuffer__(self, Py_buffer* view, int flags):
        view.buf = self.data
        view.obj = self
        view.len = self.size
        view.readonly = 1
        view.itemsize = 1
        view.format = NULL
        view.ndim = 1
        view.shape = &self.size
        view.strides = NULL
        view.suboffsets = NULL
        view.internal = NULL

    def __releasebuffer__(self, Py_buffer* view):
        pass


cdef object moved(Buf* b):
    """The buffer's bytes as an Arrow buffer, taken (the buffer is left empty)."""
    cdef Block block
    if b.data == NULL:     # never written: Arrow wants a real (empty) buffer
        return pa.py_buffer(b"")
    block = Block.__new__(Block)
    block.data = b.data
    block.size = b.len
    b.data = NULL
    b.len = b.cap = 0
    return pa.py_buffer(block)


cdef bytes packed_bits(const Buf* flags):
    """One byte per value (0/1) as an Arrow validity bitmap."""
    cdef Py_ssize_t n = flags.len, i
    cdef bytes out = PyBytes_FromStringAndSize(NULL, (n + 7) // 8)
    cdef uint8_t* bits = <uint8_t*>PyBytes_AS_STRING(out)
    memset(bits, 0, (n + 7) // 8)
    for i in range(n):
        if flags.data[i]:
            bits[i >> 3] |= 1 << (i & 7)
    return out


cdef Py_ssize_t count_zero(const Buf* flags) noexcept:
    cdef Py_ssize_t i, zero = 0
    for i in range(flags.len):
        zero += flags.data[i] == 0
    return zero


# A column of strings: offsets and bytes as Arrow lays them out.
cdef struct StrCol:
    Buf offsets     # int32, one more than the values
    Buf data


cdef int str_init(StrCol* c) except -1:
    c.offsets.len = 0
    c.data.len = 0
    put_i32(&c.offsets, 0)
    return 0


cdef inline int str_add(StrCol* c, const char* p, Py_ssize_t n) except -1:
    put_bytes(&c.data, p, n)
    if c.data.len > 0x7FFFFFFF:
        raise OverflowError("a chunk's string column passed 2 GiB")
    put_i32(&c.offsets, <int32_t>c.data.len)
    return 0


cdef object str_array(StrCol* c, bint take=False):
    """The column as an Arrow string array: copied, or taken (then emptied)."""
    cdef Py_ssize_t n = c.offsets.len // 4 - 1
    if take:
        out = pa.Array.from_buffers(pa.string(), n, [None, moved(&c.offsets), moved(&c.data)])
        str_init(c)
        return out
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(as_bytes(&c.offsets)),
                                                  pa.py_buffer(as_bytes(&c.data))])


cdef object str_array_valid(StrCol* c, Buf* valid):
    """The column as an Arrow string array (copied), null where ``valid`` holds 0."""
    cdef Py_ssize_t n = c.offsets.len // 4 - 1
    cdef Py_ssize_t nulls = count_zero(valid)
    bitmap = pa.py_buffer(packed_bits(valid)) if nulls else None
    return pa.Array.from_buffers(pa.string(), n, [bitmap, pa.py_buffer(as_bytes(&c.offsets)),
                                                  pa.py_buffer(as_bytes(&c.data))],
                                 null_count=nulls)


cdef object fixed_array(object kind, Buf* values, const Buf* valid, bint take=False):
    """An Arrow array of fixed-width ``values``, null where ``valid`` holds 0 (if given):
    copied, or taken (``values`` emptied)."""
    cdef Py_ssize_t width = kind.bit_width // 8
    cdef Py_ssize_t n = values.len // width
    cdef Py_ssize_t nulls = count_zero(valid) if valid != NULL else 0
    bitmap = pa.py_buffer(packed_bits(valid)) if nulls else None
    data = moved(values) if take else pa.py_buffer(as_bytes(values))
    return pa.Array.from_buffers(kind, n, [bitmap, data], null_count=nulls)


# --- characters ------------------------------------------------------------------------------

cdef inline int space_len(const char* s, Py_ssize_t n) noexcept nogil:
    """Bytes of the Unicode whitespace character (``str.isspace``) at ``s``, else 0."""
    cdef uint8_t c, d, e
    if n <= 0:
        return 0
    c = <uint8_t>s[0]
    if c < 0x80:
        return 1 if (c == 32 or (9 <= c <= 13) or (0x1C <= c <= 0x1F)) else 0
    if n >= 2 and c == 0xC2:
        d = <uint8_t>s[1]
        return 2 if (d == 0x85 or d == 0xA0) else 0
    if n < 3:
        return 0
    d = <uint8_t>s[1]
    e = <uint8_t>s[2]
    if c == 0xE1:
        return 3 if (d == 0x9A and e == 0x80) else 0
    if c == 0xE2:
        if d == 0x80 and ((0x80 <= e <= 0x8A) or e == 0xA8 or e == 0xA9 or e == 0xAF):
            return 3
        return 3 if (d == 0x81 and e == 0x9F) else 0
    if c == 0xE3:
        return 3 if (d == 0x80 and e == 0x80) else 0
    return 0


cdef inline Py_ssize_t trailing_space(const char* s, Py_ssize_t n) noexcept nogil:
    """Bytes of whitespace at the end of ``s[:n]``."""
    cdef Py_ssize_t end = n
    cdef int k
    while end > 0:
        k = 0
        if end >= 1 and space_len(s + end - 1, 1) == 1:
            k = 1
        elif end >= 2 and space_len(s + end - 2, 2) == 2:
            k = 2
        elif end >= 3 and space_len(s + end - 3, 3) == 3:
            k = 3
        if k == 0:
            break
        end -= k
    return n - end


cdef inline bint all_space(const char* s, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i = 0
    cdef int k
    while i < n:
        k = space_len(s + i, n - i)
        if k == 0:
            return False
        i += k
    return True


cdef inline bint is_digit(char c) noexcept nogil:
    return b'0' <= c <= b'9'


cdef inline bint is_alnum(char c) noexcept nogil:
    return is_digit(c) or (b'a' <= c <= b'z') or (b'A' <= c <= b'Z')


cdef inline bint is_name_char(char c) noexcept nogil:
    return (is_alnum(c) or c == b'_' or c == b'+' or c == b'#' or c == b'=' or c == b':'
            or c == b'-')


cdef bint tag_match(const char* s, Py_ssize_t n, Py_ssize_t* name_end, Py_ssize_t* value_start,
                    Py_ssize_t* value_end) noexcept nogil:
    """``TAG_REGEX.match`` on a line (without its newline): ``[Name "value"]`` + whitespace."""
    cdef Py_ssize_t i = 1, end
    cdef int k
    if n < 1 or s[0] != b'[' or n < 2 or not is_alnum(s[1]):
        return False
    i = 2
    while i < n and is_name_char(s[i]):
        i += 1
    name_end[0] = i
    k = space_len(s + i, n - i)
    if k == 0:
        return False
    while k:
        i += k
        k = space_len(s + i, n - i)
    if i >= n or s[i] != b'"':
        return False
    end = n - trailing_space(s, n)
    if end - 2 < i + 1 or s[end - 1] != b']' or s[end - 2] != b'"':
        return False
    value_start[0] = i + 1
    value_end[0] = end - 2
    return True


cdef bint ends_in_comment(const char* s, Py_ssize_t n) noexcept nogil:
    """Whether a line that starts outside a { comment ends inside one (a ; outside a comment
    hides the rest of the line)."""
    cdef Py_ssize_t i = n - 1
    cdef bint in_comment = False
    cdef char c
    while i >= 0 and s[i] != b'{' and s[i] != b'}':
        i -= 1
    if i < 0 or s[i] == b'}':
        return False
    for i in range(n):
        c = s[i]
        if in_comment:
            if c == b'}':
                in_comment = False
        elif c == b'{':
            in_comment = True
        elif c == b';':
            return False
    return in_comment


# --- splitting -------------------------------------------------------------------------------

cdef class Splitter:
    """Cuts UTF-8 PGN text into chunks of games by ``split_games``' rules.

    Feed it text (any blocks; newlines already ``\\n``), call :meth:`finish` at the end, and
    take the chunks it made with :meth:`chunks`: each is ``(text, games, tags)`` bytes (see
    the module doc), at most ``chunk_games`` games and, unless one game is larger, about
    ``chunk_bytes`` of text. ``line`` is the last line read and ``games`` the games completed
    (a stream cut after ``line`` drops game ``games``).
    """

    cdef Buf carry, text, games, tags
    cdef int state, empty
    cdef bint in_comment
    cdef int64_t line_no, index, start, body_line, body_start, opened, tag_first
    cdef int chunk_games, ngames
    cdef Py_ssize_t chunk_bytes
    cdef list ready

    def __cinit__(self, int chunk_games=500, Py_ssize_t chunk_bytes=8 << 20):
        if chunk_games < 1 or chunk_bytes < 1:
            raise ValueError("chunk_games and chunk_bytes must be positive")
        self.chunk_games = chunk_games
        self.chunk_bytes = chunk_bytes
        self.ready = []
        self.state = S_OUTER

    def __dealloc__(self):
        release(&self.carry)
        release(&self.text)
        release(&self.games)
        release(&self.tags)

    @property
    def line(self) -> int:
        return self.line_no

    @property
    def games(self) -> int:
        return self.index

    def feed(self, str block) -> None:
        """Read the complete lines of ``block`` (a last unfinished line waits for the next)."""
        cdef bytes data = block.encode("utf-8")
        cdef const char* p = PyBytes_AS_STRING(data)
        cdef Py_ssize_t n = PyBytes_GET_SIZE(data), i = 0
        cdef const char* nl
        if self.carry.len:
            nl = <const char*>memchr(p, b'\n', n)
            if nl == NULL:
                put_bytes(&self.carry, p, n)
                return
            put_bytes(&self.carry, p, nl - p)
            self.read_line(self.carry.data, self.carry.len, True)
            self.carry.len = 0
            if self.carry.cap > (1 << 22):
                release(&self.carry)   # a huge line: give its memory back
            i = nl - p + 1
        while i < n:
            nl = <const char*>memchr(p + i, b'\n', n - i)
            if nl == NULL:
                put_bytes(&self.carry, p + i, n - i)
                return
            self.read_line(p + i, nl - (p + i), True)
            i = nl - p + 1

    def finish(self) -> None:
        """The end of the text: its last line (without a newline) and the game it ends."""
        if self.carry.len:
            self.read_line(self.carry.data, self.carry.len, False)
            self.carry.len = 0
        if self.state == S_TAGS:
            self.body_line = self.line_no
            self.body_start = self.text.len
            self.complete(False, 0)
        elif self.state == S_BODY:
            self.complete(False, 0)
        self.state = S_DONE
        if self.ngames:
            self.cut()

    def abandon(self) -> None:
        """The text stopped (a cut stream): the complete games make a last chunk, the game
        being read is dropped."""
        self.state = S_DONE
        if self.ngames:
            self.cut()

    def chunks(self) -> list:
        """The chunks completed since the last call."""
        out, self.ready = self.ready, []
        return out

    cdef int read_line(self, const char* s, Py_ssize_t n, bint nl) except -1:
        cdef Py_ssize_t a, b, c
        cdef const char* close
        self.line_no += 1
        while True:
            if self.state == S_OUTER:
                while n >= 3 and memcmp(s, b"\xef\xbb\xbf", 3) == 0:
                    s += 3
                    n -= 3
                if n == 0 and not nl:
                    self.state = S_DONE
                    return 0
                self.state = S_SKIP
            if self.state == S_SKIP:
                if (n and (s[0] == b'%' or s[0] == b';')) or all_space(s, n):
                    return 0
                self.start = self.line_no
                self.tag_first = self.tags.len // (8 * TAG_FIELDS)
                self.empty = 0
                self.state = S_TAGS
            if self.state == S_TAGS:
                if n and (s[0] == b'%' or s[0] == b';'):
                    return 0
                if self.empty < 1 and all_space(s, n):
                    self.empty += 1
                    return 0
                if n == 0 or s[0] != b'[':
                    self.state = S_BODY
                    self.body_line = self.line_no
                    self.body_start = self.text.len
                    self.in_comment = False
                    self.opened = 0
                else:
                    self.empty = 0
                    put_i64(&self.tags, self.text.len)
                    put_i64(&self.tags, self.text.len + n)
                    put_i64(&self.tags, self.line_no)
                    put_bytes(&self.text, s, n)
                    if nl:
                        put_byte(&self.text, b'\n')
                    return 0
            if self.state == S_BODY:
                if n and s[0] == b'[' and tag_match(s, n, &a, &b, &c):
                    self.complete(True, self.line_no)
                    self.state = S_OUTER
                    continue
                if self.in_comment:
                    close = <const char*>memchr(s, b'}', n)
                    if close != NULL:
                        self.in_comment = ends_in_comment(close + 1, n - (close + 1 - s))
                        self.opened = self.line_no
                elif n and (s[0] == b'%' or s[0] == b';'):
                    return 0
                elif all_space(s, n):
                    self.complete(False, self.line_no)
                    self.state = S_OUTER
                    return 0
                else:
                    self.in_comment = ends_in_comment(s, n)
                    self.opened = self.line_no
                put_bytes(&self.text, s, n)
                if nl:
                    put_byte(&self.text, b'\n')
                return 0
            return 0

    cdef int complete(self, bint ended_by_tags, int64_t next_line) except -1:
        cdef int64_t record[NG]
        record[G_INDEX] = self.index
        record[G_LINE] = self.start
        record[G_TAG_FIRST] = self.tag_first
        record[G_TAG_COUNT] = self.tags.len // (8 * TAG_FIELDS) - self.tag_first
        record[G_BODY_START] = self.body_start
        record[G_BODY_END] = self.text.len
        record[G_BODY_LINE] = self.body_line
        record[G_ENDED_BY_TAGS] = ended_by_tags
        record[G_COMMENT_OPENED] = self.opened if self.in_comment else 0
        record[G_COMMENT_NEXT] = next_line if self.in_comment else 0
        put_bytes(&self.games, <char*>record, sizeof(record))
        self.in_comment = False
        self.index += 1
        self.ngames += 1
        if self.ngames >= self.chunk_games or self.text.len >= self.chunk_bytes:
            self.cut()
        return 0

    cdef int cut(self) except -1:
        self.ready.append((take_bytes(&self.text), take_bytes(&self.games),
                           take_bytes(&self.tags)))
        self.ngames = 0
        if self.text.cap > 4 * self.chunk_bytes:
            release(&self.text)
        return 0


# --- tokens ----------------------------------------------------------------------------------

cdef inline bint is_promo_letter(char c) noexcept nogil:
    return (c == b'n' or c == b'b' or c == b'r' or c == b'q' or c == b'k' or c == b'N'
            or c == b'B' or c == b'R' or c == b'Q' or c == b'K')


cdef inline bint is_piece_letter(char c) noexcept nogil:     # [NBKRQ]
    return c == b'N' or c == b'B' or c == b'K' or c == b'R' or c == b'Q'


cdef Py_ssize_t san_token(const char* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """Length of the SAN alternative of TOKEN_REGEX matching at ``s[i]``, else 0."""
    cdef Py_ssize_t j1, j2, j3, j4, end
    cdef int p, f, r, x
    cdef int p_max = 1 if i < n and is_piece_letter(s[i]) else 0
    for p in range(p_max, -1, -1):
        j1 = i + p
        for f in range(1 if j1 < n and is_file(s[j1]) else 0, -1, -1):
            j2 = j1 + f
            for r in range(1 if j2 < n and is_rank(s[j2]) else 0, -1, -1):
                j3 = j2 + r
                for x in range(1 if j3 < n and (s[j3] == b'-' or s[j3] == b'x') else 0, -1, -1):
                    j4 = j3 + x
                    if j4 + 1 < n and is_file(s[j4]) and is_rank(s[j4 + 1]):
                        end = j4 + 2
                        if end + 1 < n and s[end] == b'=' and is_promo_letter(s[end + 1]):
                            end += 2
                        elif end < n and is_promo_letter(s[end]):
                            end += 1
                        return end - i
    if i + 3 < n and (s[i] == b'P' or s[i] == b'N' or s[i] == b'B' or s[i] == b'R'
                      or s[i] == b'Q' or s[i] == b'K') and s[i + 1] == b'@' and is_file(
                          s[i + 2]) and is_rank(s[i + 3]):
        return 4
    if i + 2 < n and s[i] == b'@' and is_file(s[i + 1]) and is_rank(s[i + 2]):
        return 3
    if i + 1 < n and ((s[i] == b'-' and s[i + 1] == b'-') or (s[i] == b'Z' and s[i + 1] == b'0')):
        return 2
    if i + 3 < n and (memcmp(s + i, b"0000", 4) == 0 or memcmp(s + i, b"@@@@", 4) == 0):
        return 4
    if i + 2 < n and memcmp(s + i, b"O-O", 3) == 0:
        return 5 if i + 4 < n and memcmp(s + i + 3, b"-O", 2) == 0 else 3
    if i + 2 < n and memcmp(s + i, b"0-0", 3) == 0:
        return 5 if i + 4 < n and memcmp(s + i + 3, b"-0", 2) == 0 else 3
    return 0


cdef int result_token(const char* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """1 "1-0", 2 "0-1", 3 "1/2-1/2", 4 "*" at ``s[i]``, else 0."""
    if s[i] == b'*':
        return 4
    if i + 2 < n and memcmp(s + i, b"1-0", 3) == 0:
        return 1
    if i + 2 < n and memcmp(s + i, b"0-1", 3) == 0:
        return 2
    if i + 6 < n and memcmp(s + i, b"1/2-1/2", 7) == 0:
        return 3
    return 0


cdef inline int result_length(int kind) noexcept nogil:
    return 1 if kind == 4 else (7 if kind == 3 else 3)


cdef Py_ssize_t find(const char* s, Py_ssize_t n, const char* what, Py_ssize_t k,
                     Py_ssize_t start) noexcept nogil:
    cdef const char* hit
    while start + k <= n:
        hit = <const char*>memchr(s + start, what[0], n - start)
        if hit == NULL:
            return -1
        start = hit - s
        if start + k <= n and memcmp(hit, what, k) == 0:
            return start
        start += 1
    return -1


cdef Py_ssize_t digits(const char* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t j = i
    while j < n and is_digit(s[j]):
        j += 1
    return j - i


cdef bint clock_in(const char* s, Py_ssize_t n, double* seconds) noexcept nogil:
    """The first ``[%clk h:m:s(.f)]`` of a comment, as seconds (the old column conversion:
    each part read as a float64, hours * 3600 + minutes * 60, plus seconds)."""
    cdef Py_ssize_t at = 0, i, d1, d2, d3, d4, w
    cdef char part[64]
    cdef double h, m, sec
    while True:
        at = find(s, n, b"[%clk", 5, at)
        if at < 0:
            return False
        i = at + 5
        at += 1
        w = space_len(s + i, n - i)
        if w == 0:
            continue
        i += w
        d1 = digits(s, i, n)
        if d1 == 0 or i + d1 >= n or s[i + d1] != b':':
            continue
        d2 = digits(s, i + d1 + 1, n)
        if d2 == 0 or i + d1 + 1 + d2 >= n or s[i + d1 + 1 + d2] != b':':
            continue
        d3 = digits(s, i + d1 + d2 + 2, n)
        if d3 == 0:
            continue
        w = i + d1 + d2 + 2 + d3      # after the seconds' digits
        d4 = 0
        if w < n and s[w] == b'.':
            d4 = 1 + digits(s, w + 1, n)
            if w + d4 >= n or s[w + d4] != b']':
                d4 = 0
        if w + d4 >= n or s[w + d4] != b']':
            continue
        h = number_of(s + i, d1, part)
        m = number_of(s + i + d1 + 1, d2, part)
        sec = number_of(s + i + d1 + d2 + 2, d3 + (d4 if d4 > 1 else 0), part)
        seconds[0] = h * 3600.0 + m * 60.0 + sec
        return True


cdef double number_of(const char* s, Py_ssize_t n, char* part) noexcept nogil:
    """Decimal digits (and a fraction) as a float64: integers of up to 15 digits exactly,
    as the old conversion read them, without strtod; the rest by strtod."""
    cdef int64_t value = 0
    cdef Py_ssize_t i
    if n > 15:
        return strtod_part(s, n, part)
    for i in range(n):
        if not is_digit(s[i]):
            return strtod_part(s, n, part)
        value = value * 10 + (s[i] - 48)
    return <double>value


cdef double strtod_part(const char* s, Py_ssize_t n, char* part) noexcept nogil:
    """A decimal number of ``n`` bytes as a correctly rounded float64."""
    if n > 63:
        return strtod_long(s, n)
    memcpy(part, s, n)
    part[n] = 0
    return strtod(part, NULL)


cdef double strtod_long(const char* s, Py_ssize_t n) noexcept nogil:
    cdef char* copy = <char*>realloc(NULL, n + 1)
    cdef double value
    if copy == NULL:
        return 0.0
    memcpy(copy, s, n)
    copy[n] = 0
    value = strtod(copy, NULL)
    free(copy)
    return value


cdef int eval_in(const char* s, Py_ssize_t n, int32_t* cp, int32_t* mate) noexcept nogil:
    """The first ``[%eval]`` of a comment: 0 none, 1 centipawns (pawns x 100, rounded half to
    even), 2 a mate distance; 3 one that does not fit an int32 (stored as null)."""
    cdef Py_ssize_t at = 0, i, j, k, d, f, w, tail
    cdef char part[64]

    cdef bint negative
    cdef int64_t number
    while True:
        at = find(s, n, b"[%eval", 6, at)
        if at < 0:
            return 0
        i = at + 6
        at += 1
        w = space_len(s + i, n - i)
        if w == 0:
            continue
        i += w
        if i < n and s[i] == b'#':
            j = i + 1
            if j < n and (s[j] == b'+' or s[j] == b'-'):
                j += 1
            d = digits(s, j, n)
            if d == 0 or not eval_tail(s, j + d, n):
                continue
            negative = s[i + 1] == b'-'
            k = j
            while k < j + d and s[k] == b'0':
                k += 1
            if j + d - k > 10:
                return 3
            number = 0
            while k < j + d:
                number = number * 10 + (s[k] - 48)
                k += 1
            if negative:
                number = -number
            if number > 2147483647 or number < -2147483648:
                return 3
            mate[0] = <int32_t>number
            return 2
        j = i
        if j < n and (s[j] == b'+' or s[j] == b'-'):
            j += 1
        d = digits(s, j, n)
        tail = -1
        if d <= 10 and j + d < n and s[j + d] == b'.':
            f = digits(s, j + d + 1, n)
            if (f == 1 or f == 2) and eval_tail(s, j + d + 1 + f, n):
                tail = j + d + 1 + f
            elif f == 0 and d >= 1 and eval_tail(s, j + d + 1, n):
                tail = j + d + 1
        elif 1 <= d <= 10 and eval_tail(s, j + d, n):
            tail = j + d
        if tail < 0:
            continue
        # pawns with at most 2 decimals and 10 digits before them: x 100 is that integer
        # exactly (round(float(text) * 100) can be nothing else: the float error is tiny)
        number = 0
        f = 0
        for k in range(j, tail):
            if s[k] == b'.':
                f = tail - k - 1
            else:
                number = number * 10 + (s[k] - 48)
        number *= 100 if f == 0 else (10 if f == 1 else 1)
        if s[i] == b'-':
            number = -number
        if number > 2147483647 or number < -2147483648:
            return 3
        cp[0] = <int32_t>number
        return 1


cdef inline bint eval_tail(const char* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """``(?:,\\d+)?\\]`` at ``s[i]``."""
    cdef Py_ssize_t d
    if i < n and s[i] == b',':
        d = digits(s, i + 1, n)
        if d and i + 1 + d < n and s[i + 1 + d] == b']':
            return True
    return i < n and s[i] == b']'


# --- reading chunks --------------------------------------------------------------------------

cdef struct GameInfo:
    int64_t token_first      # its SAN tokens in the chunk's token records
    int64_t token_count
    int64_t tag_first        # its good tags in the chunk's tag records
    int64_t tag_count
    int32_t known[15]        # the chunk tag record of each KNOWN_TAGS tag, else -1
    int32_t result           # the last result marker of the main line (RESULTS index)
    int64_t variation_at     # offset in the movetext of an unclosed ( variation, else -1


cdef packed struct Token:     # 9 bytes: a 50 MB line of SAN tokens stays near its size
    uint32_t start           # in the chunk's text (a chunk holds under 4 GiB)
    uint8_t length
    int32_t note             # its annotations in the reader's notes, else -1


cdef struct Note:
    double clock
    int32_t cp
    int32_t mate
    int32_t flags            # 1: clock, 2: eval cp, 4: eval mate, 8: an eval out of range


cdef struct TagRecord:
    int64_t name_start       # in the chunk's text
    int32_t name_length
    int32_t value_length
    int64_t value_start      # in the reader's values buffer


cdef struct PosSlot:
    uint64_t key
    int64_t row              # row in the positions columns, -1 empty


cdef class ChunkReader:
    """One chunk of games, read then replayed (see the module doc)."""

    cdef bytes text_bytes, games_bytes, tags_bytes
    cdef const char* text
    cdef const int64_t* records
    cdef const int64_t* tag_lines
    cdef readonly int count
    cdef Buf infos, tokens, notes, tag_records, values, scratch, json
    # replay output
    cdef Buf m_game, m_ply, m_key, m_clock, m_clock_ok, m_cp, m_cp_ok, m_mate, m_mate_ok
    cdef StrCol m_uci, m_san
    cdef Buf p_key, p_game, p_line, p_check, p_check_ok
    cdef StrCol p_fen
    cdef PosSlot* slots
    cdef int64_t slot_mask, n_positions
    cdef set clashes
    cdef Position pos                 # a paused replay: its board, game and next ply
    cdef MoveList legal
    cdef int r_game
    cdef int64_t r_ply
    cdef public int64_t row_limit     # moves rows before a replay pauses
    cdef readonly list bad_tags       # per game: [(line, text bytes)] or None
    cdef StrCol j_tags                # per game: the tags as JSON text

    def __cinit__(self, tuple chunk):
        self.text_bytes, self.games_bytes, self.tags_bytes = chunk
        self.text = PyBytes_AS_STRING(self.text_bytes)
        self.records = <const int64_t*>PyBytes_AS_STRING(self.games_bytes)
        self.tag_lines = <const int64_t*>PyBytes_AS_STRING(self.tags_bytes)
        self.count = PyBytes_GET_SIZE(self.games_bytes) // (8 * NG)
        self.clashes = set()
        self.row_limit = 1 << 18

    def __dealloc__(self):
        release(&self.infos)
        release(&self.tokens)
        release(&self.notes)
        release(&self.tag_records)
        release(&self.values)
        release(&self.scratch)
        release(&self.json)
        release(&self.j_tags.offsets)
        release(&self.j_tags.data)
        self.release_replay()

    cdef void release_replay(self) noexcept:
        release(&self.m_game)
        release(&self.m_ply)
        release(&self.m_key)
        release(&self.m_clock)
        release(&self.m_clock_ok)
        release(&self.m_cp)
        release(&self.m_cp_ok)
        release(&self.m_mate)
        release(&self.m_mate_ok)
        release(&self.m_uci.offsets)
        release(&self.m_uci.data)
        release(&self.m_san.offsets)
        release(&self.m_san.data)
        release(&self.p_key)
        release(&self.p_game)
        release(&self.p_line)
        release(&self.p_check)
        release(&self.p_check_ok)
        release(&self.p_fen.offsets)
        release(&self.p_fen.data)
        free(self.slots)
        self.slots = NULL

    # -- the raw chunk, for the Python reader and for tests --

    def record(self, int i) -> tuple:
        """Game ``i``'s record: GAME_FIELDS ints."""
        cdef int k
        if not 0 <= i < self.count:
            raise IndexError(i)
        return tuple([self.records[i * NG + k] for k in range(NG)])

    def tag_lines_of(self, int i, bint newline=False) -> list:
        """Game ``i``'s tag lines: (line, text), with its newline when it has one and
        ``newline`` is asked."""
        cdef const int64_t* r = self.records + i * NG
        cdef const int64_t* t
        cdef int64_t k, end
        out = []
        for k in range(r[G_TAG_COUNT]):
            t = self.tag_lines + (r[G_TAG_FIRST] + k) * TAG_FIELDS
            end = t[1]
            if newline and end < PyBytes_GET_SIZE(self.text_bytes) and self.text[end] == b'\n':
                end += 1
            out.append((t[2], PyUnicode_DecodeUTF8(self.text + t[0], end - t[0], NULL)))
        return out

    def movetext(self, int i) -> str:
        cdef const int64_t* r = self.records + i * NG
        return PyUnicode_DecodeUTF8(self.text + r[G_BODY_START], r[G_BODY_END] - r[G_BODY_START],
                                    NULL)

    # -- step one: tags, tokens, keys --

    def parse(self) -> list:
        """Read every game; returns each one's base key (``keys.game_key``)."""
        cdef int i
        cdef GameInfo* info
        keys = []
        self.bad_tags = []
        str_init(&self.j_tags)
        reserve(&self.infos, self.count * sizeof(GameInfo))
        self.infos.len = self.count * sizeof(GameInfo)
        for i in range(self.count):
            info = (<GameInfo*>self.infos.data) + i
            self.read_tags(i, info)
            self.read_movetext(i, info)
            keys.append(self.base_key(info))
        return keys

    cdef int read_tags(self, int i, GameInfo* info) except -1:
        cdef const int64_t* r = self.records + i * NG
        cdef const int64_t* t
        cdef Py_ssize_t name_end, vs, ve, k, j
        cdef TagRecord rec
        cdef TagRecord* recs
        cdef int kt
        bad = None
        info.tag_first = self.tag_records.len // sizeof(TagRecord)
        info.tag_count = 0
        for kt in range(N_KNOWN):
            info.known[kt] = -1
        for k in range(r[G_TAG_COUNT]):
            t = self.tag_lines + (r[G_TAG_FIRST] + k) * TAG_FIELDS
            if not tag_match(self.text + t[0], t[1] - t[0], &name_end, &vs, &ve):
                if bad is None:
                    bad = []
                bad.append((t[2], PyBytes_FromStringAndSize(self.text + t[0], t[1] - t[0])))
                continue
            rec.name_start = t[0] + 1
            rec.name_length = <int32_t>(name_end - 1)
            rec.value_start = self.values.len
            unescape(self.text + t[0] + vs, ve - vs, &self.values)
            rec.value_length = <int32_t>(self.values.len - rec.value_start)
            put_bytes(&self.tag_records, <char*>&rec, sizeof(TagRecord))
            info.tag_count += 1
        self.bad_tags.append(bad)
        recs = (<TagRecord*>self.tag_records.data) + info.tag_first
        for j in range(info.tag_count):
            kt = known_tag(self.text + recs[j].name_start, recs[j].name_length)
            if kt >= 0:
                info.known[kt] = <int32_t>(info.tag_first + j)   # the last one wins
        return 0

    cdef int read_movetext(self, int i, GameInfo* info) except -1:
        """``parse_movetext_general``: main-line SANs with their annotations, the result."""
        cdef const int64_t* r = self.records + i * NG
        cdef const char* s = self.text
        cdef Py_ssize_t pos = r[G_BODY_START], end = r[G_BODY_END], k, close
        cdef int depth = 0, kind
        cdef int64_t opened = -1
        cdef const char* hit
        cdef Token tok
        cdef Token* last
        cdef Note blank
        cdef char c
        memset(&blank, 0, sizeof(Note))
        if end >= 0xFFFFFFFF:
            raise ValueError(f"game {r[G_INDEX]}: its text passes 4 GiB")
        info.token_first = self.tokens.len // sizeof(Token)
        info.token_count = 0
        info.result = 0
        while pos < end:
            c = s[pos]
            if c == b' ' or c == b'.' or c == b'\n':   # starts no token: the usual bytes
                pos += 1
                continue
            if c == b'{':
                hit = <const char*>memchr(s + pos + 1, b'}', end - pos - 1)
                close = (hit - s + 1) if hit != NULL else end
                if not depth and info.token_count and memchr(s + pos, b'%', close - pos) != NULL:
                    last = (<Token*>self.tokens.data) + info.token_first + info.token_count - 1
                    if last.note < 0:
                        last.note = <int32_t>(self.notes.len // sizeof(Note))
                        put_bytes(&self.notes, <char*>&blank, sizeof(Note))
                    annotate(s + pos, close - pos, (<Note*>self.notes.data) + last.note)
                pos = close
                continue
            k = san_token(s, pos, end)
            if k:
                if not depth:
                    tok.start = <uint32_t>pos
                    tok.length = <uint8_t>k
                    tok.note = -1
                    put_bytes(&self.tokens, <char*>&tok, sizeof(Token))
                    info.token_count += 1
                pos += k
                continue
            if c == b';':
                hit = <const char*>memchr(s + pos, b'\n', end - pos)
                pos = (hit - s) if hit != NULL else end
                continue
            if c == b'$' and pos + 1 < end and is_digit(s[pos + 1]):
                pos += 1 + digits(s, pos + 1, end)
                continue
            if c == b'?' or c == b'!':
                pos += 2 if pos + 1 < end and (s[pos + 1] == b'?' or s[pos + 1] == b'!') else 1
                continue
            if c == b'(':
                if depth or info.token_count:
                    if not depth:
                        opened = pos - r[G_BODY_START]
                    depth += 1
                pos += 1
                continue
            if c == b')':
                if depth:
                    depth -= 1
                pos += 1
                continue
            kind = result_token(s, pos, end)
            if kind:
                if not depth:
                    info.result = kind
                pos += result_length(kind)
                continue
            pos += 1
        info.variation_at = opened if depth else -1
        return 0

    cdef str base_key(self, GameInfo* info):
        """blake2b-128 of the tags as sorted JSON, a line feed and the SANs as written."""
        cdef Buf* js = &self.json
        cdef TagRecord* recs = (<TagRecord*>self.tag_records.data) + info.tag_first
        cdef Token* toks = (<Token*>self.tokens.data) + info.token_first
        cdef int64_t j, k, n = info.tag_count, written = 0
        cdef int64_t* order
        js.len = 0
        put_byte(js, b'{')
        reserve(&self.scratch, n * 8 + 8)
        order = <int64_t*>self.scratch.data
        sorted_tags(self.text, recs, n, order)
        for j in range(n):
            k = order[j]
            if k < 0:
                continue      # a name given again later: the later value wins, as in a dict
            if written:
                put_bytes(js, b", ", 2)
            json_string(self.text + recs[k].name_start, recs[k].name_length, js)
            put_bytes(js, b": ", 2)
            json_string(self.values.data + recs[k].value_start, recs[k].value_length, js)
            written += 1
        put_byte(js, b'}')
        str_add(&self.j_tags, js.data, js.len)
        put_byte(js, b'\n')
        for j in range(info.token_count):
            if j:
                put_byte(js, b' ')
            put_bytes(js, self.text + toks[j].start, toks[j].length)
        return hashlib.blake2b(PyBytes_FromStringAndSize(js.data, js.len),
                               digest_size=16).hexdigest()

    # -- per game, for the writer --

    def tags_json(self) -> object:
        """Every game's tags as JSON text (``keys.tags_json``), an Arrow string array."""
        return str_array(&self.j_tags)

    def record_column(self, int field) -> object:
        """Field ``field`` of every game's record, an Arrow int32 array."""
        cdef Buf values
        cdef int i
        values.data = NULL
        values.len = values.cap = 0
        for i in range(self.count):
            put_i32(&values, <int32_t>self.records[i * NG + field])
        return fixed_array(pa.int32(), &values, NULL, True)

    def sans(self, int i) -> list:
        """Game ``i``'s main-line SANs as written."""
        cdef GameInfo* info = (<GameInfo*>self.infos.data) + i
        cdef Token* toks = (<Token*>self.tokens.data) + info.token_first
        cdef int64_t j
        return [PyUnicode_DecodeUTF8(self.text + toks[j].start, toks[j].length, NULL)
                for j in range(info.token_count)]

    def tag(self, int i, int known) -> object:
        """The value of ``KNOWN_TAGS[known]`` in game ``i`` (str), else None."""
        cdef GameInfo* info = (<GameInfo*>self.infos.data) + i
        cdef TagRecord* rec
        if info.known[known] < 0:
            return None
        rec = (<TagRecord*>self.tag_records.data) + info.known[known]
        return PyUnicode_DecodeUTF8(self.values.data + rec.value_start, rec.value_length, NULL)

    def known_tags(self, int i) -> tuple:
        """The values of the KNOWN_TAGS in game ``i`` (str or None), in that order."""
        cdef GameInfo* info = (<GameInfo*>self.infos.data) + i
        cdef TagRecord* rec
        cdef int k
        out = []
        for k in range(N_KNOWN):
            if info.known[k] < 0:
                out.append(None)
            else:
                rec = (<TagRecord*>self.tag_records.data) + info.known[k]
                out.append(PyUnicode_DecodeUTF8(self.values.data + rec.value_start,
                                                rec.value_length, NULL))
        return tuple(out)

    def has_tag(self, int i, int known) -> bool:
        return (<GameInfo*>self.infos.data)[i].known[known] >= 0

    def result(self, int i) -> object:
        return RESULTS[(<GameInfo*>self.infos.data)[i].result]

    def variation_line(self, int i) -> object:
        """The line of game ``i``'s unclosed ( variation, else None (the Python reader's count:
        the movetext's first line plus the line feeds before it)."""
        cdef GameInfo* info = (<GameInfo*>self.infos.data) + i
        cdef const int64_t* r = self.records + i * NG
        cdef int64_t k, lines = 0
        if info.variation_at < 0:
            return None
        for k in range(info.variation_at):
            lines += self.text[r[G_BODY_START] + k] == b'\n'
        return r[G_BODY_LINE] + lines

    def plies_read(self, int i) -> int:
        return (<GameInfo*>self.infos.data)[i].token_count

    # -- step two: replay --

    def replay(self, int i, object fen=None) -> tuple:
        """Replay game ``i`` from ``fen`` (None: the start) into the columns: (plies replayed,
        None or (ply, reason) for the first move that could not be read, whether it paused).
        It pauses when the moves columns hold ``row_limit`` rows (a game longer than a batch):
        take them (:meth:`moves`, :meth:`clear_moves`), then :meth:`resume`. A bad FEN raises
        the core's InvalidFenError."""
        cdef const int64_t* r = self.records + i * NG
        if self.slots == NULL:
            raise RuntimeError("ChunkReader.replay before start_replay")
        if fen is None:
            set_start(&self.pos)
        else:
            set_fen(&self.pos, fen)
        self.position(&self.pos, r, in_check(&self.pos))
        self.r_game = i
        self.r_ply = 0
        return self.run()

    def resume(self) -> tuple:
        """Go on with a paused replay (as :meth:`replay` returns)."""
        return self.run()

    cdef tuple run(self):
        cdef int i = self.r_game
        cdef GameInfo* info = (<GameInfo*>self.infos.data) + i
        cdef Token* toks = (<Token*>self.tokens.data) + info.token_first
        cdef const int64_t* r = self.records + i * NG
        cdef Position* pos = &self.pos
        cdef MoveList* legal = &self.legal
        cdef int64_t j
        cdef Move m
        cdef u64 others
        cdef int err, n, nu
        cdef char mark
        cdef char buf[16]
        cdef const char* s
        for j in range(self.r_ply, info.token_count):
            if self.m_key.len >= 8 * self.row_limit:
                self.r_ply = j
                return j, None, True
            s = self.text + toks[j].start
            n = toks[j].length
            if is_null(s, n):
                self.move_row(i, j, pos, &toks[j], b"0000", 4, b"--", 2)
                make_null(pos)
                self.position(pos, r, in_check(pos))
                continue
            err = san_move(pos, s, n, legal, &m, &others)
            if err != SAN_OK:
                return j, (j, f"{SAN_ERRORS[err]} san "
                              f"{PyUnicode_DecodeUTF8(s, n, NULL)!r} in {fen_of(pos, True)}"), False
            n = write_san(pos, m, others, buf + 5)
            nu = write_uci(m, buf)
            self.move_key(i, j, pos, &toks[j])
            str_add(&self.m_uci, buf, nu)
            make_move(pos, m)
            mark = check_mark(pos, legal)
            if mark:
                buf[5 + n] = mark
                n += 1
            str_add(&self.m_san, buf + 5, n)
            self.position(pos, r, mark != 0)
        return info.token_count, None, False

    def replay_standard(self, bytes skip, object flush) -> tuple:
        """Replay, in order, every game not skipped (``skip[i]`` 1) that needs nothing but
        the compiled reader: a standard game from the start position (no FEN or Variant tag),
        without broken tags, unclosed comments or variations, its Elo tags ASCII. Calls
        ``flush()`` whenever the moves columns are full. Returns (those games, the plies each
        replayed, {game: (ply, reason)} for the replays that stopped at a move, the others
        not skipped, for the caller to replay)."""
        cdef int i
        cdef list done = [], plies = [], others = []
        cdef dict failures = {}
        cdef const char* skips = PyBytes_AS_STRING(skip)
        if self.slots == NULL:
            raise RuntimeError("ChunkReader.replay_standard before start_replay")
        for i in range(self.count):
            if skips[i]:
                continue
            if not self.standard(i):
                others.append(i)
                continue
            set_start(&self.pos)
            self.position(&self.pos, self.records + i * NG, False)
            self.r_game = i
            self.r_ply = 0
            result = self.run()
            while result[2]:
                flush()
                result = self.run()
            done.append(i)
            plies.append(result[0])
            if result[1] is not None:
                failures[i] = result[1]
        return done, plies, failures, others

    cdef bint standard(self, int i):
        cdef GameInfo* info = (<GameInfo*>self.infos.data) + i
        return (self.records[i * NG + G_COMMENT_OPENED] == 0 and info.variation_at < 0
                and self.bad_tags[i] is None and info.known[K_VARIANT] < 0
                and info.known[K_FEN] < 0 and self.ascii_tag(info, 11)
                and self.ascii_tag(info, 12))

    cdef bint ascii_tag(self, GameInfo* info, int known):
        cdef TagRecord* rec
        cdef int32_t j
        if info.known[known] < 0:
            return True
        rec = (<TagRecord*>self.tag_records.data) + info.known[known]
        for j in range(rec.value_length):
            if <uint8_t>self.values.data[rec.value_start + j] >= 0x80:
                return False
        return True

    def game_columns(self, list games) -> dict:
        """The tag columns of ``games`` for the games table (as ``games.game_row``): the
        eleven tags with columns (the result marker filling an unknown Result), white_elo
        and black_elo (ASCII Elo tags of one to five digits, else null)."""
        cdef StrCol cols[11]
        cdef Buf valid[11]
        cdef Buf elos[2], elo_ok[2]
        cdef GameInfo* info
        cdef TagRecord* rec
        cdef int k, i, kind
        cdef int32_t j, value
        cdef bint star
        cdef const char* text
        cdef bytes marker
        out = {}
        memset(cols, 0, sizeof(cols))
        memset(valid, 0, sizeof(valid))
        memset(elos, 0, sizeof(elos))
        memset(elo_ok, 0, sizeof(elo_ok))
        try:
            for k in range(11):
                str_init(&cols[k])
            for i in games:
                info = (<GameInfo*>self.infos.data) + i
                for k in range(11):
                    if info.known[k] >= 0:
                        rec = (<TagRecord*>self.tag_records.data) + info.known[k]
                        text = self.values.data + rec.value_start
                        star = rec.value_length == 1 and text[0] == b'*'
                        if k == 6 and star and info.result:
                            marker = RESULT_BYTES[info.result]
                            str_add(&cols[k], marker, len(marker))
                        else:
                            str_add(&cols[k], text, rec.value_length)
                        put_byte(&valid[k], 1)
                    elif k == 6 and info.result:
                        marker = RESULT_BYTES[info.result]
                        str_add(&cols[k], marker, len(marker))
                        put_byte(&valid[k], 1)
                    else:
                        str_add(&cols[k], b"", 0)
                        put_byte(&valid[k], 0)
                for k in range(2):
                    value = -1
                    if info.known[11 + k] >= 0:
                        rec = (<TagRecord*>self.tag_records.data) + info.known[11 + k]
                        if 1 <= rec.value_length <= 5:
                            value = 0
                            for j in range(rec.value_length):
                                text = self.values.data + rec.value_start + j
                                if not is_digit(text[0]):
                                    value = -1
                                    break
                                value = value * 10 + (text[0] - 48)
                    put_i32(&elos[k], value if value >= 0 else 0)
                    put_byte(&elo_ok[k], value >= 0)
            for k in range(11):
                out[GAME_COLUMNS[k]] = str_array_valid(&cols[k], &valid[k])
            out["white_elo"] = fixed_array(pa.int32(), &elos[0], &elo_ok[0], True)
            out["black_elo"] = fixed_array(pa.int32(), &elos[1], &elo_ok[1], True)
        finally:
            for k in range(11):
                release(&cols[k].offsets)
                release(&cols[k].data)
                release(&valid[k])
            for k in range(2):
                release(&elos[k])
                release(&elo_ok[k])
        return out

    def clear_moves(self) -> None:
        """Empty the moves columns (taken by the caller); positions stay."""
        self.m_game.len = self.m_ply.len = self.m_key.len = self.m_clock.len = 0
        self.m_clock_ok.len = self.m_cp.len = self.m_cp_ok.len = self.m_mate.len = 0
        self.m_mate_ok.len = 0
        str_init(&self.m_uci)
        str_init(&self.m_san)

    def clear_positions(self) -> None:
        """Empty the positions columns and forget them (taken by the caller, who dedupes
        what comes next against what it wrote)."""
        self.p_key.len = self.p_game.len = self.p_line.len = 0
        self.p_check.len = self.p_check_ok.len = 0
        str_init(&self.p_fen)
        self.n_positions = 0
        self.clashes = set()
        memset(self.slots, 0xFF, (self.slot_mask + 1) * sizeof(PosSlot))

    def add_replay(self, int i, list keys, list fens, list ucis, list sans) -> None:
        """Add a replay made elsewhere (python-chess, for Chess960): keys and FENs of every
        position, UCI and SAN of every move."""
        if self.slots == NULL:
            raise RuntimeError("ChunkReader.add_replay before start_replay")
        cdef GameInfo* info = (<GameInfo*>self.infos.data) + i
        cdef Token* toks = (<Token*>self.tokens.data) + info.token_first
        cdef const int64_t* r = self.records + i * NG
        cdef Py_ssize_t j
        cdef bytes text
        for j in range(len(ucis)):
            put_i32(&self.m_game, i)
            put_i32(&self.m_ply, <int32_t>j)
            put_u64(&self.m_key, keys[j])
            self.annotations(&toks[j])
            text = ucis[j].encode()
            str_add(&self.m_uci, text, len(text))
            text = sans[j].encode()
            str_add(&self.m_san, text, len(text))
        for j in range(len(fens)):
            text = fens[j].encode()
            self.add_position(keys[j], text, len(text), r[G_INDEX], r[G_LINE], CHECK_UNKNOWN)

    cdef inline int move_key(self, int i, int64_t ply, const Position* pos,
                             const Token* tok) except -1:
        put_i32(&self.m_game, i)
        put_i32(&self.m_ply, <int32_t>ply)
        put_u64(&self.m_key, full_key(pos))
        self.annotations(tok)
        return 0

    cdef int move_row(self, int i, int64_t ply, const Position* pos, const Token* tok,
                      const char* uci, int nu, const char* san, int ns) except -1:
        self.move_key(i, ply, pos, tok)
        str_add(&self.m_uci, uci, nu)
        str_add(&self.m_san, san, ns)
        return 0

    cdef inline int annotations(self, const Token* tok) except -1:
        cdef Note none
        cdef const Note* note = &none
        none.flags = 0
        if tok.note >= 0:
            note = (<const Note*>self.notes.data) + tok.note
        put_f64(&self.m_clock, note.clock if note.flags & 1 else 0.0)
        put_byte(&self.m_clock_ok, 1 if note.flags & 1 else 0)
        put_i32(&self.m_cp, note.cp if note.flags & 2 else 0)
        put_byte(&self.m_cp_ok, 1 if note.flags & 2 else 0)
        put_i32(&self.m_mate, note.mate if note.flags & 4 else 0)
        put_byte(&self.m_mate_ok, 1 if note.flags & 4 else 0)
        return 0

    cdef inline int position(self, const Position* pos, const int64_t* r,
                             bint check) except -1:
        cdef char fen[100]
        cdef uint64_t key = full_key(pos)
        # the slot is a cache miss: ask for it first, write the FEN meanwhile
        prefetch(&self.slots[mix(key) & <uint64_t>self.slot_mask])
        cdef int n = write_fen(pos, <unsigned char*>fen)
        return self.add_position(key, fen, n, r[G_INDEX], r[G_LINE], 1 if check else 0)

    cdef int add_position(self, uint64_t key, const char* fen, int n, int64_t game,
                          int64_t line, uint8_t check) except -1:
        """Keep a (key, FEN) pair unless this chunk has it; a FEN other than the first under
        a key is kept too, once (a collision, judged by the writer)."""
        cdef int64_t slot, row
        cdef const int32_t* offsets
        if self.slots == NULL or self.n_positions * 2 >= self.slot_mask:
            self.grow()
        slot = <int64_t>(mix(key) & <uint64_t>self.slot_mask)
        while self.slots[slot].row >= 0:
            if self.slots[slot].key == key:
                row = self.slots[slot].row
                offsets = <const int32_t*>self.p_fen.offsets.data
                if offsets[row + 1] - offsets[row] == n and memcmp(
                        self.p_fen.data.data + offsets[row], fen, n) == 0:
                    return 0
                return self.clash(key, fen, n, game, line, check)
            slot = (slot + 1) & self.slot_mask
        self.slots[slot].key = key
        self.slots[slot].row = self.n_positions
        self.append_position(key, fen, n, game, line, check)
        return 0

    cdef int clash(self, uint64_t key, const char* fen, int n, int64_t game,
                   int64_t line, uint8_t check) except -1:
        pair = (key, PyBytes_FromStringAndSize(fen, n))
        if pair not in self.clashes:
            self.clashes.add(pair)
            self.append_position(key, fen, n, game, line, check)
        return 0

    cdef int append_position(self, uint64_t key, const char* fen, int n, int64_t game,
                             int64_t line, uint8_t check) except -1:
        put_u64(&self.p_key, key)
        str_add(&self.p_fen, fen, n)
        put_i32(&self.p_game, <int32_t>game)
        put_i32(&self.p_line, <int32_t>line)
        put_byte(&self.p_check, <char>(check == 1))
        put_byte(&self.p_check_ok, <char>(check != CHECK_UNKNOWN))
        self.n_positions += 1
        return 0

    cdef int grow(self) except -1:
        cdef int64_t old_size = self.slot_mask + 1 if self.slots != NULL else 0
        cdef int64_t size = old_size * 2 if old_size else 4096, k, slot
        cdef PosSlot* old = self.slots
        cdef PosSlot* slots = <PosSlot*>realloc(NULL, size * sizeof(PosSlot))
        if slots == NULL:
            raise MemoryError()
        for k in range(size):
            slots[k].row = -1
        self.slots = slots
        self.slot_mask = size - 1
        for k in range(old_size):
            if old[k].row >= 0:
                slot = <int64_t>(mix(old[k].key) & <uint64_t>self.slot_mask)
                while slots[slot].row >= 0:
                    slot = (slot + 1) & self.slot_mask
                slots[slot] = old[k]
        free(old)
        return 0

    def start_replay(self) -> None:
        """Empty the replay columns (before the games of a write), sized for every game (or
        for ``row_limit`` moves, when longer)."""
        cdef int64_t plies = min(<int64_t>(self.tokens.len // sizeof(Token)), self.row_limit)
        cdef int64_t rows = plies + self.count, size = 4096
        self.release_replay()
        reserve(&self.m_game, 4 * plies)
        reserve(&self.m_ply, 4 * plies)
        reserve(&self.m_key, 8 * plies)
        reserve(&self.m_clock, 8 * plies)
        reserve(&self.m_clock_ok, plies)
        reserve(&self.m_cp, 4 * plies)
        reserve(&self.m_cp_ok, plies)
        reserve(&self.m_mate, 4 * plies)
        reserve(&self.m_mate_ok, plies)
        reserve(&self.m_uci.data, 5 * plies)
        reserve(&self.m_uci.offsets, 4 * plies + 4)
        reserve(&self.m_san.data, 6 * plies)
        reserve(&self.m_san.offsets, 4 * plies + 4)
        reserve(&self.p_key, 8 * rows)
        reserve(&self.p_game, 4 * rows)
        reserve(&self.p_line, 4 * rows)
        reserve(&self.p_check, rows)
        reserve(&self.p_check_ok, rows)
        reserve(&self.p_fen.data, 60 * rows)
        reserve(&self.p_fen.offsets, 4 * rows + 4)
        str_init(&self.m_uci)
        str_init(&self.m_san)
        str_init(&self.p_fen)
        self.n_positions = 0
        self.clashes = set()
        while size < 2 * rows:
            size *= 2
        self.slots = <PosSlot*>realloc(NULL, size * sizeof(PosSlot))
        if self.slots == NULL:
            raise MemoryError()
        memset(self.slots, 0xFF, size * sizeof(PosSlot))    # row -1: empty
        self.slot_mask = size - 1

    def moves(self, bint take=False) -> dict:
        """The replayed moves' columns: ``game`` (the game's place in the chunk), ``ply``,
        ``position_key``, ``uci``, ``san``, ``clock_s``, ``eval_cp``, ``eval_mate``; copied,
        or taken without a copy (the columns are emptied, as :meth:`clear_moves` does)."""
        out = {"game": fixed_array(pa.int32(), &self.m_game, NULL, take),
               "ply": fixed_array(pa.int32(), &self.m_ply, NULL, take),
               "position_key": fixed_array(pa.uint64(), &self.m_key, NULL, take),
               "uci": str_array(&self.m_uci, take), "san": str_array(&self.m_san, take),
               "clock_s": fixed_array(pa.float64(), &self.m_clock, &self.m_clock_ok, take),
               "eval_cp": fixed_array(pa.int32(), &self.m_cp, &self.m_cp_ok, take),
               "eval_mate": fixed_array(pa.int32(), &self.m_mate, &self.m_mate_ok, take)}
        if take:
            self.clear_moves()
        return out

    def positions(self, bint take=False) -> dict:
        """The chunk's distinct (key, FEN) pairs, each with the first game and line met;
        copied, or taken (and forgotten, as :meth:`clear_positions` does)."""
        out = {"position_key": fixed_array(pa.uint64(), &self.p_key, NULL, take),
               "fen": str_array(&self.p_fen, take),
               "game_index": fixed_array(pa.int32(), &self.p_game, NULL, take),
               "line": fixed_array(pa.int32(), &self.p_line, NULL, take),
               "in_check": fixed_array(pa.uint8(), &self.p_check, &self.p_check_ok, take)}
        if take:
            self.clear_positions()
        return out

    @property
    def distinct_positions(self) -> bool:
        """Whether no key came with two FENs (the positions hold each key once)."""
        return not self.clashes


cdef extern from *:
    void prefetch "__builtin_prefetch" (const void* address) noexcept nogil


cdef inline uint64_t mix(uint64_t key) noexcept nogil:
    key ^= key >> 33
    key *= 0xff51afd7ed558ccdULL
    key ^= key >> 33
    return key


cdef inline bint is_null(const char* s, int n) noexcept nogil:
    return (n == 2 and (memcmp(s, b"--", 2) == 0 or memcmp(s, b"Z0", 2) == 0)) or (
        n == 4 and (memcmp(s, b"0000", 4) == 0 or memcmp(s, b"@@@@", 4) == 0))


cdef void annotate(const char* s, Py_ssize_t n, Note* note) noexcept nogil:
    """The first [%clk] and [%eval] of a comment, unless the move has them."""
    cdef double seconds
    cdef int32_t cp = 0, mate = 0
    cdef int kind
    if not note.flags & 1 and clock_in(s, n, &seconds):
        note.flags |= 1
        note.clock = seconds
    if not note.flags & (2 | 4 | 8):
        kind = eval_in(s, n, &cp, &mate)
        if kind == 1:
            note.flags |= 2
            note.cp = cp
        elif kind == 2:
            note.flags |= 4
            note.mate = mate
        elif kind == 3:
            note.flags |= 8      # an eval out of range: the move has one, stored as null


cdef int unescape(const char* s, Py_ssize_t n, Buf* out) except -1:
    """``TAG_ESCAPE``: ``\\\\`` and ``\\"`` become the character escaped."""
    cdef Py_ssize_t i = 0, start = 0
    if memchr(s, b'\\', n) == NULL:
        return put_bytes(out, s, n)
    while i < n:
        if s[i] == b'\\' and i + 1 < n and (s[i + 1] == b'\\' or s[i + 1] == b'"'):
            put_bytes(out, s + start, i - start)
            put_byte(out, s[i + 1])
            i += 2
            start = i
        else:
            i += 1
    return put_bytes(out, s + start, n - start)


cdef int known_tag(const char* name, int n) noexcept:
    cdef int k
    cdef bytes known
    for k in range(N_KNOWN):
        known = KNOWN_BYTES[k]
        if len(known) == n and memcmp(<const char*>known, name, n) == 0:
            return k
    return -1


KNOWN_BYTES = tuple(name.encode() for name in KNOWN_TAGS)


cdef void sorted_tags(const char* text, const TagRecord* recs, int64_t n,
                      int64_t* order) noexcept:
    """Tag records by name (stable insertion sort: a handful per game); of equal names all
    but the last are marked -1."""
    cdef int64_t i, j, a
    for i in range(n):
        a = i
        j = i - 1
        while j >= 0 and name_less(text, &recs[a], &recs[order[j]]):
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = a
    for i in range(n - 1):
        if same_name(text, &recs[order[i]], &recs[order[i + 1]]):
            order[i] = -1


cdef inline bint name_less(const char* text, const TagRecord* a, const TagRecord* b) noexcept:
    cdef int n = a.name_length if a.name_length < b.name_length else b.name_length
    cdef int c = memcmp(text + a.name_start, text + b.name_start, n)
    return c < 0 or (c == 0 and a.name_length < b.name_length)


cdef inline bint same_name(const char* text, const TagRecord* a, const TagRecord* b) noexcept:
    return a.name_length == b.name_length and memcmp(
        text + a.name_start, text + b.name_start, a.name_length) == 0


cdef int json_string(const char* s, Py_ssize_t n, Buf* out) except -1:
    """``json.dumps(text, ensure_ascii=False)`` of UTF-8 text."""
    cdef Py_ssize_t i, start = 0
    cdef uint8_t c
    cdef char esc[8]
    put_byte(out, b'"')
    for i in range(n):
        c = <uint8_t>s[i]
        if c >= 0x20 and c != b'"' and c != b'\\':
            continue
        put_bytes(out, s + start, i - start)
        start = i + 1
        if c == b'"':
            put_bytes(out, b'\\"', 2)
        elif c == b'\\':
            put_bytes(out, b'\\\\', 2)
        elif c == b'\n':
            put_bytes(out, b'\\n', 2)
        elif c == b'\r':
            put_bytes(out, b'\\r', 2)
        elif c == b'\t':
            put_bytes(out, b'\\t', 2)
        elif c == 8:
            put_bytes(out, b'\\b', 2)
        elif c == 12:
            put_bytes(out, b'\\f', 2)
        else:
            esc[0] = b'\\'
            esc[1] = b'u'
            esc[2] = b'0'
            esc[3] = b'0'
            esc[4] = b"0123456789abcdef"[c >> 4]
            esc[5] = b"0123456789abcdef"[c & 15]
            put_bytes(out, esc, 6)
    put_bytes(out, s + start, n - start)
    return put_byte(out, b'"')
