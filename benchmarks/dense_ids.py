#!/usr/bin/env python3
"""Bytes a home's games, moves and positions would take keyed by dense integer ids (issue 51 §1).

A measurement for a design decision, not of chesslab as built: the tables of an ingested
home (``benchmarks/lake_bytes.py``'s corpora) rewritten with pyarrow as they would be stored
if every game and position had a dense integer id numbered in first-seen order (games in
their source order, a position by the first (game, ply) that plays it; a game's last
position, which no move plays from, after all of those), instead of the random 64-bit
Zobrist key and the 32-hex-digit game hash in every per-ply table:

- positions: the FEN and in_check in id order (no key column: the id is the row's place);
- moves: game number, ply, position id (delta-encoded: mostly the previous id plus one),
  uci, san, clock, evals;
- games: its columns with the game number in place of the source and index;
- the key index (Zobrist key -> id, what an import needs to number a position it meets):
  raw (8 + 4 bytes a position), zstd of the sorted keys and of the ids, the sorted keys'
  gaps under zstd, and the Elias-Fano bound for the sorted keys (2 + log2(2^64 / n) bits).

Each column is also written alone, so the figures say where the bytes go. Every figure is
bytes per ply of the corpus and a multiple of its ``.pgn.zst``; zstd at compact's level (6).

Also measured, for a compact position form: the FENs in key order (as compact keeps them
today) as text and packed (the occupied squares as a 64-bit mask, then a 4-bit piece code
per occupied square, a byte of side and castling rights and one of the en-passant file).

    CHESSLAB_HOME=HOME chesslab ingest CORPUS.pgn.zst
    .venv/bin/python benchmarks/dense_ids.py HOME CORPUS.pgn.zst
"""
from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import zstandard

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from warehouse import Lake, connect  # noqa: E402

LEVEL = 6   # warehouse.encoding.COMPACT_LEVEL's, for positions and moves

NUMBERED = """
create temp table numbered_games as
    select row_number() over (order by source_id, game_index) - 1 as game_no, * from games;
create temp table numbered_moves as
    select g.game_no, m.* exclude (game_id) from moves m join numbered_games g using (game_id);
create temp table numbered_positions as
    select row_number() over (order by f.first nulls last, p.position_key) - 1 as position_id,
           p.*
    from positions p
    left join (select position_key, min(game_no * 100000 + ply) as first
               from numbered_moves group by position_key) f using (position_key);
"""
POSITIONS = "select fen, in_check from numbered_positions order by position_id"
MOVES = """
select m.game_no::integer as game_no, m.ply::smallint as ply,
       p.position_id::integer as position_id, m.uci, m.san, m.clock_s::integer as clock_s,
       m.eval_cp::smallint as eval_cp, m.eval_mate::smallint as eval_mate
from numbered_moves m join numbered_positions p using (position_key)
order by game_no, ply
"""
GAMES = "select * exclude (game_no, source_id, game_index) from numbered_games order by game_no"
DELTA = ("game_no", "ply", "position_id")
GAME_DICTIONARY = ("event", "round", "result", "time_control", "termination", "eco", "opening",
                   "variant")   # games' columns of few distinct values
PIECES = {piece: code for code, piece in enumerate("PNBRQKpnbrqk", start=1)}


def packed(fen: str) -> bytes:
    """A FEN's position as the occupied squares' mask, a nibble per piece on them, a byte of
    side to move and castling rights, and a byte of the en-passant file (0: none)."""
    board, side, castling, passant = fen.split(" ")[:4]
    mask, codes, square = 0, [], 0
    for symbol in board.replace("/", ""):
        if symbol.isdigit():
            square += int(symbol)
            continue
        mask |= 1 << square
        codes.append(PIECES[symbol])
        square += 1
    codes.append(0)     # an odd count's last nibble
    nibbles = bytes(codes[i] << 4 | codes[i + 1] for i in range(0, len(codes) - 1, 2))
    flags = (side == "b") | sum(2 << "KQkq".index(c) for c in castling if c != "-")
    file = 0 if passant == "-" else 1 + "abcdefgh".index(passant[0])
    return mask.to_bytes(8, "little") + bytes((flags, file)) + nibbles


def parquet_bytes(rows: pa.Table, **options: object) -> int:
    out = io.BytesIO()
    pq.write_table(rows, out, compression="zstd", compression_level=LEVEL, **options)
    return out.tell()


def table_bytes(name: str, rows: pa.Table, plies: int, **options: object) -> int:
    """The table's bytes written as one file, printed with each column's alone."""
    total = parquet_bytes(rows, **options)
    columns = {c: parquet_bytes(rows.select([c]), **options) for c in rows.column_names}
    print(f"  {name:10} {total / plies:6.2f} B/ply   " + "  ".join(
        f"{c} {size / plies:.2f}" for c, size in columns.items() if size >= plies / 100))
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home", type=Path, help="a home the corpus was ingested into")
    parser.add_argument("corpus", type=Path, help="the .pgn.zst it came from")
    args = parser.parse_args()
    con = connect(Lake(args.home))
    con.execute(NUMBERED)
    [(plies,)] = con.sql("select count(*) from moves").fetchall()
    source = args.corpus.stat().st_size
    print(f"{args.corpus.name}: {source:,} bytes, {plies:,} plies ({source / plies:.2f} B/ply)")
    total = table_bytes("positions", con.sql(POSITIONS).to_arrow_table(), plies,
                        use_dictionary=False)
    moves = con.sql(MOVES).to_arrow_table()
    total += table_bytes("moves", moves, plies, use_dictionary=["uci", "san"],
                         column_encoding={c: "DELTA_BINARY_PACKED" for c in DELTA})
    games = con.sql(GAMES).to_arrow_table()
    total += table_bytes("games", games, plies,
                         use_dictionary=[c for c in GAME_DICTIONARY if c in games.column_names])
    index = con.sql("select position_key, position_id from numbered_positions "
                    "order by position_key").fetchnumpy()
    keys = np.asarray(index["position_key"], dtype=np.uint64)
    ids = np.asarray(index["position_id"], dtype=np.uint32)
    squeeze = zstandard.ZstdCompressor(level=3).compress
    raw = keys.nbytes + ids.nbytes
    gaps = len(squeeze(np.diff(keys, prepend=np.uint64(0)).tobytes()))
    squeezed_ids = len(squeeze(ids.tobytes()))
    elias_fano = len(keys) * (2 + 64 - np.log2(max(len(keys), 1))) / 8
    print(f"  key index  raw {raw / plies:.2f} B/ply; zstd: keys {len(squeeze(keys.tobytes())) / plies:.2f}"
          f", their gaps {gaps / plies:.2f}, ids {squeezed_ids / plies:.2f}; "
          f"Elias-Fano keys {elias_fano / plies:.2f}")
    compact = gaps + squeezed_ids
    fens = con.sql("select fen from positions order by position_key").to_arrow_table().column(0)
    text = parquet_bytes(pa.table({"fen": fens}), use_dictionary=False)
    forms = pa.array([packed(fen) for fen in fens.to_pylist()], pa.binary())
    print(f"  FENs in key order (as compact keeps them): text {text / plies:.2f} B/ply, packed "
          f"{parquet_bytes(pa.table({'fen': forms}), use_dictionary=False) / plies:.2f}")
    for what, size in (("tables", total), ("tables and the raw index", total + raw),
                       ("tables and the index as gaps and ids under zstd", total + compact)):
        print(f"  {what}: {size / plies:.2f} B/ply = {size / source:.2f}x the .pgn.zst")


if __name__ == "__main__":
    main()
