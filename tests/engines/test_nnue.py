"""NNUE on the engine side (paper 002 with Stockfish 12's HalfKP): compiled feature extraction
against the python-chess reference, the compiled quantised network against the numpy
reference, the incremental accumulator against a rebuild, and a net playing over UCI."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import numpy as np
import pytest

from engines.alphabeta import NNUE_TEMPO, AlphaBeta, SearchConfig, SearchConfigError
from engines.nnue.features import halfkp_batch, halfkp_indices
from engines.nnue.netfile import (
    ARRAYS,
    META,
    NetArrays,
    NnueFileError,
    load_arrays,
    random_arrays,
    save_arrays,
)
from engines.nnue.network import Network, use_simd
from engines.nnue.reference import evaluate_quantised, halfkp_reference, quantised_layers

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
GAME_FILES = ("core_games.pgn", "label_engines/selfplay.pgn")
GAME_FILE = FIXTURES / GAME_FILES[0]


def game_boards() -> list[chess.Board]:
    """Every position of the fixture games (core games and self-play), start positions too."""
    boards = []
    for name in GAME_FILES:
        with open(FIXTURES / name) as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                board = game.board()
                boards.append(board.copy(stack=False))
                for move in game.mainline_moves():
                    board.push(move)
                    boards.append(board.copy(stack=False))
    return boards


@pytest.fixture(scope="module")
def boards() -> list[chess.Board]:
    return game_boards()


def test_fixture_games_cover_promotions_and_both_sides(boards: list[chess.Board]) -> None:
    """The cross-checks below see thousands of positions, both sides to move, promoted pieces."""
    assert len(boards) > 2000
    assert {b.turn for b in boards} == {chess.WHITE, chess.BLACK}
    assert any(len(b.pieces(chess.QUEEN, chess.WHITE)) > 1 or b.promoted for b in boards)


def test_halfkp_matches_python_chess_reference(boards: list[chess.Board]) -> None:
    """Compiled HalfKP (both perspectives, batch and single) equals the python-chess reference
    on every game position; a wrong orientation or piece kind would differ somewhere."""
    rows = halfkp_batch([b.fen() for b in boards])
    assert rows.dtype == np.int32 and rows.shape == (len(boards), 2, 30)
    for board, row in zip(boards, rows, strict=False):
        stm, other = halfkp_reference(board)
        assert sorted(row[0][row[0] > 0]) == stm and sorted(row[1][row[1] > 0]) == other
        assert halfkp_indices(board) == (stm, other)
        assert len(stm) == len(other) == len(board.piece_map()) - 2


def test_halfkp_known_indices() -> None:
    """Hand-computed contract indices: White king e1 (k=4), pawn e2 (sq 12): 4*641+1+0+12 =
    2577 for White; for Black (king e8 -> 60^63 = 3) the pawn is an enemy pawn (kind 1) on
    12^63 = 51: 3*641+1+64+51 = 2039. Counters, castling and en passant do not matter."""
    with_counters = halfkp_batch(["4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"])
    without = halfkp_batch(["4k3/8/8/8/8/8/4P3/4K3 w - -"])
    assert with_counters[0, :, 0].tolist() == [2577, 2039]
    assert (with_counters == without).all()
    black = halfkp_batch(["4k3/8/8/8/8/8/4P3/4K3 b - -"])
    assert black[0, :, 0].tolist() == [2039, 2577]
    castle = halfkp_batch(["r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1",
                           "r3k2r/8/8/3pP3/8/8/8/R3K2R w - - 0 1"])
    assert (castle[0] == castle[1]).all()


@pytest.mark.parametrize("fen", ["not a fen", "8/8/8/8/8/8/8/8 w - -",
                                 "4k3/8/8/8/8/8/4P3/4K3 x - -", "QQQQkQQQ/QQQQQQQQ/QQQQQQQQ/"
                                 "QQQQQQQQ/8/8/8/4K3 w - -"])
def test_halfkp_batch_rejects_bad_fens(fen: str) -> None:
    """A bad FEN (or one with more than 30 non-king pieces) is a ValueError quoting it."""
    with pytest.raises(ValueError, match=repr(fen)[1:-1][:20]):
        halfkp_batch(["4k3/8/8/8/8/8/8/4K3 w - -", fen])


# --- the network file ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def net_arrays() -> NetArrays:
    return random_arrays(seed=2026)


@pytest.fixture(scope="module")
def net_path(tmp_path_factory: pytest.TempPathFactory, net_arrays: NetArrays) -> Path:
    path = tmp_path_factory.mktemp("nnue") / "random.npz"
    save_arrays(path, net_arrays)
    return path


def test_network_file_round_trip(net_path: Path, net_arrays: NetArrays) -> None:
    """A saved v1 file loads back with every array's dtype, shape and values."""
    loaded = load_arrays(net_path)
    assert set(loaded) == set(ARRAYS)
    for name, (dtype, shape) in ARRAYS.items():
        assert loaded[name].dtype == dtype and loaded[name].shape == shape
        assert (loaded[name] == net_arrays[name]).all()


