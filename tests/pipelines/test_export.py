"""`chesslab export`: an nnue_examples selection or a model version's training snapshot,
written as text, binpack, EPD and Parquet; each read back into a fresh home gives the same
positions, scores, results (and best moves where the format keeps them)."""
from __future__ import annotations

import io
import logging
import random
import re
import time
from pathlib import Path

import chess
import chess.polyglot
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flows.cli import main as cli_main
from flows.ingest import INGEST, IngestJob
from flows.step import run_step
from pipelines import progress
from pipelines.export import ExportConfig, ExportError, export_dataset
from pipelines.export.run import BinpackFileWriter, ExportSummary, TextWriter, write_batch
from pipelines.ingest import IngestConfig
from pipelines.kinds.nnue.config import NnueConfig
from pipelines.train import preset, train
from tests.pipelines.binpack_by_hand import BY_HAND
from tests.pipelines.test_registry import register
from warehouse import Lake, connect

RESULTS = {1.0: "1.0", 0.5: "0.5", 0.0: "0.0"}


def random_examples(count: int, seed: int) -> list[tuple[str, int, float, str]]:
    """(FEN, White's score, White's result, the move played) of random games' positions."""
    rng = random.Random(seed)
    rows: list[tuple[str, int, float, str]] = []
    while len(rows) < count:
        board, result = chess.Board(), rng.choice([1.0, 0.5, 0.0])
        for _ in range(rng.randrange(10, 80)):
            moves = list(board.legal_moves)
            if not moves:
                break
            move = rng.choice(moves)
            rows.append((board.fen(), rng.randrange(-800, 800), result, move.uci()))
            board.push(move)
    return rows[:count]


@pytest.fixture
def labelled(tmp_path: Path) -> Lake:
    """A home with 400 labelled positions of random games, imported from EPD: ce (the score),
    bm (the best move), acd 7 (the depth) and c9 (the game result), under engine sf."""
    rows = random_examples(400, 3)
    epd = tmp_path / "labels.epd"
    with open(epd, "w") as out:
        for fen, score, result, move in rows:
            board = chess.Board(fen)
            own = score if board.turn == chess.WHITE else -score
            white = {1.0: "1-0", 0.0: "0-1"}.get(result, "1/2-1/2")
            out.write(f"{board.epd()} ce {own}; bm {board.san(chess.Move.from_uci(move))}; "
                      f"acd 7; c9 \"{white}\";\n")
    lake = Lake(tmp_path / "home")
    run_step(INGEST, IngestJob((epd,), IngestConfig(workers=1, engine_id="sf")), lake)
    return lake


def examples(lake: Lake) -> dict[str, tuple[int, float | None, str | None]]:
    rows = connect(lake).execute(
        "select fen, score_cp, result, best_move from nnue_examples").fetchall()
    return {fen: (score, result, best) for fen, score, result, best in rows}


@pytest.mark.parametrize("fmt", ["text", "binpack", "epd", "parquet"])
def test_export_then_import_gives_the_same_examples(labelled: Lake, tmp_path: Path,
                                                    fmt: str) -> None:
    """Round trip: export the sf/7 examples, import the file into a fresh home (text and
    binpack under --engine-id sf --depth 7): the same FENs, scores and results; the best moves
    too, except in text, which has none."""
    before = examples(labelled)
    assert len(before) > 300 and all(result is not None for _, result, _ in before.values())
    out = tmp_path / f"export.{fmt}"
    summary = export_dataset(labelled, ExportConfig(format=fmt, out=str(out), engine_id="sf",
                                                    depth=7))
    assert (summary.rows, summary.written, summary.refused, summary.no_result) == \
        (len(before), len(before), 0, 0)
    fresh = Lake(tmp_path / "fresh")
    [imported] = run_step(INGEST, IngestJob((out,), IngestConfig(workers=1, engine_id="sf", depth=7,
                                                         format=fmt)), fresh)
    assert (imported.records, imported.labels, imported.errors) == (len(before), len(before), 0)
    after = examples(fresh)
    if fmt == "text":
        before = {fen: (score, result, None) for fen, (score, result, _) in before.items()}
    assert after == before
    depths = connect(fresh).execute("select distinct engine_id, depth from labels").fetchall()
    assert depths == [("sf", 7)]


