"""The scale benchmark's queries (issue 35 §3) against an independent computation.

A small real home: the games of two fixture PGN files and a PGN with ``[%eval]`` annotations,
Lichess evaluation JSONL at two depths over every position the games reach, and bullet text
labels (with results) over some of them. python-chess replays the games and the expected
figures are computed here in Python, row by row: labels joined with positions, best-move
disagreement between depths, the ``nnue_examples`` view (every row: the lowest game a position
was played in, the result from the side to move's view, check, the annotations' rows) and its
per-depth summary. The warehouse's ``games`` table only names the games (game_id by file and
index); everything else comes from the PGN text. Each check runs three times: with the derived
tables computed by their queries (after a write), kept by ``refresh`` (position_facts in
positions' files, the summaries the whole-depth queries add up beside the lake:
warehouse/derived.py), and kept with half the deep labels and the text labels imported after
a refresh, the summaries brought up to date from the labels added.
"""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import chess.polyglot
import pytest

from flows.ingest import INGEST, IngestJob
from flows.step import run_step
from pipelines.ingest import IngestConfig
from warehouse import Lake, connect
from warehouse import refresh as refresh_module
from warehouse.catalog import connect_with_files, named_query, query
from warehouse.derived import DERIVED_DIR, current_file, derived_tables
from warehouse.refresh import refresh

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
GAME_FILES = (FIXTURES / "core_games.pgn", FIXTURES / "pgn" / "quirks.pgn")
ANNOTATED = (FIXTURES / "annotated" / "annotated.pgn").read_text()
ENGINE, DEEP, SHALLOW, TEXT_ENGINE, TEXT_DEPTH = "lichess-eval", 20, 12, "sf-text", 9
RESULTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


class Game:
    """One game of a PGN file as python-chess reads it: the positions before each main-line
    move (key, board), the move, the result tag, the [%eval] annotations."""

    def __init__(self, file: Path, index: int, game: chess.pgn.Game) -> None:
        self.file, self.index = file, index
        self.result = game.headers.get("Result", "*")
        self.annotator = game.headers.get("Annotator")
        self.plies: list[tuple[chess.Board, chess.Move, Any]] = []
        board = game.board()
        for node in game.mainline():
            self.plies.append((board.copy(), node.move, node.eval()))
            board.push(node.move)
        self.final = board


def read_games(paths: list[Path]) -> list[Game]:
    games = []
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as handle:
            index = 0
            while (game := chess.pgn.read_game(handle)) is not None:
                games.append(Game(path, index, game))
                index += 1
    return games


def key(board: chess.Board) -> int:
    return chess.polyglot.zobrist_hash(board)


def label_value(board: chess.Board, move: chess.Move, salt: int) -> tuple[int, str]:
    """A made-up score (side to move's view) and best move per position and depth."""
    moves = sorted(m.uci() for m in board.legal_moves)
    h = key(board) % 1009
    return (h * (salt + 3)) % 701 - 350, moves[(h + salt * (h % 3 == 0)) % len(moves)]


