"""The compiled core (engines.core) against python-chess: perft, legal moves, keys, SAN, FEN,
rules, SEE, replay_san and random playouts."""
from __future__ import annotations

import random
from pathlib import Path

import chess
import chess.pgn
import chess.polyglot
import pytest

from engines.core import (
    CoreBoard,
    IllegalMoveError,
    InvalidFenError,
    normalise_fen,
    perft_count,
    perft_divide,
    position_key,
    random_playouts,
    replay_san,
)

FIXTURES = Path(__file__).parent.parent / "fixtures"
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"


def perft_cases(max_depth: int) -> list[tuple[str, int, int]]:
    cases = []
    for line in (FIXTURES / "perft.epd").read_text().splitlines():
        board, ops = chess.Board.from_epd(line)
        for depth in range(1, max_depth + 1):
            cases.append((board.fen(), depth, int(ops[f"D{depth}"])))
    return cases


@pytest.mark.parametrize("fen,depth,expected", perft_cases(4))
def test_perft_standard_positions(fen: str, depth: int, expected: int) -> None:
    """The six chessprogramming-wiki perft positions to depth 4: castling through attacked
    squares, en passant pins (position 3), promotions with capture (4, 5) all count."""
    assert perft_count(fen, depth) == expected


@pytest.mark.slow
@pytest.mark.parametrize("fen,depth,expected", [c for c in perft_cases(5) if c[1] == 5])
def test_perft_depth_5(fen: str, depth: int, expected: int) -> None:
    """Depth 5 of the same positions (193,690,690 leaves for Kiwipete)."""
    assert perft_count(fen, depth) == expected


def test_perft_divide_sums_and_matches_python_chess() -> None:
    """--divide: per-move counts equal python-chess's perft of each child."""
    counts = perft_divide(KIWIPETE, 2)
    board = chess.Board(KIWIPETE)
    assert len(counts) == 48 and sum(counts.values()) == 2039
    for move in board.legal_moves:
        board.push(move)
        assert counts[move.uci()] == board.legal_moves.count()
        board.pop()


def random_game_boards(seed: int, games: int, max_plies: int) -> list[chess.Board]:
    """Positions from uniformly random games (promotions, under-promotions, en passant and
    castling all come up), each with its move stack."""
    rng = random.Random(seed)
    boards = []
    for _ in range(games):
        board = chess.Board()
        while not board.is_game_over() and board.ply() < max_plies:
            boards.append(board.copy())
            board.push(rng.choice(list(board.legal_moves)))
        boards.append(board.copy())
    return boards


@pytest.fixture(scope="module")
def random_boards() -> list[chess.Board]:
    return random_game_boards(seed=7, games=24, max_plies=260)


def test_legal_moves_keys_and_fens_match_python_chess(random_boards: list[chess.Board]) -> None:
    """Legal move sets, Polyglot keys (en passant file hashed only with a capturer beside the
    pawn), full FEN and EPD (ep written only when legal) on thousands of random positions."""
    for board in random_boards:
        core = CoreBoard(board.fen())
        assert sorted(m.uci() for m in core.legal_moves()) == sorted(
            m.uci() for m in board.legal_moves), board.fen()
        assert core.key == chess.polyglot.zobrist_hash(board), board.fen()
        assert core.fen() == board.fen()
        assert core.epd() == board.epd()


def test_rules_match_python_chess(random_boards: list[chess.Board]) -> None:
    """Check, mate, stalemate, insufficient material, repetitions and game end agree."""
    ended = 0
    for board in random_boards:
        core = CoreBoard(board)
        assert core.is_check() == board.is_check(), board.fen()
        assert core.is_checkmate() == board.is_checkmate(), board.fen()
        assert core.is_stalemate() == board.is_stalemate(), board.fen()
        assert core.is_insufficient_material() == board.is_insufficient_material(), board.fen()
        assert core.is_repetition(3) == board.is_repetition(3), board.fen()
        assert core.is_game_over() == board.is_game_over(), board.fen()
        ended += board.is_game_over()
    assert ended >= 5  # some games reached their end within the ply cap