def test_positions_without_a_result_are_skipped_or_drawn_and_counted(tmp_path: Path) -> None:
    """Lichess evaluations carry no game result: text export skips them (counted) unless
    --missing-result draw writes them as draws; EPD and Parquet need none."""
    lake = Lake(tmp_path / "home")
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "formats" / "lichess_eval.jsonl"
    run_step(INGEST, IngestJob((fixture,), IngestConfig(workers=1)), lake)
    skipped = export_dataset(lake, ExportConfig(format="text", out=str(tmp_path / "a.txt"),
                                                engine_id="lichess-eval", batch_rows=1))
    assert (skipped.rows, skipped.written, skipped.no_result) == (5, 0, 5)
    drawn = export_dataset(lake, ExportConfig(format="text", out=str(tmp_path / "b.txt"),
                                              engine_id="lichess-eval", missing_result="draw"))
    lines = (tmp_path / "b.txt").read_text().splitlines()
    assert drawn.written == 5 and all(line.endswith("| 0.5") for line in lines)
    epd = export_dataset(lake, ExportConfig(format="epd", out=str(tmp_path / "c.epd"),
                                            engine_id="lichess-eval", depth=36))
    assert epd.written == 1
    assert (tmp_path / "c.epd").read_text() == (
        'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - ce -32; bm c5; acd 36; '
        'c0 "lichess-eval";\n')


def test_where_narrows_the_selection_and_bad_sql_is_refused(labelled: Lake,
                                                            tmp_path: Path) -> None:
    """--where is one predicate over the view's columns: rows with Black to move only; a
    second statement or an unknown column is refused before anything is written."""
    out = tmp_path / "black.txt"
    summary = export_dataset(labelled, ExportConfig(format="text", out=str(out),
                                                    where="side_to_move = 'b'"))
    lines = out.read_text().splitlines()
    assert summary.written == len(lines) > 0
    assert all(line.split()[1] == "b" for line in lines)
    for bad in ["1=1; drop table labels", "nonsense_column > 3"]:
        with pytest.raises(ExportError, match="bad --where"):
            ExportConfig(format="text", out=str(tmp_path / "x.txt"), where=bad)
    assert not (tmp_path / "x.txt").exists()


def test_a_model_versions_snapshot_is_exported_whole(labelled: Lake, tmp_path: Path) -> None:
    """`chesslab export nnue@1`: the rows of the snapshot the model was trained on (both
    splits), as model_datasets counts them; other options are refused for a model version."""
    model = train(labelled, "nnue", preset(NnueConfig, "tiny", engine_id=("sf",), depth=7,
                                            epochs=1))
    snapshot = pq.read_table(model.artifact_path.parent / "dataset.parquet")
    out = tmp_path / "model.parquet"
    summary = export_dataset(labelled, ExportConfig(dataset="nnue@latest", format="parquet",
                                                    out=str(out)))
    exported = pq.read_table(out)
    assert summary.written == snapshot.num_rows == exported.num_rows
    assert sorted(zip(exported["fen"].to_pylist(), exported["score_cp"].to_pylist(),
                      strict=True)) == sorted(zip(snapshot["fen"].to_pylist(),
                                                  snapshot["score_cp"].to_pylist(), strict=True))
    assert set(exported["engine_id"].to_pylist()) == {"sf"}
    assert set(exported["depth"].to_pylist()) == {7}
    with pytest.raises(ExportError, match="exported whole"):
        ExportConfig(dataset="nnue@1", format="text", out=str(out), depth=7)


