"""Stockfish binpack: the compiled reader and writer against bytes computed by hand from the
format's documentation, against an independent Python encoder written from the same
documentation (tests/pipelines/binpack_reference.py), and against each other; a cut chain or a
bad block is recorded with its byte offset and the rest is imported."""
from __future__ import annotations

import gzip
import io
import random
import zlib
from pathlib import Path

import chess
import chess.polyglot
import numpy as np
import pytest
from pipelines.formats.binpack import (
    BinpackWriter,
    decode_chunk,
    signed_to_unsigned_py,
    unsigned_to_signed_py,
)

from flows.ingest import INGEST, IngestJob
from flows.step import run_step
from pipelines.formats.binpack_file import centipawns
from pipelines.ingest import IngestConfig
from tests.pipelines import binpack_reference as ref
from tests.pipelines.binpack_by_hand import BY_HAND, BY_HAND_ENTRIES, BY_HAND_LABELS
from tests.pipelines.test_formats_blocks import CutAfter
from warehouse import Lake, connect

# The start position's stem, worked out by hand from docs/binpack.md and chess.h:
# occupied a1-h2 and a7-h8 = 0xFFFF00000000FFFF, big endian;
# nibbles a1..h1 R(castling)=13 N=2 B=4 Q=8 K=10 B=4 N=2 R(castling)=13, low nibble first:
# 0x2D 0x84 0x4A 0xD2; white pawns 0 -> 00 00 00 00; black pawns 1 -> 11 11 11 11;
# a8..h8 r(castling)=14 n=3 b=5 q=9 k(white to move)=11 b=5 n=3 r(castling)=14 -> 3E 95 5B E3;
# move e2e4: normal (0), from 12, to 28 -> 12 << 8 | 28 << 2 = 0x0C70;
# score 20 -> signedToUnsigned 40 = 0x0028; ply 0, result 0 -> 0x0000; rule50 0.
START_STEM = bytes.fromhex("FFFF00000000FFFF" "2D844AD2" "00000000" "11111111" "3E955BE3"
                           "0C70" "0028" "0000" "0000")
# A chain from it: 1. e4 (20) e5 (-15, Black's view) 2. Nf3 (25), worked out bit by bit:
# after 1.e4 Black has 16 pieces (4 bits); e7 is the 5th in square order -> 0100; the pawn's
# destinations {e5, e6}: e5 is index 0 of 2 (1 bit) -> 0; score -15 after 20: -15 - (-20) = 5,
# signedToUnsigned 10 -> one 5-bit block 01010;
# after 1...e5 White has 16 pieces; g1 is the 7th -> 0110; the knight's targets {e2, f3, h3}:
# f3 is index 1 of 3 (2 bits) -> 01; score 25 after -15: 25 - 15 = 10, signedToUnsigned 20
# -> blocks 1 0100 then 0 0001 -> 10100 00001.
# bits: 0100 0 01010 0110 01 10100 00001 -> 01000010 10011001 10100000 01(000000).
CHAIN = START_STEM + bytes.fromhex("0002" "4299A040")
BLOCK = b"BINP" + len(CHAIN).to_bytes(4, "little") + CHAIN


def decoded(data: bytes, base: int = 8) -> dict[str, list]:
    columns = decode_chunk(np.frombuffer(data, np.uint8), base).columns()
    return {name: list(value.to_pylist() if hasattr(value, "to_pylist") else value.tolist())
            for name, value in columns.items()}


def written(fens: list[str], moves: list[str | None], scores: list[int], plies: list[int],
            results: list[int]) -> bytes:
    out = io.BytesIO()
    writer = BinpackWriter(out)
    assert writer.add(fens, moves, scores, plies, results) == []
    writer.close()
    return out.getvalue()


def test_signed_to_unsigned_puts_the_sign_in_bit_zero() -> None:
    """binpack.md's signedToUnsigned: 0 -> 0, 1 -> 2, -1 -> 1, 2 -> 4, -2 -> 3; and back."""
    values = [0, 1, -1, 2, -2, 32000, -32000]
    assert [signed_to_unsigned_py(v) for v in values] == [0, 2, 1, 4, 3, 64000, 63999]
    assert [unsigned_to_signed_py(signed_to_unsigned_py(v)) for v in values] == values