def build_home(folder: Path, in_steps: bool) -> tuple[Lake, dict[str, Any]]:
    """The home, its labels imported at once; or ``in_steps``: half of the deep labels and
    the text labels imported after a ``refresh`` that kept the derived tables, which the next
    refresh brings up to date from the labels added (a deep label then pairs with a shallow
    one held before it)."""
    annotated = folder / "annotated.pgn"
    annotated.write_text(ANNOTATED)
    paths = [*GAME_FILES, annotated]
    games = read_games(paths)
    boards: dict[int, chess.Board] = {}
    for game in games:
        for board, _, _ in game.plies:
            boards.setdefault(key(board), board)
        boards.setdefault(key(game.final), game.final)
        for board, played, _ in game.plies[3:12:4]:      # side lines: positions of no game
            other = min((m for m in board.legal_moves if m != played), key=str)
            side = board.copy()
            side.push(other)
            boards.setdefault(key(side), side)
    evals, later, texts, deep, shallow, text_labels = [], [], [], {}, {}, {}
    for number, (k, board) in enumerate(sorted(boards.items())):
        if not any(board.legal_moves):
            continue
        cp_deep, best_deep = label_value(board, chess.Move.null(), 1)
        cp_shallow, best_shallow = label_value(board, chess.Move.null(), 2)
        white = 1 if board.turn else -1         # the JSONL's scores are White's
        first = {"mate": 3 * white, "line": best_deep} if number % 17 == 5 else \
            {"cp": cp_deep * white, "line": best_deep}
        deep[k] = (None if "mate" in first else cp_deep, 3 if "mate" in first else None,
                   best_deep)
        shallow[k] = (cp_shallow, None, best_shallow)
        deep_eval = {"pvs": [first], "knodes": 10, "depth": DEEP}
        shallow_eval = {"pvs": [{"cp": cp_shallow * white, "line": best_shallow}], "knodes": 1,
                        "depth": SHALLOW}
        if in_steps and number % 2:
            evals.append(json.dumps({"fen": board.epd(), "evals": [shallow_eval]}))
            later.append(json.dumps({"fen": board.epd(), "evals": [deep_eval]}))
        else:
            evals.append(json.dumps({"fen": board.epd(), "evals": [deep_eval, shallow_eval]}))
        if number % 3 == 0:
            white_cp = cp_deep * white
            white_result = (0.0, 0.5, 1.0)[number % 7 % 3]
            texts.append(f"{board.fen()} | {white_cp} | {white_result}")
            text_labels[k] = (cp_deep, white_result if board.turn else 1 - white_result)
    (folder / "evals.jsonl").write_text("\n".join(evals) + "\n")
    (folder / "later.jsonl").write_text("\n".join(later) + "\n")
    (folder / "labels.txt").write_text("\n".join(texts) + "\n")
    lake = Lake(folder / "home")
    run_step(INGEST, IngestJob(tuple(paths), IngestConfig(workers=1)), lake)
    run_step(INGEST, IngestJob((folder / "evals.jsonl",), IngestConfig(
        workers=1, format="lichess-eval")), lake)
    if in_steps:
        refresh(lake)
        run_step(INGEST, IngestJob((folder / "later.jsonl",), IngestConfig(
            workers=1, format="lichess-eval")), lake)
    run_step(INGEST, IngestJob((folder / "labels.txt",), IngestConfig(
        workers=1, format="text", engine_id=TEXT_ENGINE, depth=TEXT_DEPTH)), lake)
    got = {"games": games, "boards": boards, "deep": deep, "shallow": shallow,
           "text": text_labels}
    got["examples"] = expected_examples(lake, got)
    return lake, got


@pytest.fixture(scope="module")
def home_built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Lake, dict[str, Any]]:
    return build_home(tmp_path_factory.mktemp("scale_queries"), in_steps=False)


@pytest.fixture(scope="module")
def home_in_steps(tmp_path_factory: pytest.TempPathFactory) -> tuple[Lake, dict[str, Any]]:
    return build_home(tmp_path_factory.mktemp("scale_queries_steps"), in_steps=True)


def game_ids(lake: Lake, games: list[Game]) -> dict[tuple[str, int], str]:
    """(file name, index in the file) -> games.game_id (the warehouse names the games)."""
    rows = connect(lake).sql("select s.path, g.game_index, g.game_id from games g "
                             "join sources s using (source_id)").fetchall()
    ids = {(Path(path).name, index): game_id for path, index, game_id in rows}
    assert len(ids) == len(games)
    return ids


