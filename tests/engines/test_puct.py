"""The PUCT engine (issue 13): the 8x8x73 move encoding on real positions, the input planes,
the search's selection rules and mate finding, tree reuse, and the UCI program driven by
python-chess (``--simulations 0`` is the bare network)."""
from __future__ import annotations

import math
import subprocess
import sys
import time
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import numpy as np
import pytest

from engines.puct import C1, C2, PuctConfig, PuctConfigError
from engines.puct.encoding import MOVES, PLANES, index_move, legal_indices, move_index, planes
from engines.puct.network import Architecture, load_network, random_network, save_network
from engines.puct.search import NetEvaluator, Node, Puct, cp_from_q, terminal_value

ROOT = Path(__file__).resolve().parent.parent.parent
GAMES = ROOT / "tests" / "fixtures" / "label_engines" / "selfplay.pgn"
TINY = Architecture(blocks=1, channels=8, value_hidden=16)


def real_positions(limit: int = 600) -> list[chess.Board]:
    boards: list[chess.Board] = []
    with open(GAMES) as handle:
        while (game := chess.pgn.read_game(handle)) is not None and len(boards) < limit:
            board = game.board()
            for move in game.mainline_moves():
                board.push(move)
                boards.append(board.copy(stack=False))
    return boards


def special_positions() -> list[chess.Board]:
    """Under-promotions with captures both ways, castling both sides, en passant, for both
    colours."""
    fens = ["r3k2r/1P4P1/8/3pP3/8/8/1p4p1/R3K2R w KQkq d6 0 1",
            "r3k2r/1P4P1/8/8/3pP3/8/1p4p1/R3K2R b KQkq e3 0 1",
            "1n5n/P1P3P1/8/8/8/8/p1p3p1/1N5N w - - 0 1",
            "1n5n/P1P3P1/8/8/8/8/p1p3p1/1N5N b - - 0 1"]
    return [chess.Board(f) for f in fens]


def test_every_legal_move_has_a_unique_index_and_back() -> None:
    """Every legal move of hundreds of real positions (and under-promotions, castling, en
    passant for both colours) maps to a distinct index in [0, 4672) that decodes to it."""
    boards = real_positions() + special_positions()
    assert len(boards) > 500
    seen_under = seen_castle = 0
    for board in boards:
        moves, indices = legal_indices(board)
        assert len(set(indices.tolist())) == len(moves)
        assert ((0 <= indices) & (indices < MOVES)).all()
        for move, index in zip(moves, indices, strict=True):
            assert index_move(int(index), board) == move
            seen_under += move.promotion in (chess.KNIGHT, chess.BISHOP, chess.ROOK)
            seen_castle += board.is_castling(move)
    assert seen_under >= 24 and seen_castle >= 4


def test_the_encoding_is_the_movers_view() -> None:
    """A move and its mirror played by the other colour share an index; the planes of a
    position and of its colour-mirrored twin agree except the colour plane."""
    board = chess.Board("r3k2r/1P4P1/8/3pP3/8/8/1p4p1/R3K2R w KQkq d6 0 1")
    mirror = board.mirror()
    for move in board.legal_moves:
        flipped = chess.Move(chess.square_mirror(move.from_square),
                             chess.square_mirror(move.to_square), move.promotion)
        assert move_index(move, chess.WHITE) == move_index(flipped, chess.BLACK)
    a, b = planes(board), planes(mirror)
    assert a.shape == (PLANES, 8, 8)
    assert np.array_equal(np.delete(a, 14, 0), np.delete(b, 14, 0))
    assert a[14].all() and not b[14].any()
    assert a[0].sum() == 3 and a[6].sum() == 3          # the mover's and the opponent's pawns
    assert a[0, 6, 1] == 1                              # White's b7 pawn on rank 7, file b


def test_network_shapes_and_artifact(tmp_path: Path) -> None:
    net = random_network(TINY, seed=3)
    x = np.stack([planes(chess.Board())] * 2)
    import torch
    policy, value = net(torch.from_numpy(x))
    assert policy.shape == (2, MOVES) and value.shape == (2,)
    loaded = load_network(save_network(net, tmp_path / "net.pt"))
    policy2, value2 = loaded(torch.from_numpy(x))
    assert torch.allclose(policy, policy2) and torch.allclose(value, value2)