def test_writer_gives_the_hand_computed_stem_and_chain() -> None:
    """The writer's bytes for 1. e4 e5 2. Nf3 are the ones worked out from the documentation."""
    board = chess.Board()
    fens, moves = [], ["e2e4", "e7e5", "g1f3"]
    for move in moves:
        fens.append(board.fen())
        board.push_uci(move)
    assert written(fens, moves, [20, -15, 25], [0, 1, 2], [0, 0, 0]) == BLOCK
    assert ref.block([ref.chain([ref.Entry(chess.Board(f), chess.Move.from_uci(m), s, p, 0)
                                 for f, m, s, p in zip(fens, moves, [20, -15, 25], [0, 1, 2],
                                                       strict=True)])]) == BLOCK


def test_reader_decodes_the_hand_built_chain() -> None:
    """The reader gives the three positions (python-chess's FENs and Polyglot keys), the moves,
    the scores from each side's view, the plies and the results."""
    entries = decoded(CHAIN)
    boards = [chess.Board(), chess.Board(), chess.Board()]
    boards[1].push_uci("e2e4")
    boards[2].push_uci("e2e4")
    boards[2].push_uci("e7e5")
    assert entries["fen"] == [b.epd() for b in boards]
    assert entries["key"] == [chess.polyglot.zobrist_hash(b) for b in boards]
    assert entries["move"] == ["e2e4", "e7e5", "g1f3"]
    assert entries["score"] == [20, -15, 25]
    assert entries["ply"] == [0, 1, 2]
    assert entries["result"] == [0, 0, 0]
    assert entries["offset"] == [8, 8, 8]


def random_games(seed: int, games: int) -> list[list[ref.Entry]]:
    """Random games (castling, en passant and promotions come up), as binpack entries."""
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        board, result, entries = chess.Board(), rng.choice([1, 0, -1]), []
        for ply in range(rng.randrange(40, 300)):
            moves = list(board.legal_moves)
            if not moves:
                break
            # special moves are rare in random play: take one when there is one, most times
            special = [m for m in moves if board.is_en_passant(m) or board.is_castling(m)]
            pawns = [m for m in moves if board.piece_type_at(m.from_square) == chess.PAWN]
            move = rng.choice(special if special and rng.random() < 0.8 else
                              pawns if pawns and rng.random() < 0.4 else moves)
            entries.append(ref.Entry(board.copy(), move, rng.randrange(-20000, 20000), ply,
                                     result if board.turn else -result))
            board.push(move)
        out.append(entries)
    return out


def test_reader_and_writer_match_the_reference_encoder_on_random_games() -> None:
    """60 random games: the reference encoder's bytes decode to python-chess's positions,
    and the compiled writer writes exactly those bytes."""
    games = random_games(7, 60)
    reference = ref.block([ref.chain(game) for game in games])
    flat = [entry for game in games for entry in game]
    kinds = {"castling": 0, "en passant": 0, "promotion": 0}
    for entry in flat:
        kinds["castling"] += entry.board.is_castling(entry.move)
        kinds["en passant"] += entry.board.is_en_passant(entry.move)
        kinds["promotion"] += entry.move.promotion is not None
    assert min(kinds.values()) > 0, kinds
    entries = decoded(reference[8:])
    assert entries["fen"] == [e.board.epd() for e in flat]
    assert entries["key"] == [chess.polyglot.zobrist_hash(e.board) for e in flat]
    assert entries["move"] == [e.move.uci() for e in flat]
    assert entries["score"] == [e.score for e in flat]
    assert entries["result"] == [e.result for e in flat]
    assert written([e.board.fen() for e in flat], [e.move.uci() for e in flat],
                   [e.score for e in flat], [e.ply for e in flat],
                   [e.result for e in flat]) == reference


def test_unrelated_positions_are_stems_of_their_own() -> None:
    """Positions that do not follow each other are written as separate stems (0 plies), and
    a position without a move is written with a null move and read back without one."""
    fens = ["4k3/8/8/8/8/8/8/4K2R w K - 0 1", "8/8/8/8/8/8/8/K6k b - - 0 1",
            "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1"]
    data = written(fens, ["e1g1", None, "e8c8"], [10, 0, -30], [0, 1, 7], [1, 0, -1])
    assert len(data) == 8 + 3 * 34
    entries = decoded(data[8:])
    assert entries["fen"] == [chess.Board(f).epd() for f in fens]
    assert entries["move"] == ["e1g1", None, "e8c8"]
    assert entries["ply"] == [0, 1, 7] and entries["result"] == [1, 0, -1]