def expected_examples(lake: Lake, got: dict[str, Any]) -> set[tuple[Any, ...]]:
    """Every nnue_examples row, computed from the PGN text and the label files."""
    games: list[Game] = got["games"]
    ids = game_ids(lake, games)
    first: dict[int, tuple[str, str]] = {}      # key -> (lowest game id, its result)
    annotations: dict[tuple[int, str, int], tuple[str, int, str]] = {}
    for game in games:
        game_id = ids[(game.file.name, game.index)]
        for board, _, _ in game.plies:
            k = key(board)
            if k not in first or game_id < first[k][0]:
                first[k] = (game_id, game.result)
        for ply, (_, _, score) in enumerate(game.plies[:-1]):
            if score is None or score.white().is_mate():
                continue
            after, next_move, _ = game.plies[ply + 1]
            engine = "pgn:" + (game.annotator or "[%eval]")
            depth = 8 if game.annotator else 0
            slot = (key(after), engine, depth)
            white = score.white().score()
            row = (game_id, white if after.turn else -white, next_move.uci())
            if slot not in annotations or game_id < annotations[slot][0]:
                annotations[slot] = row
    scores: list[tuple[int, str, int, int, str | None, float | None]] = []
    for table, depth in ((got["deep"], DEEP), (got["shallow"], SHALLOW)):
        scores += [(k, ENGINE, depth, cp, best, None) for k, (cp, _, best) in table.items()
                   if cp is not None]
    scores += [(k, TEXT_ENGINE, TEXT_DEPTH, cp, None, result)
                for k, (cp, result) in got["text"].items()]
    scores += [(k, engine, depth, cp, best, None)
               for (k, engine, depth), (_, cp, best) in annotations.items()]
    rows = set()
    for k, engine, depth, cp, best, label_result in scores:
        board = got["boards"][k]
        game_id, game_result = first.get(k, (None, None))
        result = label_result if label_result is not None else (
            None if game_result not in RESULTS else
            RESULTS[game_result] if board.turn else 1 - RESULTS[game_result])
        rows.add((k, board.epd(), "w" if board.turn else "b", engine, depth, cp, result,
                  game_id, game_id or f"position:{k}", board.is_check(), best))
    return rows


@pytest.fixture(params=["computed", "kept", "kept by key range", "in steps"])
def built(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
          ) -> tuple[Lake, dict[str, Any]]:
    """The home with the derived tables computed by their queries, or kept by ``refresh``
    (position_facts in positions' files; the summaries computed in one query, or key range
    by key range); or the home whose labels came in steps, the
    summaries brought up to date from the labels added (never computed whole again)."""
    if request.param == "in steps":
        lake, got = request.getfixturevalue("home_in_steps")

        computed = refresh_module.write

        def whole(*args: Any) -> int:
            if args[1].increments_over:
                raise AssertionError(f"{args[1].name} computed whole after labels were added")
            return computed(*args)      # label_counts_overlay: always whole
        monkeypatch.setattr(refresh_module, "write", whole)
        refresh(lake)
        return lake, got
    lake, got = request.getfixturevalue("home_built")
    if request.param == "kept by key range":    # the summaries in 7 ranges or so
        monkeypatch.setattr(refresh_module, "RANGE_ROWS", 200)
        ranges: list[str] = []
        summed = refresh_module.summed_by_range

        def counted(*args: Any) -> Any:
            ranges.append(args[1].name)
            return summed(*args)
        monkeypatch.setattr(refresh_module, "summed_by_range", counted)
        for path in (lake.root / DERIVED_DIR).glob("*/*"):
            path.unlink()
        refresh(lake)
        assert sorted(ranges) == ["label_counts", "label_depth_pairs"]
    if request.param.startswith("kept"):
        refresh(lake)
    else:
        for path in (lake.root / DERIVED_DIR).glob("*/*"):
            path.unlink()
    con, files = connect_with_files(lake)
    current = {spec.name: current_file(lake.root, spec, files) for spec in derived_tables()}
    for name, stored in current.items():
        assert (stored is not None) == request.param.startswith("kept"), name
    kept = current["position_facts"]
    view = con.sql("select sql from duckdb_views() where view_name = 'position_facts'")
    sql = view.fetchall()[0][0]
    # kept in positions' files (issue 51): the view reads them, not the query over moves
    assert all(str(part) in sql for part in lake.parts("positions")) if kept else True
    assert ("from moves" not in sql) if kept else True
    return lake, got


