"""`chesslab export`: an nnue_examples selection or a model version's training snapshot,
written as text, binpack, EPD and Parquet; each read back into a fresh home gives the same
positions, scores, results (and best moves where the format keeps them)."""
from __future__ import annotations

import random
from pathlib import Path

import chess
import pyarrow.parquet as pq
import pytest

from flows.cli import main as cli_main
from flows.ingest import INGEST, IngestJob
from flows.step import run_step
from pipelines.export import ExportConfig, ExportError, export_dataset
from pipelines.ingest import IngestConfig
from pipelines.kinds.nnue.config import NnueConfig
from pipelines.train import preset, train
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
    assert (summary.rows, summary.written, summary.refused) == (len(before),) * 2 + (0,)
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
                                                engine_id="lichess-eval"))
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