def test_alphazero_and_tjack_formulas_differ_little() -> None:
    """Paper 002's note: at 600 visits the log term is about 0.0301 (E11)."""
    assert math.log((600 + C1 + 1) / C1) == pytest.approx(0.0301, abs=1e-4)
    assert C2 == 1.25
    with pytest.raises(PuctConfigError, match="formula"):
        PuctConfig(formula="uct")


def test_terminal_values() -> None:
    assert terminal_value(chess.Board("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1"), False) == -1.0
    assert terminal_value(chess.Board("7k/8/6QK/8/8/8/8/8 b - - 0 1"), False) == 0.0
    assert terminal_value(chess.Board("7k/8/8/8/8/8/8/K7 w - - 0 1"), False) == 0.0
    assert terminal_value(chess.Board(), False) is None
    assert cp_from_q(0.0) == 0


@pytest.mark.parametrize("config", [PuctConfig(), PuctConfig(formula="tjack"),
                                    PuctConfig.chessbreaker(temperature=0.0)])
def test_search_finds_mate_in_one_with_an_untrained_net(config: PuctConfig) -> None:
    """Terminal backups find the mate whatever the net says (paper 004's conclusion)."""
    board = chess.Board("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1")
    search = Puct(NetEvaluator(random_network(TINY)), config, simulations=300)
    result = list(search.iterate(board))[-1]
    assert result.pv[0] == chess.Move.from_uci("a1a8")
    assert result.score_mate == 1
    assert result.nodes == 300


def test_search_avoids_the_mate_it_would_allow_as_black() -> None:
    """Negamax signs: Black to move must not play into mate in one (the 'min for Black' fix)."""
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 b - - 0 1")   # ...g6/h6 or Kf8 needed
    search = Puct(NetEvaluator(random_network(TINY)), PuctConfig(), simulations=400)
    root = search.search(board, 400)
    board.push(search.choose(root))
    for reply in list(board.legal_moves):
        board.push(reply)
        assert not board.is_checkmate(), reply
        board.pop()


def test_fpu_reduction_scores_unvisited_moves_below_the_nodes_own_value() -> None:
    """Lc0's reduction: the node's Q (net value and backed-up values) minus r times the square
    root of the visited prior mass; the absolute fpu is AlphaZero's draw."""
    moves = list(chess.Board().legal_moves)
    root = Node()
    root.expand(moves, np.full(len(moves), 1 / len(moves)), 0.6)
    root.visits[:3] = [2, 1, 1]
    root.value_sum[:3] = [1.6, 0.9, -0.1]
    own = (0.6 + 1.6 + 0.9 - 0.1) / 5
    q = root.q(0.0, 0.5)
    assert q[:3] == pytest.approx([0.8, 0.9, -0.1])
    assert q[3:] == pytest.approx(own - 0.5 * math.sqrt(3 / len(moves)))
    assert (root.q(-0.2)[3:] == -0.2).all()
    with pytest.raises(PuctConfigError, match="fpu_reduction"):
        PuctConfig(fpu_reduction=-0.1)


def test_batches_and_tree_reuse() -> None:
    """Leaves are evaluated several per call, and the subtree of the played moves is kept."""
    evaluator = NetEvaluator(random_network(TINY))
    search = Puct(evaluator, PuctConfig(batch=8), simulations=64)
    board = chess.Board()
    root = search.search(board, 64)
    assert evaluator.positions > 2 * evaluator.calls
    move = search.choose(root)
    reply_node = root.children[root.moves.index(move)]
    assert reply_node is not None
    board.push(move)
    reply = reply_node.moves[int(np.argmax(reply_node.visits))]
    kept = reply_node.children[reply_node.moves.index(reply)]
    board.push(reply)
    assert search.search(board, 8) is kept and kept is not None


def test_bare_network_plays_the_largest_prior() -> None:
    evaluator = NetEvaluator(random_network(TINY))
    board = chess.Board()
    moves, prior, _ = evaluator([board])[0]
    result = Puct(evaluator, simulations=0).bare(board, 0.0)
    assert result.pv == [moves[int(np.argmax(prior))]] and prior.sum() == pytest.approx(1)