def test_san_writing_and_parsing_match_python_chess(random_boards: list[chess.Board]) -> None:
    """Every legal move's SAN (disambiguation by file, rank or both, =Q, +, #) is written as
    python-chess writes it and parses back to the same move."""
    for board in random_boards[::4]:
        core = CoreBoard(board.fen())
        for move in board.legal_moves:
            san = board.san(move)
            assert core.san(move) == san, (board.fen(), move)
            assert core.parse_san(san) == move


@pytest.mark.parametrize("fen,san,uci", [
    (chess.STARTING_FEN, "Nf3", "g1f3"),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "0-0", "e1g1"),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "O-O-O+", "e1c1"),
    ("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "0-0-0", "e8c8"),
    ("8/4P3/8/8/8/k7/8/K7 w - - 0 1", "e8=Q", "e7e8q"),
    ("8/4P3/8/8/8/k7/8/K7 w - - 0 1", "e8Q", "e7e8q"),
    ("8/4P3/8/8/8/k7/8/K7 w - - 0 1", "e8=N!?", "e7e8n"),
    (chess.STARTING_FEN, "Ngf3", "g1f3"),
    (chess.STARTING_FEN, "Ng1f3", "g1f3"),
    (chess.STARTING_FEN, "e4!", "e2e4"),
    (chess.STARTING_FEN, "e2e4", "e2e4"),
    ("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3", "exf6", "e5f6"),
])
def test_lenient_san_parse(fen: str, san: str, uci: str) -> None:
    """SAN as found in real PGNs: zeros for castling, annotations, missing '=', needless
    disambiguation, coordinates; each agrees with python-chess."""
    assert CoreBoard(fen).parse_san(san).uci() == uci
    assert chess.Board(fen).parse_san(san.rstrip("!?")).uci() == uci


@pytest.mark.parametrize("san,reason", [
    ("Nf9", "invalid san"), ("Ke2", "illegal san"), ("exd5", "illegal san"), ("Q", "invalid san"),
])
def test_bad_san_is_rejected_with_its_text(san: str, reason: str) -> None:
    with pytest.raises(IllegalMoveError, match=reason) as info:
        CoreBoard().parse_san(san)
    assert repr(san) in str(info.value)


def test_ambiguous_san() -> None:
    with pytest.raises(IllegalMoveError, match="ambiguous san 'Nd2'"):
        CoreBoard("4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1").parse_san("Nd2")
    # A needless file plus rank still parses.
    assert CoreBoard("4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1").parse_san("Nb1d2").uci() == "b1d2"


def test_replay_san_matches_python_chess_on_real_games() -> None:
    """replay_san over Stockfish games (tests/fixtures/core_games.pgn): keys, EPDs, UCI and
    canonical SAN for every ply, plies + 1 positions."""
    with open(FIXTURES / "core_games.pgn") as handle:
        games = []
        while (game := chess.pgn.read_game(handle)) is not None:
            games.append(game)
    assert len(games) == 10
    for game in games:
        board = game.board()
        sans = []
        for move in game.mainline_moves():
            sans.append(board.san(move))
            board.push(move)
        keys, fens, ucis, sans_out, error = replay_san(None, sans)
        assert error is None
        assert len(keys) == len(fens) == len(sans) + 1
        assert sans_out == sans
        board = game.board()
        for ply, move in enumerate(game.mainline_moves()):
            assert keys[ply] == chess.polyglot.zobrist_hash(board)
            assert fens[ply] == board.epd()
            assert ucis[ply] == move.uci()
            board.push(move)
        assert keys[-1] == chess.polyglot.zobrist_hash(board) and fens[-1] == board.epd()


def test_replay_san_stops_at_the_first_bad_move() -> None:
    """The error names the ply and the FEN; what came before is kept."""
    keys, fens, ucis, sans, error = replay_san(None, ["e4", "e5", "Nf9", "Nc6"])
    assert ucis == ["e2e4", "e7e5"] and sans == ["e4", "e5"] and len(keys) == len(fens) == 3
    assert error == (2, "invalid san 'Nf9' in "
                        "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2")
    _, _, _, _, error = replay_san(None, ["e4", "e5", "Ke3"])
    assert error is not None and error[0] == 2 and error[1].startswith("illegal san 'Ke3'")