def test_scores_become_centipawns_as_nnue_pytorch_converts_them() -> None:
    """100 * score / 208 (training_data_entry.h); mates from 32000 - plies; 32002 is none."""
    cp, mate = centipawns(np.array([208, -416, 31999, -31998, 32002], np.int16))
    assert cp.tolist() == [100, -200, None, None, None]
    assert mate.tolist() == [None, None, 1, -1, None]
    # at the edges: 31753 the last score (15265.87 cp), 31754 = VALUE_MATE_IN_MAX_PLY the
    # first mate ((32000 - 31754 + 1) // 2 = 123 moves), -32000 the side to move mated
    # (python-chess's Mate(-0), stored 0), past +-32000 nothing (-32768: int16's least)
    cp, mate = centipawns(np.array([31753, 31754, -31754, -32000, 32001, -32768], np.int16))
    assert cp.tolist() == [15266, None, None, None, None, None]
    assert mate.tolist() == [None, 123, -123, 0, None, None]


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_a_cut_chain_is_recorded_with_its_offset_and_the_rest_imported(tmp_path: Path) -> None:
    """A file cut inside its second chain: the first chain and the plies of the second before
    the cut are imported; one bad_chain and one truncated error name byte offsets; the summary,
    the sources row and the tables agree."""
    games = random_games(3, 2)
    chains = [ref.chain(game) for game in games]
    whole = ref.block(chains)
    cut_at = 8 + len(chains[0]) + 34 + 40
    path = write(tmp_path / "cut.binpack", whole[:cut_at])
    lake = Lake(tmp_path / "home")
    [summary] = run_step(INGEST, IngestJob((path,), IngestConfig.tiny()), lake)
    con = connect(lake)
    errors = con.execute("select kind, byte_offset from ingest_errors order by kind").fetchall()
    assert errors == [("bad_chain", 8 + len(chains[0])), ("truncated", 0)]
    first_chain = len(games[0])
    assert first_chain < summary.records < first_chain + len(games[1])
    assert summary.errors == 2 and summary.truncated
    stored = con.execute("select count(*) from labels").fetchone()[0]
    assert stored == summary.labels
    source = con.execute("select records, labels, errors, new_positions, truncated "
                         "from sources").fetchone()
    assert source == (summary.records, summary.labels, 2, summary.new_positions, True)
    assert con.execute("select count(*) from positions").fetchone()[0] == summary.new_positions


def test_a_cut_gz_archive_imports_what_the_file_cut_at_the_same_byte_imports(
        tmp_path: Path) -> None:
    """A .binpack.gz cut in its middle imports the records, labels and errors of the plain
    file cut at the byte the archive's readable part ends at (zlib's one-shot decoder says
    where): a block cut by the archive is decoded as far as its bytes go, as in a cut file.
    The decompressor's error once escaped (read_some) and the file's whole import failed."""
    games = random_games(11, 12)
    data = b"".join(ref.block([ref.chain(game)]) for game in games)   # a block a game
    packed = gzip.compress(data)
    cut_bytes = packed[:len(packed) * 3 // 5]
    readable = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(cut_bytes)
    assert 0 < len(readable) < len(data)
    plain = write(tmp_path / "plain_cut.binpack", data[:len(readable)])
    archive = write(tmp_path / "cut.binpack.gz", cut_bytes)
    counts = []
    for path in (plain, archive):
        lake = Lake(tmp_path / path.name.replace(".", "_"))
        [summary] = run_step(INGEST, IngestJob((path,), IngestConfig.tiny()), lake)
        kinds = connect(lake).execute("select kind, byte_offset from ingest_errors "
                                      "order by byte_offset").fetchall()
        counts.append((summary.records, summary.labels, summary.truncated, kinds))
    assert counts[0] == counts[1]
    assert counts[0][2] and "truncated" in [kind for kind, _ in counts[0][3]]


@pytest.mark.parametrize("junk_bytes", [8, 24, 32, 45])
def test_a_block_that_is_no_binpack_block_ends_the_file_with_an_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, junk_bytes: int) -> None:
    """Garbage after the first block: its offset and size are recorded; the block is kept.
    The bytes left are counted in reads of 16 here: less than one read, one and a half,
    exactly two (the read after them finds none), several."""
    from pipelines.formats import binpack_file

    monkeypatch.setattr(binpack_file, "READ_BYTES", 16)
    games = random_games(5, 1)
    data = ref.block([ref.chain(games[0])])
    junk = (b"JUNK" + bytes(range(60)))[:junk_bytes]
    path = write(tmp_path / "junk.binpack", data + junk)
    lake = Lake(tmp_path / "home")
    [summary] = run_step(INGEST, IngestJob((path,), IngestConfig(workers=1)), lake)
    assert summary.records == len(games[0])
    row = connect(lake).execute("select kind, byte_offset, message from ingest_errors").fetchone()
    assert row == ("bad_chunk", len(data), f"no binpack block at byte {len(data)} (header "
                   f"{junk[:8]!r}): the {junk_bytes} bytes from there on are not read")