def test_nnue_examples_rows_match_the_games_and_labels(built: tuple[Lake, Any]) -> None:
    lake, got = built
    rows = set(connect(lake).sql(
        "select position_key, fen, side_to_move, engine_id, depth, score_cp, result, game_id, "
        "split_key, in_check, best_move from nnue_examples").fetchall())
    expected = got["examples"]
    assert len(expected) > 400
    assert sum(1 for row in expected if row[7] is None) > 20     # positions of no game
    assert sum(1 for row in expected if row[3].startswith("pgn:")) >= 5
    assert rows == expected


def test_nnue_examples_depth_summary(built: tuple[Lake, Any]) -> None:
    lake, got = built
    expected_rows = got["examples"]
    for engine, depth in ((ENGINE, DEEP), (ENGINE, SHALLOW), (TEXT_ENGINE, TEXT_DEPTH)):
        rows = [r for r in expected_rows if r[3] == engine and r[4] == depth]
        scores = [r[5] for r in rows]
        expected = (len(rows), sum(r[7] is not None for r in rows),
                    sum(r[6] is not None for r in rows), sum(bool(r[9]) for r in rows),
                    round(sum(scores) / len(scores), 1))
        table = query(connect(lake), named_query("nnue_examples_depth"),
                      {"engine_id": engine, "depth": depth})
        assert tuple(table.to_pylist()[0].values()) == expected


def test_labels_joined_with_positions_by_side(built: tuple[Lake, Any]) -> None:
    lake, got = built
    sides: dict[str, list[tuple[int | None, int | None]]] = defaultdict(list)
    for k, (cp, mate, _) in got["deep"].items():
        sides["w" if got["boards"][k].turn else "b"].append((cp, mate))
    expected = [{"side_to_move": side, "positions": len(values),
                 "mean_score_cp": round(sum(cp for cp, _ in values if cp is not None)
                                        / sum(cp is not None for cp, _ in values), 1),
                 "mates": sum(mate is not None for _, mate in values)}
                for side, values in sorted(sides.items())]
    table = query(connect(lake), named_query("label_scores_by_side"),
                  {"engine_id": ENGINE, "depth": DEEP})
    assert sum(row["mates"] for row in expected) > 3
    assert table.to_pylist() == expected


def test_best_move_disagreement(built: tuple[Lake, Any]) -> None:
    lake, got = built
    pairs = [(got["shallow"][k], got["deep"][k]) for k in got["deep"]]
    differ = [(s, d) for s, d in pairs if s[2] != d[2]]
    same = [(s, d) for s, d in pairs if s[2] == d[2]]

    def change(group: list[Any]) -> float:
        values = [abs(d[0] - s[0]) for s, d in group if d[0] is not None]
        return round(sum(values) / len(values), 1)
    expected = {"positions": len(pairs), "disagree": len(differ),
                "disagree_pct": round(100.0 * len(differ) / len(pairs), 2),
                "score_change_when_disagree": change(differ),
                "score_change_when_agree": change(same)}
    assert differ and same
    table = query(connect(lake), named_query("best_move_disagreement"),
                  {"engine_id": ENGINE, "shallow": SHALLOW, "deep": DEEP})
    assert table.to_pylist() == [expected]
    # one depth with itself: each label paired with itself (in steps, the shallow labels were
    # held before the deep ones came: their pairs are not counted twice)
    for depth, labels in ((SHALLOW, got["shallow"]), (DEEP, got["deep"])):
        table = query(connect(lake), named_query("best_move_disagreement"),
                      {"engine_id": ENGINE, "shallow": depth, "deep": depth})
        assert table.to_pylist() == [{
            "positions": len(labels), "disagree": 0, "disagree_pct": 0.0,
            "score_change_when_disagree": None, "score_change_when_agree": 0.0}]


def test_fixture_positions_are_the_warehouse_positions(built: tuple[Lake, Any]) -> None:
    """The replay here and ingest's agree on the positions (so the rest compares like with
    like): every position python-chess reached, under its Polyglot key and FEN."""
    lake, got = built
    stored = dict(connect(lake).sql("select position_key, fen from positions").fetchall())
    assert stored == {k: board.epd() for k, board in got["boards"].items()}
