"""Parquet files of labelled positions (``chesslab export --format parquet`` writes them): every
field of every label against values worked out by hand from the format's description in
pipelines/formats/parquet.py (scores and results the side to move's; optional columns; rows
numbered from 1), the refusals with their rows, and a read that starts part way through."""
from __future__ import annotations

from pathlib import Path

import chess
import chess.polyglot
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flows.ingest import INGEST, IngestJob
from flows.step import run_step
from pipelines.formats import parquet
from pipelines.ingest import IngestConfig
from pipelines.ingest.config import IngestError
from warehouse import Lake, connect

BLACK_CASTLES = "r3k2r/8/8/8/8/8/8/R3K2R b KQkq -"
WHITE_MATES = "6k1/5ppp/8/8/8/8/8/R5K1 w - -"
BARE_KINGS = "8/8/8/8/8/8/8/K6k w - -"
AFTER_E4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -"
EN_PASSANT = "4k3/8/8/3pP3/8/8/8/4K3 w - d6"

LABELS = pa.table({
    "fen": [BLACK_CASTLES, WHITE_MATES, BARE_KINGS, AFTER_E4, EN_PASSANT],
    "score_cp": pa.array([45, None, None, None, 250], pa.int32()),
    "score_mate": pa.array([None, 1, None, -2, None], pa.int32()),
    "result": pa.array([1.0, 1.0, 0.5, 0.0, 1.0], pa.float32()),
    "best_move": ["e8g8", "a1a8", None, "g8f6", "e5d6"],
    "depth": pa.array([12, None, 3, 9, 1001], pa.int32()),
    "engine_id": ["sf16", None, "sf16", "sf16", "sf16"],
})


def write(path: Path, table: pa.Table) -> Path:
    pq.write_table(table, path)
    return path


def key(fen: str) -> int:
    return chess.polyglot.zobrist_hash(chess.Board(fen))


def test_every_field_of_a_parquet_label_by_hand(tmp_path: Path) -> None:
    """Scores and results are the side to move's: Black's +45 is White's -45, Black mated in
    2 (mate -2) is White's mate +2 and a result of 0 for Black; a row without a depth or
    an engine takes ``--depth`` and the format's engine id; a row with neither score and a
    depth past 1000 are errors naming their rows, the other rows stored."""
    path = write(tmp_path / "labels.parquet", LABELS)
    lake = Lake(tmp_path / "home")
    [summary] = run_step(INGEST, IngestJob((path,), IngestConfig(workers=1, depth=7)), lake)
    con = connect(lake)
    rows = con.execute("select position_key, engine_id, depth, score_cp, score_mate, white_cp, "
                       "white_mate, best_move, result from labels").fetchall()
    assert sorted(rows, key=str) == sorted([
        (key(BLACK_CASTLES), "sf16", 12, 45, None, -45, None, "e8g8", 1.0),
        (key(WHITE_MATES), "parquet", 7, None, 1, None, 1, "a1a8", 1.0),
        (key(AFTER_E4), "sf16", 9, None, -2, None, 2, "g8f6", 0.0),
    ], key=str)
    errors = con.execute("select line, kind, message from ingest_errors order by line").fetchall()
    assert errors == [(3, "bad_score", "no score_cp or score_mate"),
                      (5, "bad_depth", "depth 1001 is not a depth from 0 to 1000")]
    assert (summary.records, summary.labels, summary.errors) == (5, 3, 2)
    fens = dict(con.execute("select position_key, fen from positions").fetchall())
    assert fens == {key(fen): chess.Board(fen).epd()
                    for fen in (BLACK_CASTLES, WHITE_MATES, BARE_KINGS, AFTER_E4, EN_PASSANT)}


def test_a_file_of_fens_and_scores_only(tmp_path: Path) -> None:
    """Only the two columns an import needs: every optional field empty, the depth
    ``--depth``'s, the engine the format's."""
    path = write(tmp_path / "bare.parquet", LABELS.select(["fen", "score_cp"]).slice(0, 1))
    lake = Lake(tmp_path / "home")
    run_step(INGEST, IngestJob((path,), IngestConfig(workers=1, depth=4)), lake)
    rows = connect(lake).execute("select engine_id, depth, score_cp, score_mate, white_cp, "
                                 "white_mate, best_move, result from labels").fetchall()
    assert rows == [("parquet", 4, 45, None, -45, None, None, None)]


@pytest.mark.parametrize("missing", ["fen", "score_cp"])
def test_a_file_without_a_needed_column_is_refused_by_name(tmp_path: Path,
                                                           missing: str) -> None:
    path = write(tmp_path / "short.parquet",
                 LABELS.drop_columns([missing, "engine_id", "result", "best_move"]))
    others = sorted({"fen", "score_cp", "score_mate", "depth"} - {missing})
    message = (f"{str(path)!r}: no {missing!r} column (columns: {', '.join(others)})")
    with pytest.raises(parquet.ParquetShapeError) as raised:
        next(parquet.parquet_blocks(path, 0))
    assert str(raised.value) == message
    with pytest.raises(IngestError) as raised_by_ingest:
        run_step(INGEST, IngestJob((path,), IngestConfig(workers=1)), Lake(tmp_path / "home"))
    assert str(raised_by_ingest.value) == message


@pytest.mark.parametrize("start", [0, 1, 2, 3, 4, 5])
def test_a_read_from_a_row_on_gives_the_rows_after_it(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path, start: int) -> None:
    """Batches of two rows: a read from row ``start`` (a resumed import) gives exactly the
    rows after it, numbered as in the file, with the rows read so far after each batch."""
    monkeypatch.setattr(parquet, "BATCH_ROWS", 2)
    path = write(tmp_path / "labels.parquet", LABELS)
    fens, lines, counts = [], [], []
    for block, rows in parquet.parquet_blocks(path, start):
        assert block.fens is not None and block.lines is not None
        fens += block.fens.to_pylist()
        lines += block.lines.to_pylist()
        counts.append(rows)
        assert block.records == len(block.fens)
    assert fens == LABELS["fen"].to_pylist()[start:]
    assert lines == list(range(start + 1, 6))
    assert counts == [rows for rows in (2, 4, 5) if rows > start]


def test_a_label_of_a_depth_out_of_range_that_a_reader_let_through_is_an_error() -> None:
    """Every reader checks its depths; :func:`resolve` checks them again, so a reader that
    does not (a new one) cannot store a depth outside 0 to 1000: the label is an error at
    its record's line, the others kept (one without a depth taking ``--depth``'s)."""
    from pipelines.formats.records import RecordBlock, label_table, resolve

    block = RecordBlock(records=3, fens=pa.array([AFTER_E4, WHITE_MATES, BARE_KINGS]),
                        lines=pa.array([3, 4, 5], pa.int64()),
                        labels=label_table(record=[0, 1, 2], depth=[5, 1001, None],
                                           cp=[10, 20, 30]))
    rows = resolve(block, "x", 7)
    assert rows.errors == [{"kind": "bad_depth", "line": 4, "byte_offset": None,
                            "message": "depth 1001 is not a depth from 0 to 1000"}]
    assert sorted(zip(rows.labels["depth"].to_pylist(), rows.labels["white_cp"].to_pylist(),
                      strict=True)) == [(5, -10), (7, 30)]      # no depth: --depth's
