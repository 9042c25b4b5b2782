"""The Arrow-column feature encoders the training loader uses (``halfkp_column``,
``psq_column``: FENs read from the column's buffers without the GIL) against python-chess and
against the list encoders (``halfkp_batch``, ``psq_batch``): the same rows on real game
positions and on odd FENs the list encoders accept, the same error for every FEN they refuse,
whatever the column's layout (sliced, chunked, large strings)."""
from __future__ import annotations

import threading
from collections.abc import Callable

import chess
import numpy as np
import pyarrow as pa
import pytest

from engines.nnue.features import halfkp_batch, halfkp_column, psq_batch, psq_column
from engines.nnue.reference import halfkp_reference, psq_features
from tests.engines.test_nnue import game_boards

ENCODERS = {"halfkp": (halfkp_column, halfkp_batch), "psq768": (psq_column, psq_batch)}
Encoder = Callable[..., np.ndarray]

# FENs the list encoders read (with python-chess's board where chess.Board reads them too):
# en passant and castling fields, no counters, fewer fields, odd spacing, signed counters.
ODD = ["r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1", "r3k2r/8/8/3pP3/8/8/8/R3K2R w Qk d6",
       "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3",
       "4k3/8/8/8/8/8/4P3/4K3", "4k3/8/8/8/8/8/4P3/4K3 b", "4k3/8/8/8/8/8/4P3/4K3 b -",
       "  4k3/8/8/8/8/8/4P3/4K3\tb  -  -  7 \n 40 ", "4k3/8/8/8/8/8/4P3/4K3 w - - +3 +0",
       "4k3/8/8/8/8/8/4P3/4K3 w - - 0 0", "4k3/8/8/8/8/8/4P3/4K3 w - - -0 1"]
# Read by the list encoders (str.split, int()) but not by the bytes parser: the GIL path.
PYTHON_ONLY = ["4k3/8/8/8/8/8/4P3/4K3\xa0b - - 1_0 2", "4k3/8/8/8/8/8/4P3/4K3 w - - \u0663 1",
               "4k3/8/8/8/8/8/4P3/4K3 w - - 0 2000000000",
               "4k3/8/8/8/8/8/4P3/4K3\x1cw\x1c-\x1c-"]
BAD = ["not a fen", "8/8/8/8/8/8/8/8 w - -", "4k3/8/8/8/8/8/4P3/4K3 x - -", "",
       "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",   # Chess960 castling
       "4k3/8/8/8/8/8/4P3/4K3 w - d4", "4k3/8/8/8/8/8/4P3/4K3 w - - -1 1",
       "4k3/8/8/8/8/8/4P3/4K3 w - - 99999999999 1", "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1 x",
       "4k3/8/8/8/8/8/4P3/4K3 w KK - 0 1", "4k3/8/8/8/8/8/4P3/4KK2 w - -",
       "QQQQkQQQ/QQQQQQQQ/QQQQQQQQ/QQQQQQQQ/8/8/8/4K3 w - -",   # 31 non-kings: too many
       "QQQQkQQQ/QQQQQQQQ/QQQQQQQQ/QQQQQQQ1/8/8/8/4K3 w - -"]   # 30: the most a row holds


def fixture_fens() -> list[str]:
    return [board.fen() for board in game_boards()]


@pytest.fixture(scope="module")
def fens() -> list[str]:
    return fixture_fens()


@pytest.mark.parametrize("arch", ENCODERS)
def test_columns_match_python_chess_on_game_positions_and_odd_fens(arch: str,
                                                                   fens: list[str]) -> None:
    """Every fixture game position and each odd FEN: the column encoder's rows are the
    python-chess reference's indices (sorted per perspective, padding aside), int64."""
    column, _ = ENCODERS[arch]
    odd = [fen for fen in ODD if fen.split()[0] == fen.strip().split()[0]]
    texts = fens + odd
    rows = column(pa.array(texts))
    assert rows.dtype == np.int64 and rows.shape[:2] == (len(texts), 2)
    pad = 0 if arch == "halfkp" else 768
    for fen, row in zip(texts, rows, strict=True):
        board = chess.Board(" ".join(fen.split()[:4]))
        expected = halfkp_reference(board) if arch == "halfkp" else (
            psq_features(board, board.turn), psq_features(board, not board.turn))
        assert [sorted(int(i) for i in side if i != pad) for side in row] == list(expected), fen


