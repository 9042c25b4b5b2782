"""``chesslab datagen`` (issue 47): engine-vs-itself games written as binpack batches without a
PGN round trip, from Stockfish over raw UCI pipes and from chesslab's alpha-beta engine in the
worker's own process, ingested as labels. Each stored label is checked against the games
replayed here and against python-chess: the position, the move played (legal, the search's
best), the search's score and the game's result, all from the side to move's view."""
from __future__ import annotations

import re
from pathlib import Path

import chess
import pytest

from flows.datagen import datagen
from flows.step import LocalRunner
from pipelines.datagen.games import (
    GameSettings,
    Searched,
    UciSearcher,
    binpack_entries,
    play_game,
    to_pgn,
)
from pipelines.datagen.inprocess import InProcessSearcher
from pipelines.datagen.run import DatagenConfig, DatagenError, engine_spec, generate
from pipelines.games.config import GamesOptions
from warehouse import Lake, connect


def labels_of(lake: Lake, engine_id: str) -> dict[str, tuple[int, str, float]]:
    """{FEN without counters: (score, best move, result)} of an engine's labels."""
    rows = connect(lake).execute(
        "select p.fen, l.score_cp, l.best_move, l.result from labels l join positions p "
        "using (position_key) where l.engine_id = ?", [engine_id]).fetchall()
    return {fen: (cp, move, result) for fen, cp, move, result in rows}


def expected_labels(records: list) -> dict[str, tuple[int, str, float]]:  # type: ignore[type-arg]
    """The same, from the games replayed here: the first occurrence of each position."""
    found: dict[str, tuple[int, str, float]] = {}
    for record in records:
        for fen, move, cp, ply, result in binpack_entries(record):
            board = chess.Board(fen)
            assert board.ply() == ply and chess.Move.from_uci(move) in board.legal_moves
            key = " ".join(board.fen().split()[:4])
            found.setdefault(key, (cp, move, (result + 1) / 2))
    return found


@pytest.mark.parametrize("engine", ["stockfish", "alphabeta"])
def test_datagen_writes_binpack_batches_whose_labels_are_the_games(
        home: Path, stockfish_path: str, engine: str) -> None:
    """Two binpack batches (one per two games), ingested as the engine's labels at the
    run's depth (nodes: 0): every label is the position, best move, score and result the
    same games give when replayed here; a rerun plays and stores nothing more."""
    spec, limit = ((stockfish_path, {"depth": 3}) if engine == "stockfish"
                   else ("alphabeta:eval=hce,hash=4", {"nodes": 800}))
    config = DatagenConfig(engine=spec, games=4, batch_games=2, max_plies=80, concurrency=2,
                           runner=GamesOptions(), **limit)  # type: ignore[arg-type]
    lake = Lake(home)
    result = datagen(LocalRunner(show_progress=False), config, lake)
    assert (result.games.played_games, result.games.planned) == (4, 2)
    assert all(f.endswith(".binpack") and Path(f).stat().st_size > 0 for f in result.games.files)
    engine_id = result.games.engine_id
    assert engine_id == ("datagen:Stockfish-15.1-d3" if engine == "stockfish"
                         else "datagen:alphabeta-eval-hce-hash-4-n800")
    depths = {d for (d,) in connect(lake).execute(
        "select distinct depth from labels where engine_id = ?", [engine_id]).fetchall()}
    assert depths == {3 if engine == "stockfish" else 0}

    searcher = UciSearcher(stockfish_path) if engine == "stockfish" \
        else InProcessSearcher(engine_spec(spec))
    try:
        records = [play_game(searcher, g, config.settings) for g in range(4)]
    finally:
        close = getattr(searcher, "close", None)
        if close:
            close()
    assert labels_of(lake, engine_id) == expected_labels(records)
    assert result.games.positions == sum(len(binpack_entries(r)) for r in records) > 100
    again = datagen(LocalRunner(show_progress=False), config, lake)
    assert (again.games.played_games, again.games.already_done) == (0, 2)