def test_export_scores_and_results_in_binpack_s_units_and_types() -> None:
    """Centipawns to binpack's units (208 a pawn, rounded), kept below Stockfish's
    VALUE_MATE_IN_MAX_PLY (32000 - 246 = 31754, from which a score reads as a mate): 31753
    at most either way, as int16; results 0, 0.5, 1 as int8 -1, 0, 1."""
    from pipelines.formats.binpack_file import binpack_results, binpack_scores

    scores = binpack_scores(np.array([100, -50, 15265, 15266, 20000, -20000]))
    # 15265 * 2.08 = 31751.2; 15266 * 2.08 = 31753.28; 20000 * 2.08 = 41600
    assert scores.tolist() == [208, -104, 31751, 31753, 31753, -31753]
    assert scores.dtype == np.int16
    assert centipawns(scores)[1].tolist() == [None] * 6      # none of them reads as a mate
    results = binpack_results(np.array([0.0, 0.5, 1.0]))
    assert results.tolist() == [-1, 0, 1] and results.dtype == np.int8


def test_an_error_names_a_records_line_where_its_format_has_lines() -> None:
    import pyarrow as pa

    from pipelines.formats.records import RecordBlock, line_of

    assert line_of(RecordBlock(records=2, lines=pa.array([3, 9])), 1) == 9
    assert line_of(RecordBlock(records=2), 1) is None


@pytest.mark.parametrize("fen", ["4k3/8/8/8/8/8/8/4K3 w - - 0 1"])
def test_an_illegal_move_is_refused_by_the_writer(fen: str) -> None:
    """A move that is not legal in its position is not written: the writer says which."""
    writer = BinpackWriter(io.BytesIO())
    refused = writer.add([fen], ["e1e3"], [0], [0], [0])
    assert refused and refused[0][0] == 0 and "e1e3" in refused[0][1]



def test_the_hand_built_file_decodes_to_the_documented_entries() -> None:
    """Issue 48 §3: both sides to move, castling in a stem and in a movetext, en passant in
    both, a promotion in both, mates, rule-50 counters: each entry field by field."""
    entries = decoded(BY_HAND[8:])
    got = list(zip(entries["fen"], entries["move"], entries["score"], entries["ply"],
                   entries["result"], entries["rule50"], entries["offset"], strict=True))
    assert got == BY_HAND_ENTRIES
    assert entries["side"] == [1, 0, 1, 0, 0, 1, 0, 1]


def test_the_hand_built_file_imports_as_the_documented_labels(tmp_path: Path) -> None:
    """Issue 48 §3: binpack's importer once read the side to move's scores as White's and
    every binpack test passed; here Black's -312 must be stored as score_cp -150 and white_cp
    +150, Black's loss as result 0, Black being mated as score_mate -2."""
    path = write(tmp_path / "by_hand.binpack", BY_HAND)
    lake = Lake(tmp_path / "home")
    [summary] = run_step(INGEST, IngestJob((path,), IngestConfig(workers=1, depth=5)), lake)
    assert (summary.records, summary.labels, summary.errors) == (8, 8, 0)
    rows = connect(lake).execute(
        "select p.fen, l.score_cp, l.score_mate, l.white_cp, l.white_mate, l.result, "
        "l.best_move, l.depth, l.engine_id from labels l join positions p using "
        "(position_key)").fetchall()
    assert sorted(rows) == sorted(label + (5, "binpack") for label in BY_HAND_LABELS)