@pytest.mark.parametrize("arch", ENCODERS)
def test_columns_equal_the_list_encoders_for_any_layout(arch: str, fens: list[str]) -> None:
    """The same rows as the list encoder (values, order, padding) for a column as it comes,
    a slice at an offset, a chunked column, large strings and string views, odd FENs the bytes
    parser leaves to Python included."""
    column, listed = ENCODERS[arch]
    texts = fens[:3000] + ODD + PYTHON_ONLY
    expected = listed(texts).astype(np.int64)
    whole = pa.array(texts)
    assert np.array_equal(column(whole), expected)
    assert np.array_equal(column(whole.slice(777, 1234)), expected[777:777 + 1234])
    chunked = pa.chunked_array([whole.slice(0, 1000), whole.slice(1000)])
    assert np.array_equal(column(chunked), expected)
    for kind in (pa.large_string(), pa.string_view()):
        assert np.array_equal(column(whole.cast(kind)), expected)
    assert column(pa.array([], pa.string())).shape == (0, 2, expected.shape[2])
    assert np.array_equal(column(pa.array(PYTHON_ONLY)), listed(PYTHON_ONLY))


@pytest.mark.parametrize("arch", ENCODERS)
@pytest.mark.parametrize("bad", BAD)
def test_a_bad_fen_is_the_list_encoders_error(arch: str, bad: str) -> None:
    """A FEN the list encoder refuses is the same ValueError, word for word, from the column
    encoder, at any position in the column (a counter too large for the core is the list
    encoder's OverflowError); a FEN it accepts encodes the same."""
    column, listed = ENCODERS[arch]
    good = "4k3/8/8/8/8/8/4P3/4K3 w - -"
    texts = [good, bad, "r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1"]
    try:
        expected = listed(texts)
    except (ValueError, OverflowError) as error:
        assert str(error)
        with pytest.raises(type(error)) as raised:
            column(pa.array(texts))
        assert type(raised.value) is type(error) and str(raised.value) == str(error)
        return
    assert bad == BAD[-1]
    assert np.array_equal(column(pa.array(texts)), expected)


def test_the_first_bad_row_is_the_one_reported() -> None:
    """Rows the nogil pass flags are taken in column order: the first bad FEN's error, as the
    list encoder raises it, whichever kind of fault comes first; a null is a ValueError."""
    good = "4k3/8/8/8/8/8/4P3/4K3 w - -"
    full = "QQQQkQQQ/QQQQQQQQ/QQQQQQQQ/QQQQQQQQ/8/8/8/4K3 w - -"
    for texts in ([good, PYTHON_ONLY[0], full, "not a fen"], [good, "not a fen", full]):
        with pytest.raises(ValueError) as listed:
            halfkp_batch(texts)
        with pytest.raises(ValueError) as columns:
            halfkp_column(pa.array(texts))
        assert str(columns.value) == str(listed.value)
    with pytest.raises(ValueError, match="expected a FEN string, got None"):
        psq_column(pa.array([good, None, "not a fen"]))
    with pytest.raises(ValueError, match="expected an Arrow column of FEN strings"):
        halfkp_column(pa.array([1, 2]))


def test_column_encoders_run_in_parallel_threads(fens: list[str]) -> None:
    """Threads encoding slices of one column at once (the loader's pool) give each slice's
    rows: nothing shared between calls."""
    column = pa.array(fens)
    expected = halfkp_batch(fens).astype(np.int64)
    step = len(fens) // 4 + 1
    results: dict[int, np.ndarray] = {}

    def encode(start: int) -> None:
        for _ in range(5):
            results[start] = halfkp_column(column.slice(start, step))

    threads = [threading.Thread(target=encode, args=(s,)) for s in range(0, len(fens), step)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert np.array_equal(np.concatenate([results[s] for s in sorted(results)]), expected)
