"""Ingest's dedupe of a batch of positions: the first FEN of each key wins, in arrival order;
a later row of the key with another FEN is a clash (a Zobrist collision), in arrival order."""
from __future__ import annotations

import pyarrow as pa

from pipelines.ingest.positions import first_fen_per_key


def batch(keys: list[int], fens: list[str]) -> pa.Table:
    return pa.table({"position_key": pa.array(keys, pa.uint64()), "fen": fens,
                     "game_index": pa.array(range(len(keys)), pa.int32()),
                     "line": pa.array([10 * i for i in range(len(keys))], pa.int32())})


def test_the_first_fen_of_a_key_wins_and_other_fens_clash() -> None:
    """Keys 5, 3, 5, 3, 7, 5 (by hand): rows 0, 1, 4 win; row 2 repeats row 0's FEN (no
    clash); rows 3 and 5 bring another FEN (clashes, each with the winner's FEN)."""
    winners, clashes = first_fen_per_key(batch([5, 3, 5, 3, 7, 5], ["a", "b", "a", "c", "d", "e"]))
    assert winners.column("game_index").to_pylist() == [0, 1, 4]
    assert winners.column("fen").to_pylist() == ["a", "b", "d"]
    assert [(c["game_index"], c["line"], c["fen"], c["stored_fen"]) for c in clashes] == \
        [(3, 30, "c", "b"), (5, 50, "e", "a")]


def test_a_batch_without_a_repeated_key_is_kept_whole() -> None:
    table = batch([9, 2, 2**63 + 1], ["x", "y", "z"])
    winners, clashes = first_fen_per_key(table)
    assert winners.equals(table) and clashes == []
