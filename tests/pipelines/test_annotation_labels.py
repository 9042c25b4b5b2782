"""Games' ``[%eval]`` annotations as NNUE labels: the nnue_examples rows they give (the
position each annotated move reached, its score from the side to move's view, the move played
next), the label-source order that keeps engine labels the default, and
scripts/engine_games.py's games (real Stockfish) through the ordinary ingest.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import chess
import chess.engine
import pyarrow.parquet as pq
import pytest

from flows.ingest import INGEST, IngestJob
from flows.label import LABEL
from flows.step import run_step
from pipelines.ingest import IngestConfig
from pipelines.kinds.nnue.config import NnueConfig
from pipelines.kinds.nnue.module import choose_label_source, snapshot_parameters
from pipelines.label import LabelConfig
from pipelines.train.config import preset
from pipelines.train.dataset import DatasetError, write_snapshot
from warehouse import Lake, connect
from warehouse.catalog import named_query, query

ROOT = Path(__file__).resolve().parent.parent.parent
ANNOTATED = (ROOT / "tests" / "fixtures" / "annotated" / "annotated.pgn").read_text()


def examples(lake: Lake, engine_like: str) -> dict[str, tuple[int, int, str, float]]:
    """FEN -> (depth, score, best move, result) of the view's rows of matching engines."""
    rows = connect(lake).execute(
        "select fen, depth, score_cp, best_move, result from nnue_examples "
        "where engine_id like $e", {"e": engine_like}).fetchall()
    return {fen: (depth, score, best, float(result)) for fen, depth, score, best, result in rows}


def fen_after(*sans: str) -> str:
    """The warehouse's FEN (no move counters) after ``sans`` from the start."""
    board = chess.Board()
    for san in sans:
        board.push_san(san)
    return board.epd()


def test_annotations_label_the_positions_their_moves_reached(tmp_path: Path) -> None:
    """Each [%eval] after a move scores the position it reached, turned to the side to move's
    view; the move played next is the best move; the last move's annotation (no position
    after it in moves) and mate annotations give no row; a game without an Annotator tag is
    'pgn:[%eval]' at depth 0."""
    pgn = tmp_path / "annotated.pgn"
    pgn.write_text(ANNOTATED)
    lake = Lake(tmp_path / "home")
    run_step(INGEST, IngestJob((pgn,), IngestConfig.tiny()), lake)
    assert examples(lake, "pgn:Stockfish 15.1 depth 8") == {
        fen_after("e4"): (8, -30, "e7e5", 0.0),
        fen_after("e4", "e5"): (8, 25, "g1f3", 1.0),
        fen_after("e4", "e5", "Nf3"): (8, -35, "b8c6", 0.0),
    }
    assert examples(lake, "pgn:[%eval]") == {
        fen_after("d4"): (0, -20, "d7d5", 1.0),
        fen_after("d4", "d5"): (0, 21, "c2c4", 0.0),
    }
    con = connect(lake)
    sources = query(con, named_query("nnue_label_sources")).to_pylist()
    assert choose_label_source(sources, preset(NnueConfig, "tiny")) == \
        (("pgn:Stockfish 15.1 depth 8",), 8)   # the only annotations with more rows


def test_engine_labels_stay_the_default_source(tmp_path: Path, stockfish_path: str) -> None:
    """With Stockfish labels on 2 positions and annotations on 5, the labels table's engine
    is still the default source: annotated games never change which labels train a net
    unless they are asked for (``--engine-id pgn:...``)."""
    pgn = tmp_path / "annotated.pgn"
    pgn.write_text(ANNOTATED)
    lake = Lake(tmp_path / "home")
    run_step(INGEST, IngestJob((pgn,), IngestConfig.tiny()), lake)
    summary = run_step(LABEL, LabelConfig.tiny(depths=(2,), limit=2), lake)
    assert summary.labels == 2
    sources = query(connect(lake), named_query("nnue_label_sources")).to_pylist()
    assert [(s["engine_id"].startswith("pgn:"), s["positions"]) for s in sources] == \
        [(False, 2), (True, 3), (True, 2)]
    (engine,), depth = choose_label_source(sources, preset(NnueConfig, "tiny"))
    assert engine.startswith("stockfish") and depth == 2


def test_a_data_set_can_join_label_sources(tmp_path: Path, stockfish_path: str) -> None:
    """``--engine-id A,B``: the snapshot is the union of both engines' rows at the depth,
    a position both labelled once with A's label; every engine must have labels at the
    depth."""
    pgn = tmp_path / "annotated.pgn"
    pgn.write_text(ANNOTATED)
    lake = Lake(tmp_path / "home")
    run_step(INGEST, IngestJob((pgn,), IngestConfig.tiny()), lake)
    run_step(LABEL, LabelConfig.tiny(depths=(8,)), lake)
    con = connect(lake)
    (stockfish,) = {e for e, in con.execute(
        "select distinct engine_id from labels").fetchall()}
    annotated = "pgn:Stockfish 15.1 depth 8"
    sources = query(con, named_query("nnue_label_sources")).to_pylist()
    config = preset(NnueConfig, "tiny", engine_id=(annotated, stockfish))
    engines, depth = choose_label_source(sources, config)
    assert (engines, depth) == ((annotated, stockfish), 8)
    snapshot = tmp_path / "snapshot.parquet"
    write_snapshot(lake, "nnue_snapshot", snapshot_parameters(config, engines, depth),
                   snapshot, lambda batch: batch, 64)
    rows = {r["fen"]: r["score_cp"] for r in pq.read_table(snapshot).to_pylist()}
    labelled = dict(con.execute(
        "select fen, score_cp from nnue_examples where engine_id = $e and depth = 8 "
        "and in_check is not true", {"e": stockfish}).fetchall())
    annotations = examples(lake, annotated)
    assert set(rows) == set(labelled) | set(annotations)
    assert len(rows) > len(annotations)          # the engine labelled more positions
    for fen, score in rows.items():               # the annotation wins where both exist
        assert score == (annotations[fen][1] if fen in annotations else labelled[fen])
    with pytest.raises(DatasetError, match="no nnue_examples rows for engine pgn:none"):
        choose_label_source(sources, preset(NnueConfig, "tiny", engine_id=(stockfish,
                                                                           "pgn:none")))
    with pytest.raises(DatasetError, match=f"engine {stockfish} at depth 7"):
        choose_label_source(sources, preset(NnueConfig, "tiny", engine_id=(stockfish,
                                                                           annotated), depth=7))