def test_a_games_record_as_pgn_and_binpack(stockfish_path: str) -> None:
    """The PGN annotates each played move with the next search's score from White's view
    (python-chess reads it back); binpack entries hold each played position's own score and
    the result from its side to move's view, and leave out mate scores."""
    settings = GameSettings(depth=4, max_plies=300, seed=3)
    searcher = UciSearcher(stockfish_path)
    try:
        record = next(r for r in (play_game(searcher, g, settings) for g in range(20))
                      if r.result in ("1-0", "0-1"))
    finally:
        searcher.close()
    game = to_pgn(record, "Stockfish", settings)
    nodes = list(game.mainline())[len(record.opening):]
    assert len(nodes) == len(record.played)
    for number, node in enumerate(nodes[:-1]):
        fen, verdict = record.searched[number + 1]
        white = chess.Board(fen).turn == chess.WHITE
        score = node.eval()
        assert score is not None
        if verdict.mate is None:
            assert score.white().score() == (verdict.score_cp if white else -verdict.score_cp)
    entries = binpack_entries(record)
    white_won = record.result == "1-0"
    for fen, _, cp, _, result in entries:
        board = chess.Board(fen)
        assert result == (1 if (board.turn == chess.WHITE) == white_won else -1)
        assert cp == dict(record.searched)[fen].score_cp
    assert len(entries) == sum(1 for _, v in record.played if v.mate is None)


def test_a_mate_or_a_lost_position_ends_the_game_by_adjudication() -> None:
    """A scripted searcher: four plies at 1000 cp or more for one side adjudicate a win for
    the side the scores favour; the last searched position is not played."""
    class Scripted:
        name = "scripted"

        def __init__(self) -> None:
            self.calls = 0

        def new_game(self, root_fen: str) -> None:
            self.calls = 0

        def search(self, board: chess.Board, settings: GameSettings) -> Searched:
            self.calls += 1
            mover = 1200 if board.turn == chess.BLACK else -1200   # Black is winning
            move = next(iter(board.legal_moves)).uci()
            return Searched(mover if self.calls > 2 else 0, None, move)

    record = play_game(Scripted(), 0, GameSettings(depth=1, random_plies=2))
    assert record.result == "0-1" and record.termination == "adjudication"
    assert len(record.searched) == 6 and len(record.played) == 5


def test_depth_or_nodes_one_of_them() -> None:
    with pytest.raises(DatagenError, match="give --depth or --nodes, not both"):
        DatagenConfig(depth=6, nodes=5000)
    with pytest.raises(DatagenError, match="--format must be one of binpack, pgn, got 'csv'"):
        DatagenConfig(format="csv")
    assert DatagenConfig().settings.limit == "depth 6"
    assert DatagenConfig(nodes=5000).settings.limit == "nodes 5000"
    with pytest.raises(ValueError, match="one of them"):
        GameSettings(depth=None)


def test_batch_lines_have_the_progress_style_with_rate_and_eta(
        tmp_path: Path, stockfish_path: str) -> None:
    """Issue 49 §3: a datagen batch's line is the one progress style, with the batches'
    rate and the time left while some remain (it had neither)."""
    config = DatagenConfig(engine=stockfish_path, games=4, batch_games=2, max_plies=40,
                           concurrency=1, depth=2, runner=GamesOptions())
    lines: list[str] = []
    generate(config, tmp_path / "out", lines.append)
    batches = [line for line in lines if " batches " in line]
    assert len(batches) == 2, lines
    rate = r"[\d.,]+ batches/(s|min)"
    assert re.fullmatch(rf"datagen: 1/2 batches \(50%\), {rate}, ETA \d+ (s|min \d\d s); "
                        r"2 games, \d+ plies/s; workers: .+", batches[0]), batches
    assert re.fullmatch(rf"datagen: 2/2 batches \(100%\), {rate}; 4 games, \d+ plies/s; "
                        r"workers: .+", batches[1]), batches