def test_the_writer_writes_the_hand_built_file() -> None:
    """Issue 48 §3: the same entries written give the same bytes (chains joined where each
    entry follows the previous one's move)."""
    fens = [f"{fen} {rule50} 1" for fen, _, _, _, _, rule50, _ in BY_HAND_ENTRIES]
    moves, scores, plies, results = ([entry[i] for entry in BY_HAND_ENTRIES] for i in (1, 2, 3, 4))
    assert written(fens, moves, scores, plies, results) == BY_HAND


@pytest.mark.parametrize(("error", "reason"), [
    (EOFError("Compressed file ended before the end-of-stream marker was reached"),
     "Compressed file ended before the end-of-stream marker was reached"),
    (EOFError(), "EOFError")])       # an error without words is named by its type
def test_an_archive_cut_inside_a_block_header(error: BaseException, reason: str) -> None:
    """The block before the cut is read whole; the three bytes of the next header are a
    truncated error at that header's offset, saying where the stream ended and why."""
    from pipelines.formats.binpack_file import chunk_blocks

    [(first, after), (cut, end)] = list(chunk_blocks(CutAfter(BLOCK + b"BIN", error)))
    assert (first.records, first.errors, after) == (3, [], len(BLOCK))
    assert (cut.records, cut.errors, end) == (0, [{
        "kind": "truncated", "line": None, "byte_offset": len(BLOCK),
        "message": f"stream ends at byte {len(BLOCK) + 3}, inside the header of a block at "
                   f"byte {len(BLOCK)}: {reason}"}], len(BLOCK) + 3)


def test_a_resumed_read_starts_at_the_block_after_the_last_one_stored() -> None:
    from pipelines.formats.binpack_file import chunk_blocks

    [(block, after)] = list(chunk_blocks(io.BytesIO(BLOCK * 2), len(BLOCK)))
    assert (block.records, after) == (3, 2 * len(BLOCK))
    assert block.keys is not None and block.keys[0] == chess.polyglot.zobrist_hash(chess.Board())


def test_a_file_ending_inside_a_header_and_blocks_of_impossible_sizes() -> None:
    """A plain file ending five bytes into a header (``BINP`` and one size byte) is no block:
    a bad_chunk naming those 5 bytes, the read ending after them. A header's size may be
    up to MAX_CHUNK_BYTES (a block of that size cut short is a truncated block), one more is
    no block."""
    from pipelines.formats.binpack_file import MAX_CHUNK_BYTES, chunk_blocks

    [(first, after), (tail, end)] = list(chunk_blocks(io.BytesIO(BLOCK + b"BINP\x01")))
    assert (first.records, after) == (3, len(BLOCK))
    assert (tail.records, end) == (0, len(BLOCK) + 5)
    assert tail.errors == [{"kind": "bad_chunk", "line": None, "byte_offset": len(BLOCK),
                            "message": f"no binpack block at byte {len(BLOCK)} (header "
                                       f"b'BINP\\x01'): the 5 bytes from there on are not read"}]
    largest = b"BINP" + MAX_CHUNK_BYTES.to_bytes(4, "little") + CHAIN
    [(block, end)] = list(chunk_blocks(io.BytesIO(largest)))
    assert (block.records, end) == (3, len(largest))
    assert [e["message"] for e in block.errors] == [
        f"block at byte 0 is cut: {len(CHAIN)} of its {MAX_CHUNK_BYTES} bytes are in the file"]
    too_large = b"BINP" + (MAX_CHUNK_BYTES + 1).to_bytes(4, "little") + CHAIN
    [(block, end)] = list(chunk_blocks(io.BytesIO(too_large)))
    assert [e["kind"] for e in block.errors] == ["bad_chunk"] and end == len(too_large)


def test_a_block_cut_by_a_broken_archive_says_why() -> None:
    """A block whose archive breaks in its middle: the chain's entries before the break,
    and a truncated error saying how many of its bytes came and the archive's reason."""
    from pipelines.formats.binpack_file import chunk_blocks

    [(block, end)] = list(chunk_blocks(CutAfter(BLOCK[:-3], EOFError("corrupt"))))
    assert end == len(BLOCK) - 3
    assert [(e["kind"], e["byte_offset"], e["message"]) for e in block.errors][-1] == (
        "truncated", 0, f"block at byte 0 is cut: {len(CHAIN) - 3} of its {len(CHAIN)} bytes "
                        "are in the file (corrupt)")