def test_engine_games_are_annotated_stockfish_games(tmp_path: Path, stockfish_path: str) -> None:
    """scripts/engine_games.py with real Stockfish: whole games, each engine move's position
    annotated at the depth; ingested, the view holds them under the Annotator's engine id,
    and Stockfish itself agrees with the stored score's sign where it is clear."""
    out = tmp_path / "games"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "engine_games.py"), "--engine", stockfish_path,
         "--depth", "4", "--games", "3", "--workers", "1", "--max-plies", "40",
         "--random-plies", "4", "--seed", "7", "--out", str(out)],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "engine_games: 3 games" in done.stdout
    files = sorted(out.glob("sf-d4-s7-w00.pgn.gz"))
    assert len(files) == 1
    lake = Lake(tmp_path / "home")
    (summary,) = run_step(INGEST, IngestJob(tuple(files), IngestConfig.tiny()), lake)
    assert summary.games == 3 and summary.errors == 0
    con = connect(lake)
    (engine,) = {e for e, in con.execute(
        "select distinct engine_id from nnue_examples").fetchall()}
    assert engine.startswith("pgn:Stockfish") and engine.endswith("depth 4")
    rows = con.execute("select fen, score_cp, best_move from nnue_examples").fetchall()
    annotated = con.execute("select count(*) from moves where eval_cp is not null or "
                            "eval_mate is not null").fetchall()[0][0]
    assert 20 <= len(rows) <= annotated
    with chess.engine.SimpleEngine.popen_uci(stockfish_path) as sf:
        for fen, score, best in rows:
            if abs(score) < 150:
                continue
            board = chess.Board(fen)
            assert chess.Move.from_uci(best) in board.legal_moves
            info = sf.analyse(board, chess.engine.Limit(depth=4))
            assert (info["score"].relative.score(mate_score=100_000) > 0) == (score > 0), fen


def test_bound_labels_are_not_training_targets(tmp_path: Path) -> None:
    """A label whose depth ended on a lowerbound/upperbound line is a limit on the score, not
    the score: nnue_examples leaves it out (as it does mate scores) and keeps the exact ones."""
    lake = Lake(tmp_path / "home")
    fen = fen_after("e4")
    lake.write("positions", [{"position_key": 7, "fen": fen}])
    lake.write("labels", [
        {"position_key": 7, "engine_id": "sf", "depth": 8, "score_cp": -30},
        {"position_key": 7, "engine_id": "sf", "depth": 9, "score_cp": 40, "bound": "lower"},
        {"position_key": 7, "engine_id": "sf", "depth": 10, "score_cp": -90, "bound": "upper"},
        {"position_key": 7, "engine_id": "sf", "depth": 11, "score_mate": 3},
    ])
    rows = connect(lake).execute(
        "select depth, score_cp from nnue_examples where engine_id = 'sf'").fetchall()
    assert rows == [(8, -30)]


def test_a_position_repeated_in_one_game_takes_its_first_annotation(tmp_path: Path) -> None:
    """A position reached several times in one game (knights out and back) gives one row: the
    first time's [%eval] and next move, in ply order, never another repetition's (the
    row_number's tie-break within a game is the ply)."""
    cycle = " ".join(f"{2 * i + 1}. Nf3 {{[%eval 0.{i}0,8]}} Nf6 {{[%eval 0.15,8]}} "
                     f"{2 * i + 2}. Ng1 {{[%eval 0.05,8]}} Ng8 {{[%eval 0.0,8]}}"
                     for i in range(8))
    pgn = tmp_path / "repeats.pgn"
    pgn.write_text('[Event "repeats"]\n[White "a"]\n[Black "b"]\n[Result "1-0"]\n'
                   '[Annotator "Stockfish 15.1 depth 8"]\n\n'
                   f"{cycle} 17. Nf3 {{[%eval 0.90,8]}} Nc6 {{[%eval 0.3,8]}} 18. e4 1-0\n")
    lake = Lake(tmp_path / "home")
    run_step(INGEST, IngestJob((pgn,), IngestConfig.tiny()), lake)
    rows = examples(lake, "pgn:Stockfish 15.1 depth 8")
    assert rows[fen_after("Nf3")] == (8, 0, "g8f6", 0.0)      # ply 1: 0.00, then Nf6
    assert rows[fen_after("Nf3", "Nf6")] == (8, 15, "f3g1", 1.0)     # ply 2: 0.15, then Ng1