def test_cli_export_prints_what_it_wrote(labelled: Lake, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """`chesslab export nnue_examples --format binpack --out F`: one summary line; a missing
    --out is a one-line error."""
    out = tmp_path / "data.binpack"
    assert cli_main(["--home", str(labelled.home), "export", "nnue_examples", "--format",
                     "binpack", "--out", str(out), "--no-prefect"]) == 0
    assert "positions of nnue_examples as binpack" in capsys.readouterr().out
    assert out.read_bytes()[:4] == b"BINP"
    assert cli_main(["--home", str(labelled.home), "export", "nnue_examples",
                     "--no-prefect"]) == 2
    assert "--out" in capsys.readouterr().err


# --- issue 48 §3: export output against bytes worked out by hand from the formats' specs -----

# Chain A's positions of tests/pipelines/binpack_by_hand.py as nnue_examples rows: FEN, the
# side to move's centipawns and result, the best move.
BY_HAND_ROWS = [
    ("4k2r/1P6/8/8/3p4/8/4P3/4K3 b k -", -150, 0.0, "e8g8"),
    ("5rk1/1P6/8/8/3p4/8/4P3/4K3 w - -", 100, 1.0, "e2e4"),
    ("5rk1/1P6/8/8/3pP3/8/8/4K3 b - e3", -120, 0.0, "d4e3"),
    ("5rk1/1P6/8/8/8/4p3/8/4K3 w - -", 250, 1.0, "b7b8q"),
]
# bullet's text format (bulletformat's README): FEN | score | result, both White's: Black's
# -150 is 150 and Black's loss 1.0; the FEN gets the counters "0 1".
BY_HAND_TEXT = [
    "4k2r/1P6/8/8/3p4/8/4P3/4K3 b k - 0 1 | 150 | 1.0",
    "5rk1/1P6/8/8/3p4/8/4P3/4K3 w - - 0 1 | 100 | 1.0",
    "5rk1/1P6/8/8/3pP3/8/8/4K3 b - e3 0 1 | 120 | 1.0",
    "5rk1/1P6/8/8/8/4p3/8/4K3 w - - 0 1 | 250 | 1.0",
]
# Binpack (Stockfish docs/binpack.md; the arithmetic as in binpack_by_hand.py). The export
# writes 208 * cp / 100 (-150 -> -312, 100 -> 208, -120 -> -249.6 -> -250, 250 -> 520), ply 0
# for White to move and 1 for Black, rule50 0 (the FEN has no counters).
#   row 1: chain A's stem with ply 1: 1 | signedToUnsigned(-1) << 14 = 0x4001; no movetext
#     (row 2 is not its continuation: its ply is 0, not 2)
X_BLACK_STEM = bytes.fromhex("9002000008001010" "0A01EF" + "00" * 13 + "BCFC" "026F" "4001"
                             "0000" "0000")
#   row 2: 5rk1/1P6/8/8/3p4/8/4P3/4K3 w: occupied e1 e2 d4 b7 f8(61) g8(62):
#     0x10 + 0x1000 + 0x800_0000 + 0x2_0000_0000_0000 + 0x2000_0000_0000_0000
#     + 0x4000_0000_0000_0000 = 0x6002_0000_0800_1010; nibbles K 10, P 0, p 1, P 0, r 7,
#     k (White to move) 11 -> 0x0A 0x01 0xB7; e2e4 = 12 << 8 | 28 << 2 = 0x0C70;
#     208 -> 416 = 0x01A0; ply 0, result 1 -> 2 << 14 = 0x8000; rule50 0
#   row 3 follows row 2 (ply 0 -> 1, result 1 -> -1, its position after e2e4): one movetext
#     ply, d4 (piece 0 of 3: 00) takes e3 e.p. (move 1 of {d3, e3}: 1), score -250 after
#     208: -250 - (-208) = -42 -> 83: 1 0011, 0 0101 -> 0011001100101 -> 0x33 0x28
X_CHAIN = bytes.fromhex("6002000008001010" "0A01B7" + "00" * 13 + "0C70" "01A0" "8000" "0000"
                        "0001" "3328")
#   row 4: 5rk1/1P6/8/8/8/4p3/8/4K3 w: occupied e1 e3(20) b7 f8 g8: 0x10 + 0x10_0000
#     + 0x2_0000_0000_0000 + 0x6000_0000_0000_0000 = 0x6002_0000_0010_0010; nibbles K 10,
#     p 1, P 0, r 7, k 11 -> 0x1A 0x70 0x0B; b7b8=Q = 1 << 14 | 49 << 8 | 57 << 2 | 3 = 0x71E7;
#     520 -> 1040 = 0x0410; 0x8000; 0
X_WHITE_STEM = bytes.fromhex("6002000000100010" "1A700B" + "00" * 13 + "71E7" "0410" "8000"
                             "0000" "0000")


def by_hand_table() -> pa.Table:
    fen, cp, result, move = zip(*BY_HAND_ROWS, strict=True)
    return pa.table({"fen": list(fen), "score_cp": pa.array(cp, pa.int32()),
                     "result": pa.array(result, pa.float32()), "best_move": list(move)})


def test_text_export_writes_whites_scores_and_results_as_bullet_reads_them() -> None:
    """Issue 48 §3: each line byte for byte, Black's rows turned to White's view."""
    out = io.BytesIO()
    assert TextWriter(out).write(by_hand_table()) == 0
    assert out.getvalue() == "".join(line + "\n" for line in BY_HAND_TEXT).encode()


def test_binpack_export_writes_the_hand_computed_bytes() -> None:
    """Issue 48 §3: side-to-move scores and results, ply 0/1 by the side to move, a row that
    follows the previous one's move joined to its chain."""
    out = io.BytesIO()
    writer = BinpackFileWriter(out)
    assert writer.write(by_hand_table()) == 0
    writer.close()
    data = X_BLACK_STEM + X_CHAIN + X_WHITE_STEM
    assert len(data) == 104
    assert out.getvalue() == b"BINP" + bytes.fromhex("68000000") + data


def test_the_hand_built_binpack_exported_again_is_the_hand_computed_file(tmp_path: Path) -> None:
    """Issue 48 §3, through the warehouse: the hand-built binpack imported, then exported as
    text (its five centipawn positions; the mates are not nnue_examples) and as binpack
    (White to move only: two stems), in position-key order (python-chess's Polyglot keys)."""
    source = tmp_path / "by_hand.binpack"
    source.write_bytes(BY_HAND)
    lake = Lake(tmp_path / "home")
    run_step(INGEST, IngestJob((source,), IngestConfig(workers=1, depth=5)), lake)

    def key(line: str) -> int:
        return chess.polyglot.zobrist_hash(chess.Board(line.split(" | ")[0]))

    text = [*BY_HAND_TEXT, "r3k3/8/8/8/8/8/1p6/7K b q - 0 1 | 10 | 0.5"]
    export_dataset(lake, ExportConfig(format="text", out=str(tmp_path / "a.txt")))
    assert (tmp_path / "a.txt").read_text() == "".join(f"{line}\n" for line in sorted(text, key=key))
    export_dataset(lake, ExportConfig(format="binpack", out=str(tmp_path / "w.binpack"),
                                      where="side_to_move = 'w'"))
    white = {key(BY_HAND_TEXT[1]): X_CHAIN[:32] + bytes(2), key(BY_HAND_TEXT[3]): X_WHITE_STEM}
    data = b"".join(white[k] for k in sorted(white))
    assert (tmp_path / "w.binpack").read_bytes() == b"BINP" + bytes.fromhex("44000000") + data


# --- issue 48: a model version's data set without training a net (mutation testing left
# model_snapshot unchecked: its one test above trains first, minutes a mutant) ----------------

def dataset_row(lake: Lake, model_id: str, train_rows: int, validation_rows: int) -> None:
    lake.write("model_datasets", [{
        "model_id": model_id, "view": "nnue_examples", "query": "nnue_dataset",
        "parameters": "{}", "label_engine_id": "sf", "label_depths": [9], "table_versions": "{}",
        "train_rows": train_rows, "validation_rows": validation_rows,
        "position_keys_hash": "00", "recorded_at": None}])


def snapshot_home(tmp_path: Path) -> tuple[Lake, pa.Table]:
    """A home with volatility@1 and nnue@1..4: nnue@1 has no dataset.parquet, nnue@2 no
    model_datasets row, nnue@3 a row that counts 4 of the file's 5 rows, nnue@4 a good one
    (engine sf, depth 9); and the 5-row snapshot they share."""
    lake = Lake(tmp_path / "home")
    rows = random_examples(5, 11)
    snapshot = pa.table({"fen": [" ".join(r[0].split()[:4]) for r in rows],
                         "score_cp": [r[1] for r in rows], "result": [r[2] for r in rows],
                         "best_move": [r[3] for r in rows]})
    register(lake, 1, "volatility")
    for version in (1, 2, 3, 4):
        register(lake, version)
    for version in (2, 3, 4):      # nnue@1 has no file; nnue@2 has no model_datasets row
        pq.write_table(snapshot, lake.home / "models" / "nnue" / str(version) / "dataset.parquet")
    dataset_row(lake, "nnue@3", 3, 1)     # 4 rows recorded, 5 in the file
    dataset_row(lake, "nnue@4", 4, 1)
    return lake, snapshot


def test_a_model_version_is_exported_from_its_file_checked_against_model_datasets(
        tmp_path: Path) -> None:
    """A model version's data set is its run's dataset.parquet, as many rows as
    model_datasets recorded (train + validation), with that row's engine and first depth; a
    model of another kind, a missing file or row, and a row count that differs are refused,
    each naming the model."""
    lake, snapshot = snapshot_home(tmp_path)
    out = tmp_path / "out.parquet"

    def export(name: str) -> ExportSummary:
        return export_dataset(lake, ExportConfig(dataset=name, format="parquet", out=str(out),
                                                 batch_rows=2))
    for name, message in [
            ("volatility@1", "volatility@1 is a volatility model; only NNUE data sets"),
            ("nnue@1", "nnue@1 has no training snapshot at .*nnue/1/dataset.parquet"),
            ("nnue@2", "nnue@2 has no training snapshot .*no model_datasets row"),
            ("nnue@3", "holds 5 rows, but model_datasets recorded 4 for nnue@3")]:
        with pytest.raises(ExportError, match=message):
            export(name)
        assert not out.exists()
    summary = export("nnue@4")
    assert (summary.rows, summary.written) == (5, 5)
    exported = pq.read_table(out)
    assert exported.select(snapshot.column_names).equals(snapshot)
    assert set(exported["engine_id"].to_pylist()) == {"sf"}
    assert set(exported["depth"].to_pylist()) == {9}


# --- issue 48: the export's mutation survivors (docs/mutation.md) ------------------------------

def test_each_bad_export_option_is_refused_in_one_line_naming_it(tmp_path: Path) -> None:
    """An unknown format, no --out, a batch size under one, a data set that is neither the
    view nor KIND@VERSION, and any of --engine-id, --depth, --where given with a model version
    (each alone) are refused with the value named; one row a batch is allowed."""
    out = str(tmp_path / "x.txt")
    for options, message in [
            ({"format": "csv", "out": out},
             "export: format must be one of text, binpack, epd, parquet, got 'csv'"),
            ({}, "export: give --out PATH, the file to write"),
            ({"out": out, "batch_rows": 0}, "export: batch_rows must be positive, got 0"),
            ({"out": out, "dataset": "games"}, "export: dataset must be nnue_examples or a "
                                               "model version (KIND@VERSION), got 'games'"),
            *[({"out": out, "dataset": "nnue@1", name: value}, "export: --engine-id, --depth "
               "and --where select nnue_examples rows; nnue@1 is exported whole")
              for name, value in (("engine_id", "sf"), ("depth", 7),
                                  ("where", "score_cp > 0"))]]:
        with pytest.raises(ExportError) as refused:
            ExportConfig(**options)  # type: ignore[arg-type]
        assert str(refused.value) == message
    assert ExportConfig(out=out, batch_rows=1).batch_rows == 1
    assert not (tmp_path / "x.txt").exists()


def test_an_export_reports_its_progress_and_what_it_wrote(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model version's snapshot (5 rows, 2 a batch) into a folder that does not exist yet:
    one progress line a batch (a line at every update here) against the 5 rows the snapshot
    holds; the summary names the file, its size and a time within the call's; the Parquet is
    zstd-compressed, with engine_id a string and depth an int32 as in the view."""
    lake, _ = snapshot_home(tmp_path)
    monkeypatch.setattr(progress, "EVERY_S", 0.0)
    out = tmp_path / "new" / "folder" / "out.parquet"
    lines: list[str] = []
    began = time.monotonic()
    summary = export_dataset(lake, ExportConfig(dataset="nnue@4", format="parquet",
                                                out=str(out), batch_rows=2), lines.append)
    took = time.monotonic() - began
    assert len(lines) == 3
    for line, done, share in zip(lines, (2, 4, 5), (40, 80, 100), strict=True):
        assert re.fullmatch(rf"export: {done}/5 rows \({share}%\), .*; {done} written to "
                            r"out\.parquet", line), line
    assert (summary.out, summary.bytes) == (str(out), out.stat().st_size)
    assert 0 <= summary.seconds <= took
    handle = pq.ParquetFile(out)
    assert handle.schema_arrow.field("engine_id").type == pa.string()
    assert handle.schema_arrow.field("depth").type == pa.int32()
    assert {handle.metadata.row_group(0).column(i).compression
            for i in range(handle.metadata.num_columns)} == {"ZSTD"}


def test_refused_rows_are_counted_over_batches_and_the_first_ten_logged(
        caplog: pytest.LogCaptureFixture) -> None:
    """Four batches of five rows, four of them with a best move that is not legal there
    (nothing stands on h1): 16 refused, 4 written, and the first ten refusals logged, each
    naming the move and the position."""
    legal = BY_HAND_ROWS[1]
    rows = [legal] + [(fen, cp, result, "h1h8") for fen, cp, result, _ in BY_HAND_ROWS]
    fen, cp, result, move = zip(*rows, strict=True)
    table = pa.table({"fen": list(fen), "score_cp": pa.array(cp, pa.int32()),
                      "result": pa.array(result, pa.float32()), "best_move": list(move)})
    writer = BinpackFileWriter(io.BytesIO())
    summary = ExportSummary("nnue_examples", "binpack", "x")
    config = ExportConfig(format="binpack", out="x")
    with caplog.at_level(logging.WARNING, logger="pipelines.export.run"):
        for _ in range(4):
            write_batch(writer, table, config, summary)
    assert (summary.rows, summary.refused, summary.written, summary.no_result) == (20, 16, 4, 0)
    shown = [fen for fen, *_ in BY_HAND_ROWS] * 3
    assert [record.getMessage() for record in caplog.records] == [
        f"binpack export: row left out: move 'h1h8' is not legal in {fen!r}"
        for fen in shown[:10]]


def test_a_position_without_a_result_is_written_to_binpack_as_a_draw_when_asked() -> None:
    """--missing-result draw: the by-hand White stem (b7b8=Q, 250 cp) with no result is the
    hand-computed entry with result 0 (ply 0 | 0 << 14 = 0x0000) in place of 0x8000; with
    skip it is left out; counted either way. A writer is handed 0.5 for a missing result (the
    binpack and text encoders would also write 1.5 as a draw)."""
    fen, cp, _, move = BY_HAND_ROWS[3]
    table = pa.table({"fen": [fen], "score_cp": pa.array([cp], pa.int32()),
                      "result": pa.array([None], pa.float32()), "best_move": [move]})
    for missing, entries in (("draw", X_WHITE_STEM[:28] + bytes(2) + X_WHITE_STEM[30:]),
                             ("skip", b"")):
        out = io.BytesIO()
        writer = BinpackFileWriter(out)
        summary = ExportSummary("nnue_examples", "binpack", "x")
        write_batch(writer, table, ExportConfig(format="binpack", out="x",
                                                missing_result=missing), summary)  # type: ignore[arg-type]
        writer.close()
        assert (summary.no_result, summary.written) == (1, len(entries) // 34)
        expected = b"BINP" + len(entries).to_bytes(4, "little") + entries if entries else b""
        assert out.getvalue() == expected

    class Recording:     # what write_batch hands a writer
        def write(self, table: pa.Table) -> int:
            self.results = table["result"].to_pylist()
            return 0

    writer = Recording()
    both = pa.table({"result": pa.array([None, 1.0], pa.float32())})
    write_batch(writer, both, ExportConfig(format="text", out="x", missing_result="draw"),
                ExportSummary("nnue_examples", "text", "x"))
    assert writer.results == [0.5, 1.0]
