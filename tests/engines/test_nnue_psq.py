"""The perspective net (issue 38): 768 -> N x2 -> 1 on the engine side. Compiled features
against python-chess, the compiled integer evaluation against the numpy reference and a
hand-built float net, the incremental accumulators against rebuilds at every searched node
(castling, en passant, promotions), bad files, and a game played with the net."""
from __future__ import annotations

import json
from pathlib import Path

import chess
import numpy as np
import pytest

from engines.alphabeta import AlphaBeta, SearchConfig
from engines.nnue.features import psq_batch
from engines.nnue.netfile import (
    NetArrays,
    NnueFileError,
    load_network_file,
    psq_meta,
    random_psq_arrays,
    save_psq,
)
from engines.nnue.network import Network, PerspectiveNetwork, use_simd
from engines.nnue.reference import evaluate_psq_quantised, psq_features
from tests.engines.test_nnue import SEARCH_ROOTS, SIMD, game_boards

ACTIVATIONS = ("crelu", "screlu")


@pytest.fixture(scope="module")
def boards() -> list[chess.Board]:
    return game_boards()


def reference(arrays: NetArrays, activation: str, board: chess.Board) -> int:
    return evaluate_psq_quantised(arrays, activation, psq_features(board, board.turn),
                                  psq_features(board, not board.turn))


def test_features_match_python_chess(boards: list[chess.Board]) -> None:
    """psq_batch's rows are python-chess's piece map seen from each side (Black's flipped
    top to bottom), side to move first, padded with 768; a hand-checked position too."""
    rows = psq_batch([b.fen() for b in boards])
    assert rows.shape == (len(boards), 2, 32)
    for row, board in zip(rows, boards, strict=True):
        assert sorted(i for i in row[0] if i != 768) == psq_features(board, board.turn)
        assert sorted(i for i in row[1] if i != 768) == psq_features(board, not board.turn)
    # White: pawn e2 (own, 0 * 64 + 12), king e1 (own, 5 * 64 + 4), king e8 (their, 384 +
    # 320 + 60). Black sees its king on e1 (e8 flipped: 60 ^ 56 = 4) and White's pawn on e7.
    board = chess.Board("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1")
    assert psq_features(board, chess.WHITE) == [12, 324, 764]
    assert psq_features(board, chess.BLACK) == [324, 384 + 52, 384 + 320 + 60]
    mirrored = board.mirror()   # colours swapped and flipped: the same view, sides exchanged
    assert psq_batch([mirrored.fen()])[0].tolist() == psq_batch([board.fen()])[0].tolist()


@SIMD
@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("hidden", [64, 48])
def test_compiled_eval_equals_numpy_reference(boards: list[chess.Board], activation: str,
                                              simd: tuple[bool, bool], hidden: int) -> None:
    """The C evaluation (every SIMD path) equals the exact integer reference on every
    fixture position, for both activations and a net whose accumulators clip both ways; 48
    columns leave AVX-512's 32-lane loop a 16-lane tail."""
    arrays = random_psq_arrays(7, hidden=hidden)
    net = PerspectiveNetwork(arrays, activation)
    try:
        use_simd(*simd)
        for board in boards:
            assert net.evaluate(board) == reference(arrays, activation, board)
    finally:
        use_simd(True)
    accs = np.stack([net.accumulators(b) for b in boards[::40]])
    assert (accs < 0).any() and (accs > 255).any() and ((accs > 0) & (accs < 255)).any()


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_integer_eval_follows_a_hand_built_float_net(boards: list[chess.Board],
                                                     activation: str) -> None:
    """A float net built here on the file's grid (weights k / 255, output weights k / 64),
    evaluated in float64 numpy with python-chess's features: the engine's integer
    centipawns are its 600 * y up to the contract's floors (under 1 cp each)."""
    rng = np.random.default_rng(3)
    hidden = 32
    ft = np.round(rng.normal(0, 0.08, (768, hidden)) * 255) / 255
    ft_bias = np.round(rng.uniform(0.2, 0.6, hidden) * 255) / 255
    out = np.round(rng.normal(0, 0.4, 2 * hidden) * 64) / 64
    out_bias = 803 / (255 * 64)
    arrays = {"ft_weight": np.round(ft * 255).astype(np.int16),
              "ft_bias": np.round(ft_bias * 255).astype(np.int16),
              "out_weight": np.round(out * 64).astype(np.int16)[None],
              "out_bias": np.array([803], dtype=np.int32)}
    net = PerspectiveNetwork(arrays, activation)
    gaps = []
    for board in boards[::5]:
        y = out_bias
        for half, side in enumerate((board.turn, not board.turn)):
            v = np.clip(ft_bias + ft[psq_features(board, side)].sum(axis=0), 0, 1)
            y += float(((v * v if activation == "screlu" else v)
                        * out[half * hidden:(half + 1) * hidden]).sum())
        gaps.append(600 * y - net.evaluate(board))
    assert min(gaps) > -1e-6 and max(gaps) < 1.1, (min(gaps), max(gaps))
    assert np.std([net.evaluate(b) for b in boards[::5]]) > 50   # not a flat net