def test_replay_san_from_fen_with_en_passant_and_mate() -> None:
    """ep written in the FEN only while the capture is legal; '#' on mate."""
    fen = "rnbqkbnr/ppp1pppp/8/8/3pP3/5P2/PPPP2PP/RNBQKBNR b KQkq e3 0 3"
    keys, fens, ucis, sans, error = replay_san(fen, ["dxe3", "g4", "e5", "Nc3", "Qh4"])
    assert error is None
    assert sans == ["dxe3", "g4", "e5", "Nc3", "Qh4+"]
    assert ucis == ["d4e3", "g2g4", "e7e5", "b1c3", "d8h4"]
    assert fens[0].endswith(" b KQkq e3") and fens[2].endswith(" b KQkq -")
    board = chess.Board(fen)
    for san in sans:
        board.push_san(san)
    assert keys[-1] == chess.polyglot.zobrist_hash(board)
    assert replay_san(None, ["f3", "e5", "g4", "Qh4"])[3] == ["f3", "e5", "g4", "Qh4#"]


def test_replay_san_null_moves_as_python_chess() -> None:
    """PGN null moves ("--", "Z0") pass the turn, as python-chess pushes Move.null()."""
    keys, fens, ucis, sans, error = replay_san(None, ["e4", "--", "d4", "Z0", "d5"])
    board = chess.Board()
    for san in ["e4", "--", "d4", "--", "d5"]:
        board.push_san(san)
    assert error is None and ucis[1] == ucis[3] == "0000" and sans[3] == "--"
    assert keys[-1] == chess.polyglot.zobrist_hash(board) and fens[-1] == board.epd()


def test_position_key_and_normalise_fen() -> None:
    """Known Polyglot keys (from the Polyglot book format description) and FEN clean-up:
    castling rights without their rook are dropped, an ep square without a capturer too."""
    assert position_key(None) == 0x463B96181691FC9C
    assert position_key("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3") \
        == 0x22A48B5A8E47FF78
    assert normalise_fen("4k3/8/8/8/8/8/8/4K2R w KQkq e3 0 1") == "4k3/8/8/8/8/8/8/4K2R w K -"
    with pytest.raises(InvalidFenError, match="'8/8/8 w - -'"):
        normalise_fen("8/8/8 w - -")
    with pytest.raises(InvalidFenError, match="one king"):
        position_key("8/8/8/8/8/8/8/8 w - - 0 1")


@pytest.mark.parametrize("fen,uci,value", [
    ("1k1r4/1pp4p/p7/4p3/8/P5P1/1PP4P/2K1R3 w - - 0 1", "e1e5", 100),
    ("1k1r3q/1ppn3p/p4b2/4p3/8/P2N2P1/1PP1R1BP/2K1Q3 w - - 0 1", "d3e5", -220),
    (chess.STARTING_FEN, "e2e4", 0),
    ("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1", "e4d5", 100),
    ("4k3/8/2p5/3p4/4P3/8/8/4K3 w - - 0 1", "e4d5", 0),
    ("4k3/8/2p5/3q4/4P3/8/8/4K3 w - - 0 1", "e4d5", 800),
])
def test_see(fen: str, uci: str, value: int) -> None:
    """Static exchange: the chessprogramming-wiki examples (Rxe5 wins a pawn; Nxe5 loses the
    knight for a pawn) and simple pawn trades, with values P 100 N 320 B 330 R 500 Q 900."""
    assert CoreBoard(fen).see(chess.Move.from_uci(uci)) == value


def test_push_pop_restores_the_position() -> None:
    board = CoreBoard(KIWIPETE)
    before = (board.fen(), board.key)
    for move in board.legal_moves():
        board.push(move)
        assert board.pop() == move
        assert (board.fen(), board.key) == before
    with pytest.raises(IndexError):
        board.pop()


def test_random_playouts_end_like_python_chess_games() -> None:
    """Playouts are deterministic per seed, and their mix of results is that of random games:
    mostly draws (paper 001 notes mates are rare in random play)."""
    first = random_playouts(200, seed=3)
    assert first == random_playouts(200, seed=3)
    assert first["white_wins"] + first["black_wins"] + first["draws"] == 200
    assert 0.5 < first["draws"] / 200 < 0.95
    assert 100 < first["plies"] / 200 < 500
    mate = random_playouts(5, seed=1, fen="7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")
    assert mate == {"games": 5, "plies": 0, "white_wins": 0, "black_wins": 0, "draws": 5}