def broken_files(arrays: NetArrays) -> list[tuple[str, dict[str, np.ndarray], str]]:
    """(case, npz fields, expected message) of files an engine must refuse."""
    meta = np.array(json.dumps(META))
    old = np.array(json.dumps({**META, "version": 0}))
    return [
        ("dtype", {**arrays, "meta": meta, "l1_weight": arrays["l1_weight"].astype(np.int16)},
         "field 'l1_weight' must be int8, got int16"),
        ("shape", {**arrays, "meta": meta, "ft_bias": arrays["ft_bias"][:255]},
         r"field 'ft_bias' must have shape \(256,\), got \(255,\)"),
        ("missing", {k: v for k, v in arrays.items() if k != "out_bias"} | {"meta": meta},
         "field 'out_bias' is missing"),
        ("version", {**arrays, "meta": old}, "meta field 'version' must be 1, got 0"),
        ("meta", {**arrays, "meta": np.array(["a", "b"])}, "field 'meta' must be a 0-d string"),
    ]


@pytest.mark.parametrize("case", ["dtype", "shape", "missing", "version", "meta", "not npz"])
def test_bad_network_files_name_the_file_and_field(tmp_path: Path, net_arrays: NetArrays,
                                                    case: str) -> None:
    """Each broken file is refused with one line naming the file and the bad field."""
    path = tmp_path / f"{case.replace(' ', '_')}.npz"
    if case == "not npz":
        path.write_text("[Event \"not a network\"]\n")
        message = "not a readable .npz network file"
    else:
        fields, message = next((f, m) for c, f, m in broken_files(net_arrays) if c == case)
        np.savez(path, **fields)
    with pytest.raises(NnueFileError, match=message) as info:
        Network.load(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


# --- the quantised network -------------------------------------------------------------------

def test_random_net_activations_are_not_all_clipped(boards: list[chess.Board],
                                                    net_arrays: NetArrays) -> None:
    """The random test net exercises every clipped ReLU on both sides of its range, so the
    exactness test below can catch a wrong clamp, shift or rounding."""
    layers = [quantised_layers(net_arrays, *halfkp_reference(b)) for b in boards[::150]]
    for depth in range(3):    # the inputs of the three clipped ReLUs
        values = np.concatenate([layer[depth] for layer in layers])
        assert (values < 0).mean() > 0.1 and (values > 127).mean() > 0.1
        assert ((values > 0) & (values < 127)).mean() > 0.2
    scores = [evaluate_quantised(net_arrays, *halfkp_reference(b)) for b in boards[::150]]
    assert len(set(scores)) > len(scores) // 2


#: The kernels: AVX2 with VNNI's vpdpbusd, AVX2 alone, SSE (x86-64-v2), each where present.
SIMD = pytest.mark.parametrize("simd", [(True, True), (True, False), (False, False)],
                               ids=["vnni-if-present", "avx2-if-present", "sse"])


@SIMD
def test_compiled_eval_equals_numpy_reference(boards: list[chess.Board], net_arrays: NetArrays,
                                              net_path: Path, simd: tuple[bool, bool]) -> None:
    """The C network (every SIMD path) equals evaluate_quantised exactly on every position of
    the fixture games; an off-by-one in a floor or a saturating add would show."""
    net = Network.load(net_path)
    try:
        use_simd(*simd)
        for board in boards:
            assert net.evaluate(board) == evaluate_quantised(net_arrays, *halfkp_reference(board))
        for board in boards[::50]:
            accumulators = quantised_layers(net_arrays, *halfkp_reference(board))[0]
            assert (net.accumulators(board).ravel() == accumulators).all()
    finally:
        use_simd(True)


def test_searcher_static_eval_is_the_network(net_path: Path, boards: list[chess.Board]) -> None:
    """SearchConfig(eval="nnue") evaluates with the loaded network, from the side to move,
    as it is by default, plus Stockfish 12's tempo bonus with nnue_tempo=28."""
    engine = AlphaBeta(SearchConfig(eval="nnue", nnue_path=str(net_path), hash_mb=1,
                                    nnue_tempo=28))
    net = Network.load(net_path)
    assert NNUE_TEMPO == 0
    plain = AlphaBeta(SearchConfig(eval="nnue", nnue_path=str(net_path), hash_mb=1))
    for board in boards[::97]:
        assert engine.evaluate(board) == net.evaluate(board) + 28
        assert plain.evaluate(board) == net.evaluate(board)
    with pytest.raises(SearchConfigError, match="nnue_tempo"):
        SearchConfig(eval="nnue", nnue_path=str(net_path), nnue_tempo=-1)


def test_hybrid_eval_takes_the_hce_where_material_decides(net_path: Path,
                                                          boards: list[chess.Board]) -> None:
    """eval "nnue-hybrid" is the HCE's score where that is over 400 cp either way (a queen
    up), the network's (plus tempo) elsewhere."""
    hybrid = AlphaBeta(SearchConfig(eval="nnue-hybrid", nnue_path=str(net_path), hash_mb=1))
    hce = AlphaBeta(SearchConfig(eval="hce", hash_mb=1))
    net = Network.load(net_path)
    queen_up = chess.Board("rnb1kbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3")
    sides = {"hce": 0, "net": 0}
    for board in [queen_up, *boards[::97]]:
        static = hce.evaluate(board)
        expected = static if abs(static) > 400 else net.evaluate(board) + NNUE_TEMPO
        sides["hce" if abs(static) > 400 else "net"] += 1
        assert hybrid.evaluate(board) == expected
    assert hce.evaluate(queen_up) > 400 and sides["net"] > 0
    with pytest.raises(SearchConfigError, match="nnue-hybrid"):
        SearchConfig(eval="nnue-hybrid")


# --- the incremental accumulator -------------------------------------------------------------

#: Roots whose searches make every kind of accumulator update: castling both ways
#: (Kiwipete), en passant (legal at the root), promotions with and without capture, king
#: moves with captures, and null moves (quiet middlegames).
SEARCH_ROOTS = [
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "1n2k3/P1P5/8/8/8/8/5p1p/3K2N1 b - - 0 1",
    "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 8",
]


@SIMD
def test_incremental_accumulators_equal_rebuilds_at_every_node(net_path: Path,
                                                               simd: tuple[bool, bool]) -> None:
    """At every evaluated node of searches (make = incremental update from the parent
    entry, unmake = back to the untouched parent entry), both perspectives' accumulators equal
    ones rebuilt from the position; the check itself fails on a wrong en passant update."""
    engine = AlphaBeta(SearchConfig(eval="nnue", nnue_path=str(net_path), hash_mb=1))
    stack = engine._searcher.nnue
    stack.verify = True
    try:
        use_simd(*simd)
        for fen in SEARCH_ROOTS:
            engine.new_game()
            # A random net's quiescence search can explode (333k nodes at depth 1 on
            # Kiwipete): a node budget keeps the test short; aborted iterations still check.
            results = list(engine.iterate(chess.Board(fen), max_depth=6, max_nodes=20000))
            assert results and results[0].pv[0] in chess.Board(fen).legal_moves
    finally:
        use_simd(True)
    assert stack.checked > 5 * 10000
    assert stack.mismatches == 0


@pytest.mark.parametrize("classes", [1, 4])
def test_a_net_with_shared_king_columns_keeps_its_accumulators_through_king_moves(
        tmp_path: Path, net_arrays: NetArrays, classes: int) -> None:
    """A net with the same columns under every king square (what training without king
    features exports), or under every square of a bucket (``--king-buckets 4``: wing, back
    rank or not), is recognised; its incremental accumulators, not rebuilt on king moves
    inside a class, equal rebuilds at every node (castling, king captures, moves across
    buckets included), and its evaluation the reference's."""
    columns = net_arrays["ft_weight"].reshape(64, 641, 256)
    first = [0 if classes == 1 else [0, 4, 8, 12][sq % 8 // 4 + 2 * (sq >= 8)]
             for sq in range(64)]
    arrays = dict(net_arrays, ft_weight=np.ascontiguousarray(columns[first].reshape(-1, 256)))
    path = tmp_path / "shared.npz"
    save_arrays(path, arrays)
    net = Network.load(path)
    assert net.king_classes == classes
    assert net.king_independent == (classes == 1)
    assert Network(net_arrays).king_classes == 64
    for fen in SEARCH_ROOTS:      # it reads each class's first columns: the same values
        board = chess.Board(fen)
        assert net.evaluate(board) == evaluate_quantised(arrays, *halfkp_reference(board))
    engine = AlphaBeta(SearchConfig(eval="nnue", nnue_path=str(path), hash_mb=1))
    stack = engine._searcher.nnue
    stack.verify = True
    for fen in SEARCH_ROOTS:
        engine.new_game()
        results = list(engine.iterate(chess.Board(fen), max_depth=6, max_nodes=20000))
        assert results and results[0].pv[0] in chess.Board(fen).legal_moves
    assert stack.checked > 5 * 10000
    assert stack.mismatches == 0


def test_nnue_search_plays_legal_moves_through_a_game(net_path: Path) -> None:
    """A short self-play game with the random net: every move legal, scores in centipawns."""
    engine = AlphaBeta(SearchConfig(eval="nnue", nnue_path=str(net_path), hash_mb=1))
    board = chess.Board()
    for _ in range(16):
        result = engine.best_move(board, 3)
        assert result.pv[0] in board.legal_moves
        board.push(result.pv[0])


def test_search_config_needs_a_network_for_nnue(tmp_path: Path) -> None:
    """eval "nnue" without a file, or a file without eval "nnue", is refused up front; a
    missing file is refused naming it."""
    with pytest.raises(SearchConfigError, match="nnue_path"):
        SearchConfig(eval="nnue")
    with pytest.raises(SearchConfigError, match="nnue_path"):
        SearchConfig(eval="hce", nnue_path="net.npz")
    missing = tmp_path / "missing.npz"
    with pytest.raises(NnueFileError, match=str(missing)):
        AlphaBeta(SearchConfig(eval="nnue", nnue_path=str(missing)))


# --- deployment over UCI ---------------------------------------------------------------------

def test_uci_engine_plays_with_a_network(net_path: Path) -> None:
    """`python -m engines.uci alphabeta --eval nnue --nnue PATH` searches with the net through
    python-chess: a legal best move and a centipawn score."""
    command = [sys.executable, "-m", "engines.uci", "alphabeta", "--eval", "nnue",
               "--nnue", str(net_path), "--hash", "4"]
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    with chess.engine.SimpleEngine.popen_uci(command, cwd=ROOT, timeout=30) as engine:
        assert engine.options["EvalFile"].default == str(net_path)
        info = engine.analyse(board, chess.engine.Limit(depth=4))
        played = engine.play(board, chess.engine.Limit(depth=4))
    assert played.move in board.legal_moves
    assert info["depth"] == 4 and info["score"].relative.score() is not None
    assert info["pv"][0] in board.legal_moves


def test_uci_command_line_refuses_a_bad_network_file() -> None:
    """--eval nnue with a missing file or with a file that is not a network exits 2 with one
    line naming the option or the file (without --nnue it plays the shipped net: below)."""
    for extra in (["--nnue", "no/such/net.npz"], ["--nnue", str(GAME_FILE)]):
        run = subprocess.run([sys.executable, "-m", "engines.uci", "alphabeta", "--eval",
                              "nnue", *extra], cwd=ROOT, capture_output=True, text=True,
                             input="quit\n", timeout=30)
        assert run.returncode == 2
        assert len(run.stderr.strip().splitlines()) == 1
        assert "--nnue" in run.stderr or str(GAME_FILE) in run.stderr


def test_eval_nnue_alone_plays_the_shipped_net() -> None:
    """Issue 38: `alphabeta --eval nnue` without --nnue or --model plays the net shipped in
    the package (engines/nnue/nets/psq768.npz: a psq768 net, at most 5 MB), whose static
    evaluation the engine reports over UCI as the loaded network's."""
    from engines.nnue import DEFAULT_NET
    from engines.nnue.netfile import load_network_file
    from engines.nnue.network import PerspectiveNetwork

    assert DEFAULT_NET.is_file() and DEFAULT_NET.stat().st_size <= 5_000_000
    meta, _ = load_network_file(DEFAULT_NET)
    assert meta["features"] == "psq768"
    net = Network.load(DEFAULT_NET)
    assert isinstance(net, PerspectiveNetwork)
    command = [sys.executable, "-m", "engines.uci", "alphabeta", "--eval", "nnue", "--hash", "4"]
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    with chess.engine.SimpleEngine.popen_uci(command, cwd=ROOT, timeout=30) as engine:
        assert engine.options["EvalFile"].default == str(DEFAULT_NET)
        played = engine.play(board, chess.engine.Limit(depth=4))
    assert played.move in board.legal_moves
    searcher = AlphaBeta(SearchConfig(eval="nnue", nnue_path=str(DEFAULT_NET), hash_mb=1))
    assert searcher.evaluate(board) == net.evaluate(board)
    # a queen up is good for the side with the queen (scores are the side to move's)
    up = chess.Board("rnb1kbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3")
    down = up.copy()
    down.turn = chess.BLACK
    assert net.evaluate(up) > 300 and net.evaluate(up.mirror()) > 300
    assert net.evaluate(down) < -300