@pytest.fixture(scope="module", params=ACTIVATIONS)
def psq_path(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    path = tmp_path_factory.mktemp("psq") / f"{request.param}.npz"
    save_psq(path, random_psq_arrays(11, hidden=128), request.param)
    return path


@SIMD
def test_incremental_accumulators_equal_rebuilds_at_every_node(psq_path: Path,
                                                               simd: tuple[bool, bool]) -> None:
    """Searches from roots with castling both ways, en passant, promotions with and without
    capture and null moves: at every evaluated node both perspectives' int16 accumulators
    equal ones rebuilt from the position (a missing rook, captured pawn or promoted piece
    update shows as a mismatch)."""
    engine = AlphaBeta(SearchConfig(eval="nnue", nnue_path=str(psq_path), hash_mb=1))
    stack = engine._searcher.nnue
    stack.verify = True
    try:
        use_simd(*simd)
        for fen in SEARCH_ROOTS:
            engine.new_game()
            results = list(engine.iterate(chess.Board(fen), max_depth=6, max_nodes=20000))
            assert results and results[0].pv[0] in chess.Board(fen).legal_moves
    finally:
        use_simd(True)
    assert stack.checked > 5 * 10000
    assert stack.mismatches == 0


def test_network_load_picks_the_architecture(psq_path: Path, boards: list[chess.Board]) -> None:
    """Network.load reads a psq768 file as a PerspectiveNetwork (what eval=nnue loads), and
    the searcher's static eval is that net's."""
    meta, arrays = load_network_file(psq_path)
    net = Network.load(psq_path)
    assert isinstance(net, PerspectiveNetwork) and net.hidden == 128
    engine = AlphaBeta(SearchConfig(eval="nnue", nnue_path=str(psq_path), hash_mb=1))
    for board in boards[::97]:
        assert engine.evaluate(board) == net.evaluate(board) == reference(
            arrays, str(meta["activation"]), board)


def test_nnue_search_plays_a_game(psq_path: Path) -> None:
    engine = AlphaBeta(SearchConfig(eval="nnue", nnue_path=str(psq_path), hash_mb=1))
    board = chess.Board()
    for _ in range(16):
        result = engine.best_move(board, 3)
        assert result.pv[0] in board.legal_moves
        board.push(result.pv[0])


@pytest.mark.parametrize("case", ["sizes", "activation", "dtype", "range", "overflow"])
def test_bad_psq_files_name_the_file_and_field(tmp_path: Path, case: str) -> None:
    arrays = random_psq_arrays(1, hidden=32)
    meta = psq_meta(32, "screlu")
    field = {"sizes": "sizes", "activation": "activation", "dtype": "out_bias",
             "range": "out_weight", "overflow": "ft_weight"}[case]
    if case == "sizes":
        meta["sizes"] = [768, 30, 1]
    elif case == "activation":
        meta["activation"] = "relu"
    elif case == "dtype":
        arrays["out_bias"] = arrays["out_bias"].astype(np.int64)
    elif case == "range":
        arrays["out_weight"][0, 3] = 128
    else:
        arrays["ft_weight"][:40, 5] = 2000
    path = tmp_path / "bad.npz"
    np.savez(path, meta=np.array(json.dumps(meta)), **arrays)  # type: ignore[arg-type]
    with pytest.raises(NnueFileError, match=f"{path}.*'{field}'"):
        Network.load(path)