def test_uci_program_plays_with_and_without_search() -> None:
    """python-chess drives ``python -m engines.uci puct``: 32 simulations give 32 nodes; the
    bare network answers after one evaluation."""
    command = [sys.executable, "-m", "engines.uci", "puct", "--net", "random"]
    with chess.engine.SimpleEngine.popen_uci(command + ["--simulations", "0"]) as bare:
        info = bare.analyse(chess.Board(), chess.engine.Limit(nodes=50))
        assert info["nodes"] == 1
    with chess.engine.SimpleEngine.popen_uci(command, timeout=60) as engine:
        board = chess.Board()
        for _ in range(4):
            result = engine.play(board, chess.engine.Limit(nodes=32), info=chess.engine.INFO_ALL)
            assert result.move in board.legal_moves and result.info["nodes"] == 32
            board.push(result.move)


def test_uci_program_uses_the_clock_and_keeps_node_limits() -> None:
    """Issue 32 item 4: under ``go movetime`` or ``wtime/btime`` the search runs on the time
    (it used to stop at --simulations whatever the clock said), ``go nodes`` still caps it
    with or without a clock, and with neither --simulations is the budget."""
    command = [sys.executable, "-m", "engines.uci", "puct", "--net", "random",
               "--simulations", "16"]
    with chess.engine.SimpleEngine.popen_uci(command, timeout=60) as engine:
        board = chess.Board()
        movetime = engine.play(board, chess.engine.Limit(time=1.5), info=chess.engine.INFO_ALL)
        clock = engine.play(board, chess.engine.Limit(white_clock=60, black_clock=60),
                            info=chess.engine.INFO_ALL)
        capped = engine.play(board, chess.engine.Limit(white_clock=60, black_clock=60,
                                                       nodes=40), info=chess.engine.INFO_ALL)
        plain = engine.play(board, chess.engine.Limit(depth=20), info=chess.engine.INFO_ALL)
    assert movetime.info["nodes"] > 16 and clock.info["nodes"] > 16
    assert capped.info["nodes"] == 40 and plain.info["nodes"] == 16
    for result in (movetime, clock, capped, plain):
        assert result.move in board.legal_moves


def test_search_under_a_deadline_runs_past_its_simulations() -> None:
    """The searcher itself: a deadline and no node limit means the time decides (reports
    keep coming past --simulations until the caller stops asking); max_nodes caps it."""
    search = Puct(NetEvaluator(random_network(TINY)), simulations=16)
    reports = search.iterate(chess.Board(), hard_deadline=time.monotonic() + 600)
    nodes = [next(reports).nodes for _ in range(3)]
    assert nodes == [16, 32, 64]
    capped = list(search.iterate(chess.Board(), max_nodes=24,
                                 hard_deadline=time.monotonic() + 600))
    assert capped[-1].nodes == 24
    assert list(search.iterate(chess.Board()))[-1].nodes == 16


def test_a_network_that_cannot_load_stops_the_program_at_start(tmp_path: Path) -> None:
    """Issue 32 item 5: a truncated policy_value.pt (or none at all for --model alone) used to
    start, accept go and never answer; the program now exits 2 at start with one line naming
    the file."""
    good = save_network(random_network(TINY), tmp_path / "policy_value.pt")
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    session = "uci\nisready\nposition startpos\ngo nodes 8\n"
    for argv, needle in (
            (["--net", str(truncated)], f"cannot read policy-value net '{truncated}'"),
            (["--model", "policy_value@1"], "NetFile: no network file ''")):
        done = subprocess.run([sys.executable, "-m", "engines.uci", "puct", *argv],
                              input=session, capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done
        assert len(done.stderr.strip().splitlines()) == 1 and needle in done.stderr, done.stderr
        assert "bestmove" not in done.stdout
    ok = subprocess.run([sys.executable, "-m", "engines.uci", "puct", "--net", str(good)],
                        input=session + "quit\n", capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and "bestmove " in ok.stdout
