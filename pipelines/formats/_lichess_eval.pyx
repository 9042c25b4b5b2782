# cython: language_level=3
"""Lines of the Lichess evaluation database read in compiled code (no Python per line).

:func:`scan_block` reads a block of complete lines of ``lichess_db_eval.jsonl``: each line
that has the database's plain shape (an object with a ``fen`` string and a non-empty
``evals`` list, each eval an object with a non-empty ``pvs`` list of objects whose ``cp`` and
``mate`` are integers or null and whose ``line`` is a string or null, and an integer
``depth`` from 0 to ``pipelines.formats.depth.MAX_DEPTH``; other fields of any JSON type are
skipped) becomes a record, and each of its evals a label: the score of the first pv (exactly
one of ``cp``/``mate``, within 32 bits), its first move (UCI) as the best move, its first
``pv_moves`` moves as the PV, ``1000 * knodes`` as the nodes. Any line that is not that
simple (not JSON, another type, an escape or a non-ASCII byte in a string, a duplicate field,
a float, a missing depth or one out of range, two scores, a first move that is not UCI, moves
not separated by single spaces, ...) is left for the careful reader in
Python (``pipelines.formats.lichess_eval``), which records what is wrong with it; the scanner
only promises that every line it keeps gives what that reader would give.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t

import numpy as np

cdef enum:
    MAX_NESTING = 64
    MAX_DIGITS = 18
    # a plain line takes at least this many bytes for its record, an eval for its label:
    # the arrays are sized by them (a line beyond them is left to the careful reader)
    RECORD_BYTES = 32
    LABEL_BYTES = 32
    FAST = 1
    SLOW = 2
    BLANK = 3

from pipelines.formats.depth import MAX_DEPTH as _MAX_DEPTH

cdef int64_t SCORE_LIMIT = 2147483647        # cp and mate: a 32-bit integer
cdef int64_t MAX_DEPTH = _MAX_DEPTH          # depths 0 to this (formats.depth.MAX_DEPTH)
cdef int64_t KNODES_LIMIT = 9007199254740     # lichess_eval.MAX_KNODES: 0 to this, or the careful reader


cdef struct Out:
    # records
    int64_t* fen_off
    uint8_t* fen_data
    int64_t fen_bytes
    int64_t records
    int64_t record_cap
    # labels
    int64_t* record
    int32_t* depth
    int32_t* cp
    uint8_t* cp_ok
    int32_t* mate
    uint8_t* mate_ok
    int64_t* nodes
    uint8_t* nodes_ok
    int64_t* best_off
    uint8_t* best_data
    int64_t best_bytes
    int64_t* pv_list_off
    int64_t* pv_off
    uint8_t* pv_data
    int64_t pv_tokens
    int64_t pv_bytes
    int64_t labels
    int64_t label_cap
    int pv_moves


cdef struct Score:
    int64_t cp
    int64_t mate
    bint has_cp
    bint has_mate
    const uint8_t* line
    Py_ssize_t line_len
    bint has_line


cdef inline const uint8_t* skip_ws(const uint8_t* p, const uint8_t* e) noexcept nogil:
    while p < e and (p[0] == 32 or p[0] == 9 or p[0] == 13):
        p += 1
    return p


cdef inline const uint8_t* plain_string(const uint8_t* p, const uint8_t* e,
                                        const uint8_t** start, Py_ssize_t* length) noexcept nogil:
    """After the closing quote of a string without escapes, control or non-ASCII bytes
    (``p`` at its opening quote); NULL otherwise."""
    cdef const uint8_t* s
    if p >= e or p[0] != 34:
        return NULL
    p += 1
    s = p
    while p < e and p[0] != 34:
        if p[0] == 92 or p[0] < 32 or p[0] >= 128:
            return NULL
        p += 1
    if p >= e:
        return NULL
    start[0] = s
    length[0] = p - s
    return p + 1


cdef inline bint is_digit(uint8_t c) noexcept nogil:
    return 48 <= c <= 57


cdef inline bint is_hex(uint8_t c) noexcept nogil:
    return is_digit(c) or 97 <= c <= 102 or 65 <= c <= 70


cdef inline const uint8_t* skip_string(const uint8_t* p, const uint8_t* e) noexcept nogil:
    """After a JSON string (ASCII only, escapes allowed); NULL otherwise."""
    if p >= e or p[0] != 34:
        return NULL
    p += 1
    while p < e and p[0] != 34:
        if p[0] < 32 or p[0] >= 128:
            return NULL
        if p[0] == 92:
            p += 1
            if p >= e:
                return NULL
            if p[0] == 117:   # \uXXXX
                if e - p < 5 or not (is_hex(p[1]) and is_hex(p[2]) and is_hex(p[3])
                                     and is_hex(p[4])):
                    return NULL
                p += 4
            elif not (p[0] == 34 or p[0] == 92 or p[0] == 47 or p[0] == 98 or p[0] == 102
                    or p[0] == 110 or p[0] == 114 or p[0] == 116):
                return NULL
        p += 1
    if p >= e:
        return NULL
    return p + 1


cdef inline const uint8_t* read_int(const uint8_t* p, const uint8_t* e, int64_t* value,
                                    bint* null) noexcept nogil:
    """After a JSON integer (at most 18 digits) or ``null``; NULL for anything else (a
    float, an exponent, a string)."""
    cdef bint negative = False
    cdef int digits = 0
    cdef int64_t v = 0
    if e - p >= 4 and p[0] == 110 and p[1] == 117 and p[2] == 108 and p[3] == 108:
        null[0] = True
        value[0] = 0
        return p + 4
    null[0] = False
    if p < e and p[0] == 45:
        negative = True
        p += 1
    if p >= e or not is_digit(p[0]):
        return NULL
    if p[0] == 48 and p + 1 < e and is_digit(p[1]):
        return NULL    # a leading zero is not JSON
    while p < e and is_digit(p[0]):
        v = v * 10 + (p[0] - 48)
        digits += 1
        if digits > MAX_DIGITS:
            return NULL
        p += 1
    if p < e and (p[0] == 46 or p[0] == 101 or p[0] == 69):
        return NULL    # a fraction or an exponent
    value[0] = -v if negative else v
    return p


cdef const uint8_t* skip_number(const uint8_t* p, const uint8_t* e) noexcept nogil:
    """After a JSON number (the grammar of RFC 8259); NULL when it is not one."""
    if p < e and p[0] == 45:
        p += 1
    if p >= e or not is_digit(p[0]):
        return NULL
    if p[0] == 48:
        p += 1
    else:
        while p < e and is_digit(p[0]):
            p += 1
    if p < e and p[0] == 46:
        p += 1
        if p >= e or not is_digit(p[0]):
            return NULL
        while p < e and is_digit(p[0]):
            p += 1
    if p < e and (p[0] == 101 or p[0] == 69):
        p += 1
        if p < e and (p[0] == 43 or p[0] == 45):
            p += 1
        if p >= e or not is_digit(p[0]):
            return NULL
        while p < e and is_digit(p[0]):
            p += 1
    return p


cdef inline bint literal(const uint8_t* p, const uint8_t* e, const char* word,
                         int n) noexcept nogil:
    cdef int i
    if e - p < n:
        return False
    for i in range(n):
        if p[i] != <uint8_t>word[i]:
            return False
    return True


cdef const uint8_t* skip_value(const uint8_t* p, const uint8_t* e, int nesting) noexcept nogil:
    """After any JSON value (the fields the database does not define); NULL when it is not
    plain JSON."""
    cdef uint8_t c
    if nesting > MAX_NESTING or p >= e:
        return NULL
    c = p[0]
    if c == 34:
        return skip_string(p, e)
    if c == 123 or c == 91:
        p = skip_ws(p + 1, e)
        if p < e and p[0] == (125 if c == 123 else 93):
            return p + 1
        while True:
            if c == 123:
                p = skip_string(p, e)
                if p == NULL:
                    return NULL
                p = skip_ws(p, e)
                if p >= e or p[0] != 58:
                    return NULL
                p = skip_ws(p + 1, e)
            p = skip_value(p, e, nesting + 1)
            if p == NULL:
                return NULL
            p = skip_ws(p, e)
            if p >= e:
                return NULL
            if p[0] == 44:
                p = skip_ws(p + 1, e)
                continue
            if p[0] == (125 if c == 123 else 93):
                return p + 1
            return NULL
    if literal(p, e, b"true", 4):
        return p + 4
    if literal(p, e, b"false", 5):
        return p + 5
    if literal(p, e, b"null", 4):
        return p + 4
    return skip_number(p, e)


cdef inline bint named(const uint8_t* key, Py_ssize_t n, const char* name,
                       int size) noexcept nogil:
    return n == size and literal(key, key + n, name, size)


cdef const uint8_t* key_colon(const uint8_t* p, const uint8_t* e, const uint8_t** key,
                              Py_ssize_t* n) noexcept nogil:
    """After ``"key" :`` and the blanks after it."""
    p = plain_string(p, e, key, n)
    if p == NULL:
        return NULL
    p = skip_ws(p, e)
    if p >= e or p[0] != 58:
        return NULL
    return skip_ws(p + 1, e)


cdef inline const uint8_t* next_member(const uint8_t* p, const uint8_t* e, uint8_t close,
                                       bint* done) noexcept nogil:
    """After the ``,`` (``done`` False) or the closing bracket (``done`` True) after a
    member; NULL otherwise."""
    p = skip_ws(p, e)
    if p >= e:
        return NULL
    if p[0] == 44:
        done[0] = False
        return skip_ws(p + 1, e)
    if p[0] == close:
        done[0] = True
        return p + 1
    return NULL


cdef const uint8_t* read_pv(const uint8_t* p, const uint8_t* e, Score* score) noexcept nogil:
    """After a pv object; its cp, mate and line in ``score``."""
    cdef const uint8_t* key
    cdef Py_ssize_t n
    cdef bint null, done, seen_cp = False, seen_mate = False, seen_line = False
    cdef int64_t value
    score.has_cp = score.has_mate = score.has_line = False
    if p >= e or p[0] != 123:
        return NULL
    p = skip_ws(p + 1, e)
    if p < e and p[0] == 125:
        return p + 1
    while True:
        p = key_colon(p, e, &key, &n)
        if p == NULL:
            return NULL
        if named(key, n, b"cp", 2) or named(key, n, b"mate", 4):
            if (seen_cp if n == 2 else seen_mate):
                return NULL
            p = read_int(p, e, &value, &null)
            if p == NULL:
                return NULL
            if n == 2:
                seen_cp = True
                score.has_cp, score.cp = not null, value
            else:
                seen_mate = True
                score.has_mate, score.mate = not null, value
        elif named(key, n, b"line", 4):
            if seen_line:
                return NULL
            seen_line = True
            if literal(p, e, b"null", 4):
                p += 4
            else:
                p = plain_string(p, e, &score.line, &score.line_len)
                if p == NULL:
                    return NULL
                score.has_line = True
        else:
            p = skip_value(p, e, 2)
            if p == NULL:
                return NULL
        p = next_member(p, e, 125, &done)
        if p == NULL:
            return NULL
        if done:
            return p


cdef inline bint uci(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """``^[a-h][1-8][a-h][1-8][qrbn]?$``"""
    if n != 4 and n != 5:
        return False
    if not (97 <= s[0] <= 104 and 49 <= s[1] <= 56 and 97 <= s[2] <= 104 and 49 <= s[3] <= 56):
        return False
    return n == 4 or s[4] == 113 or s[4] == 114 or s[4] == 98 or s[4] == 110


cdef bint put_label(Out* out, Score* first, int64_t depth, int64_t knodes,
                    bint has_knodes) noexcept nogil:
    """Append the label of an eval; False when the careful reader must judge it."""
    cdef const uint8_t* s = first.line
    cdef Py_ssize_t n = first.line_len, i, start = 0, tokens = 0
    cdef int64_t label = out.labels
    if label >= out.label_cap:
        return False
    if first.has_cp == first.has_mate or not first.has_line or n == 0:
        return False
    if (first.has_cp and (first.cp > SCORE_LIMIT or first.cp < -SCORE_LIMIT)) or \
            (first.has_mate and (first.mate > SCORE_LIMIT or first.mate < -SCORE_LIMIT)):
        return False
    if has_knodes and (knodes > KNODES_LIMIT or knodes < 0):
        return False
    # moves separated by single spaces (anything else: the careful reader)
    if s[0] == 32 or s[n - 1] == 32:
        return False
    for i in range(1, n):
        if s[i] == 32 and s[i - 1] == 32:
            return False
    i = 0
    while i < n and s[i] != 32:
        i += 1
    if not uci(s, i):
        return False
    out.record[label] = out.records
    out.depth[label] = <int32_t>depth
    out.cp[label] = <int32_t>first.cp if first.has_cp else 0
    out.cp_ok[label] = first.has_cp
    out.mate[label] = <int32_t>first.mate if first.has_mate else 0
    out.mate_ok[label] = first.has_mate
    out.nodes[label] = knodes * 1000 if has_knodes else 0
    out.nodes_ok[label] = has_knodes
    for start in range(i):
        out.best_data[out.best_bytes + start] = s[start]
    out.best_bytes += i
    out.best_off[label + 1] = out.best_bytes
    start = 0
    for i in range(n + 1):
        if i == n or s[i] == 32:
            if tokens < out.pv_moves:
                while start < i:
                    out.pv_data[out.pv_bytes] = s[start]
                    out.pv_bytes += 1
                    start += 1
                out.pv_tokens += 1
                out.pv_off[out.pv_tokens] = out.pv_bytes
                tokens += 1
            start = i + 1
    out.pv_list_off[label + 1] = out.pv_tokens
    out.labels += 1
    return True


cdef const uint8_t* read_eval(const uint8_t* p, const uint8_t* e, Out* out) noexcept nogil:
    """After an eval object, its label appended; NULL when the careful reader must judge."""
    cdef const uint8_t* key
    cdef Py_ssize_t n
    cdef bint null, done, pv_done, seen_pvs = False, seen_knodes = False, seen_depth = False
    cdef bint has_knodes = False, has_depth = False, has_first = False
    cdef int64_t value, knodes = 0, depth = 0
    cdef Score first, other
    if p >= e or p[0] != 123:
        return NULL
    p = skip_ws(p + 1, e)
    if p < e and p[0] == 125:
        return NULL
    while True:
        p = key_colon(p, e, &key, &n)
        if p == NULL:
            return NULL
        if named(key, n, b"pvs", 3):
            if seen_pvs or p >= e or p[0] != 91:
                return NULL
            seen_pvs = True
            p = skip_ws(p + 1, e)
            if p < e and p[0] == 93:
                return NULL     # no pvs: the careful reader says so
            while True:
                p = read_pv(p, e, &other if has_first else &first)
                if p == NULL:
                    return NULL
                has_first = True
                p = next_member(p, e, 93, &pv_done)
                if p == NULL:
                    return NULL
                if pv_done:
                    break
        elif named(key, n, b"knodes", 6) or named(key, n, b"depth", 5):
            if (seen_knodes if n == 6 else seen_depth):
                return NULL
            p = read_int(p, e, &value, &null)
            if p == NULL:
                return NULL
            if n == 6:
                seen_knodes, has_knodes, knodes = True, not null, value
            else:
                seen_depth, has_depth, depth = True, not null, value
        else:
            p = skip_value(p, e, 2)
            if p == NULL:
                return NULL
        p = next_member(p, e, 125, &done)
        if p == NULL:
            return NULL
        if done:
            break
    if not has_first or not has_depth or depth > MAX_DEPTH or depth < 0:
        return NULL
    if not put_label(out, &first, depth, knodes, has_knodes):
        return NULL
    return p


cdef bint read_line(const uint8_t* p, const uint8_t* e, Out* out) noexcept nogil:
    """Append the record of a line and its labels; False (nothing appended) when the
    careful reader must judge the line."""
    cdef const uint8_t* key
    cdef const uint8_t* fen = NULL
    cdef Py_ssize_t n, fen_len = 0, i
    cdef bint done, evals_done, seen_evals = False
    cdef int64_t labels = out.labels, best = out.best_bytes, tokens = out.pv_tokens
    cdef int64_t pv_bytes = out.pv_bytes
    p = skip_ws(p, e)
    if p >= e or p[0] != 123:
        return False
    p = skip_ws(p + 1, e)
    while True:
        p = key_colon(p, e, &key, &n)
        if p == NULL:
            break
        if named(key, n, b"fen", 3):
            if fen != NULL:
                p = NULL
                break
            p = plain_string(p, e, &fen, &fen_len)
            if p == NULL:
                break
        elif named(key, n, b"evals", 5):
            if seen_evals or p >= e or p[0] != 91:
                p = NULL
                break
            seen_evals = True
            p = skip_ws(p + 1, e)
            if p < e and p[0] == 93:
                p = NULL     # no evals: the careful reader says so
                break
            while True:
                p = read_eval(p, e, out)
                if p == NULL:
                    break
                p = next_member(p, e, 93, &evals_done)
                if p == NULL or evals_done:
                    break
            if p == NULL:
                break
        else:
            p = skip_value(p, e, 1)
            if p == NULL:
                break
        p = next_member(p, e, 125, &done)
        if p == NULL or done:
            break
    if p != NULL:
        p = skip_ws(p, e)
    if p == NULL or p != e or fen == NULL or not seen_evals or out.records >= out.record_cap:
        out.labels, out.best_bytes, out.pv_tokens, out.pv_bytes = labels, best, tokens, pv_bytes
        return False
    for i in range(fen_len):
        out.fen_data[out.fen_bytes + i] = fen[i]
    out.fen_bytes += fen_len
    out.records += 1
    out.fen_off[out.records] = out.fen_bytes
    return True


def scan_block(data, int pv_moves):
    """Read the lines of ``data`` (bytes of complete lines).

    Returns a dict of numpy arrays: ``fast`` (index in the block of each line read here, in
    order), ``slow`` (of the lines the careful reader must judge), ``blank`` (the lines of
    whitespace only: no record), ``fen_offsets``/``fen_data`` (the FEN of each line read),
    and per label (in line order, then eval order) ``record`` (its line's index among the
    ``fast`` ones), ``depth``, ``cp``/``cp_ok``, ``mate``/``mate_ok``, ``nodes``/``nodes_ok``,
    ``best_offsets``/``best_data``, ``pv_list_offsets``, ``pv_offsets``/``pv_data``.
    """
    cdef const uint8_t[:] src = memoryview(data).cast("B") if len(data) else b"\n"
    cdef Py_ssize_t size = len(data)
    cdef Py_ssize_t records = size // RECORD_BYTES + 1, labels = size // LABEL_BYTES + 1
    kinds_np = np.empty(size + 1, np.uint8)     # of each line (at most one a byte)
    fen_off_np = np.zeros(records + 1, np.int64)
    fen_data_np = np.empty(max(size, 1), np.uint8)
    record_np = np.empty(labels, np.int64)
    depth_np = np.empty(labels, np.int32)
    cp_np = np.empty(labels, np.int32)
    cp_ok_np = np.empty(labels, np.uint8)
    mate_np = np.empty(labels, np.int32)
    mate_ok_np = np.empty(labels, np.uint8)
    nodes_np = np.empty(labels, np.int64)
    nodes_ok_np = np.empty(labels, np.uint8)
    best_off_np = np.zeros(labels + 1, np.int64)
    best_data_np = np.empty(max(size, 1), np.uint8)
    pv_list_off_np = np.zeros(labels + 1, np.int64)
    pv_off_np = np.zeros(max(size, 1) + 1, np.int64)
    pv_data_np = np.empty(max(size, 1), np.uint8)
    cdef uint8_t[:] kinds = kinds_np
    cdef int64_t[:] fen_off = fen_off_np
    cdef uint8_t[:] fen_data = fen_data_np
    cdef int64_t[:] record = record_np
    cdef int32_t[:] depth = depth_np
    cdef int32_t[:] cp = cp_np
    cdef uint8_t[:] cp_ok = cp_ok_np
    cdef int32_t[:] mate = mate_np
    cdef uint8_t[:] mate_ok = mate_ok_np
    cdef int64_t[:] nodes = nodes_np
    cdef uint8_t[:] nodes_ok = nodes_ok_np
    cdef int64_t[:] best_off = best_off_np
    cdef uint8_t[:] best_data = best_data_np
    cdef int64_t[:] pv_list_off = pv_list_off_np
    cdef int64_t[:] pv_off = pv_off_np
    cdef uint8_t[:] pv_data = pv_data_np
    cdef Out out
    out.fen_off, out.fen_data, out.fen_bytes, out.records = &fen_off[0], &fen_data[0], 0, 0
    out.record_cap, out.label_cap = records, labels
    out.record, out.depth, out.cp, out.cp_ok = &record[0], &depth[0], &cp[0], &cp_ok[0]
    out.mate, out.mate_ok, out.nodes, out.nodes_ok = &mate[0], &mate_ok[0], &nodes[0], \
        &nodes_ok[0]
    out.best_off, out.best_data, out.best_bytes = &best_off[0], &best_data[0], 0
    out.pv_list_off, out.pv_off, out.pv_data = &pv_list_off[0], &pv_off[0], &pv_data[0]
    out.pv_tokens, out.pv_bytes, out.labels, out.pv_moves = 0, 0, 0, pv_moves
    cdef Py_ssize_t start = 0, end, line = 0, j
    cdef const uint8_t* base = &src[0]
    cdef bint empty
    with nogil:
        while start < size:
            end = start
            while end < size and base[end] != 10:
                end += 1
            empty = True
            for j in range(start, end):
                if not (base[j] == 32 or (9 <= base[j] <= 13)):
                    empty = False
                    break
            if empty:
                kinds[line] = BLANK
            elif read_line(base + start, base + end, &out):
                kinds[line] = FAST
            else:
                kinds[line] = SLOW
            line += 1
            start = end + 1
    kinds_np = kinds_np[:line]
    return {
        "fast": np.flatnonzero(kinds_np == FAST), "slow": np.flatnonzero(kinds_np == SLOW),
        "blank": np.flatnonzero(kinds_np == BLANK),
        "fen_offsets": fen_off_np[:out.records + 1], "fen_data": fen_data_np[:out.fen_bytes],
        "record": record_np[:out.labels], "depth": depth_np[:out.labels],
        "cp": cp_np[:out.labels], "cp_ok": cp_ok_np[:out.labels].view(bool),
        "mate": mate_np[:out.labels], "mate_ok": mate_ok_np[:out.labels].view(bool),
        "nodes": nodes_np[:out.labels], "nodes_ok": nodes_ok_np[:out.labels].view(bool),
        "best_offsets": best_off_np[:out.labels + 1], "best_data": best_data_np[:out.best_bytes],
        "pv_list_offsets": pv_list_off_np[:out.labels + 1],
        "pv_offsets": pv_off_np[:out.pv_tokens + 1], "pv_data": pv_data_np[:out.pv_bytes],
    }
