"""The Monte-Carlo engine of paper 001: the solver's exact mate distances on verified mate
problems, every switch changing what playouts and the tree do, and the UCI program driven
by python-chess as a GUI would.

The mate problems (``fixtures/mcts/mates.epd``) are verified here before they are used:
3-piece positions against the Gaviota tables (depth to mate in plies = 2 dm - 1), the others
against Stockfish at depth 40 (Stockfish at depth 20 overstates two of them by a move).
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import chess
import chess.engine
import chess.gaviota
import pytest
from engines.mcts.tree import (
    cp_from_win_rate,
    legal_moves_by_filter,
    mate_in_one_check,
    move_scores_check,
    playout_batch,
)

from engines.mcts import (
    GAVIOTA_DIR,
    MctsConfig,
    MctsConfigError,
    MonteCarlo,
    gaviota_prober,
    mate_moves,
)
from engines.mcts.program import MctsOptions, config_from_values, mcts_spec
from engines.uci import UciError

ROOT = Path(__file__).resolve().parents[2]
MATES = ROOT / "tests" / "fixtures" / "mcts" / "mates.epd"
STOCKFISH = shutil.which("stockfish") or "/usr/games/stockfish"
#: The solver's iteration bound for the fixture problems.
SOLVER_ITERATIONS = 300_000
KQK = "8/8/8/4k3/8/8/8/4K2Q w - - 0 1"


def mate_problems() -> list[tuple[chess.Board, int]]:
    problems = []
    for line in MATES.read_text().splitlines():
        board, ops = chess.Board.from_epd(line)
        problems.append((board, int(ops["dm"])))
    return problems


@pytest.fixture(scope="module")
def verified_mates() -> list[tuple[chess.Board, int]]:
    """Every fixture distance checked by a tablebase or Stockfish before any test uses it."""
    problems = mate_problems()
    tables = chess.gaviota.open_tablebase(str(GAVIOTA_DIR))
    stockfish = chess.engine.SimpleEngine.popen_uci(STOCKFISH)
    try:
        for board, dm in problems:
            if chess.popcount(board.occupied) <= 3:
                assert tables.probe_dtm(board) == 2 * dm - 1, board.fen()
            else:
                score = stockfish.analyse(board, chess.engine.Limit(depth=40))["score"]
                assert score.relative.mate() == dm, board.fen()
    finally:
        stockfish.quit()
        tables.close()
    return problems


def solve(board: chess.Board, variant: str = "solver", seed: int = 1) -> tuple[int | None, int]:
    """The first proven mate (moves) and the iterations it took, within the bound."""
    engine = MonteCarlo(MctsConfig.variant(variant, seed=seed))
    result = None
    for result in engine.iterate(board, max_depth=64, max_nodes=SOLVER_ITERATIONS):
        if result.score_mate is not None:
            break
    assert result is not None
    return result.score_mate, result.nodes


@pytest.mark.parametrize("dm", [1, 2, 3])
def test_solver_reports_the_exact_mate_distance(verified_mates: list, dm: int) -> None:
    """Algorithm 4.1 with explicit proven flags: every problem of this distance is proved
    with exactly the verified distance (a literal port confuses proven and unproven)."""
    for board, distance in verified_mates:
        if distance == dm:
            mate, iterations = solve(board)
            assert mate == dm, (board.fen(), mate, iterations)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["solver", "combined"])
def test_solver_proves_mates_in_four_and_five(verified_mates: list, variant: str) -> None:
    """Combined skips 3-piece roots: its tablebase cut-off scores every playout there a win,
    so UCT gets no hint toward the quickest mate (a KRK mate in 5 is not proved in 300,000
    iterations)."""
    for board, distance in verified_mates:
        if variant == "combined" and chess.popcount(board.occupied) <= 3:
            continue
        if distance >= 4:
            mate, iterations = solve(board, variant)
            assert mate == distance, (board.fen(), mate, iterations)


def test_solver_plays_the_mate_and_scores_the_mated_side() -> None:
    """The mate in one is played and announced; a root whose every move allows a mate in
    one is proved lost: ``score mate -1`` for the side to move (Gaviota: DTM -2 plies)."""
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")
    result = MonteCarlo(MctsConfig.variant("solver", seed=3)).search(board, 5000)
    assert result.pv[0] == chess.Move.from_uci("d1d8") and result.score_mate == 1
    lost = chess.Board("7k/8/6K1/8/8/8/2Q5/8 b - - 0 1")
    with chess.gaviota.open_tablebase(str(GAVIOTA_DIR)) as tables:
        assert tables.probe_dtm(lost) == -2
    result = MonteCarlo(MctsConfig.variant("solver", seed=1)).search(lost, 20000)
    assert result.score_mate == -1 and result.nodes < 100


def test_plain_uct_without_solver_gives_no_mate_score() -> None:
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")
    result = MonteCarlo(MctsConfig.tiny()).search(board, 3000)
    assert result.score_mate is None and result.pv[0].uci() == "d1d8"
    assert result.nodes == 3000 and result.score_cp is not None and result.score_cp > 300


def test_same_seed_same_search() -> None:
    board = chess.Board()
    first = MonteCarlo(MctsConfig(seed=7)).search(board, 2000)
    second = MonteCarlo(MctsConfig(seed=7)).search(board, 2000)
    assert [line.visits for line in first.lines] == [line.visits for line in second.lines]
    assert first.pv == second.pv and first.playouts == 2000


# --------------------------------------------------------------------------------------------
# Every switch changes behaviour measurably (fixed seeds, so the counts are exact reruns)
# --------------------------------------------------------------------------------------------

def playouts(fen: str | None = None, games: int = 400, **switches: object) -> dict:
    return playout_batch(MctsConfig(seed=11, **switches), games, fen)


def test_playout_move_filter_accepts_exactly_the_legal_moves() -> None:
    """Random playouts pick a pseudo-legal move and keep it when the king is safe: that is
    uniform over the legal moves only if the filter passes exactly python-chess' legal
    moves (perft positions with castling, en passant pins and promotions; random games)."""
    import random

    fens = [line.split(";")[0].strip() for line in
            (ROOT / "tests" / "fixtures" / "perft.epd").read_text().splitlines() if line.strip()]
    rng = random.Random(3)
    for _ in range(30):
        board = chess.Board()
        while not board.is_game_over() and board.ply() < 120:
            fens.append(board.fen())
            board.push(rng.choice(list(board.legal_moves)))
    for fen in fens:
        board = chess.Board(fen)
        assert legal_moves_by_filter(fen) == sorted(m.uci() for m in board.legal_moves), fen


def playout_positions(seed: int, games: int, max_plies: int = 300) -> list[str]:
    """Every position of ``games`` random games (python-chess), plus the perft fixtures."""
    import random

    fens = [line.split(";")[0].strip() for line in
            (ROOT / "tests" / "fixtures" / "perft.epd").read_text().splitlines() if line.strip()]
    rng = random.Random(seed)
    for _ in range(games):
        board = chess.Board()
        while not board.is_game_over() and board.ply() < max_plies:
            fens.append(board.fen())
            board.push(rng.choice(list(board.legal_moves)))
    return fens


def test_fast_decisive_check_finds_a_mate_in_one_exactly_when_one_exists() -> None:
    """Decisive moves test check by table lookup and mate by the first legal evasion: a mate
    in one is found iff python-chess has one, and it is the core generator's first one
    (random games, where mates in one are common, and the perft positions)."""
    fens = playout_positions(seed=7, games=60) + [
        "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1",           # back-rank mate
        "6rk/7p/8/8/3N4/8/1B6/K6Q w - - 0 1",               # discovered and direct checks
        "4k3/8/8/8/8/8/3PPP2/r3K2R w K - 0 1",             # castling is no escape
        "k7/1p6/8/2P5/8/8/8/K6R b - - 0 1",                 # en passant setups
        "4k3/8/8/3pP3/8/8/8/4K2Q w - d6 0 1",
    ]
    mates = 0
    for fen in fens:
        board = chess.Board(fen)
        reference = set()
        for move in board.legal_moves:
            board.push(move)
            if board.is_checkmate():
                reference.add(move.uci())
            board.pop()
        fast, full = mate_in_one_check(fen)
        assert fast == full, fen
        assert (fast is not None) == bool(reference) and (fast is None or fast in reference), fen
        mates += bool(reference)
    assert len(fens) > 5000 and mates > 50


def test_heavy_playout_move_scores_match_the_core_see_and_evaluation() -> None:
    """The heavy playouts score moves by a SEE that answers quiet moves to safe squares
    without the swap list and by PeSTO sums updated per move: the same numbers as the core's
    see() and -evaluate() of every child."""
    for fen in playout_positions(seed=9, games=15)[::3]:
        for move, (fast_see, see, fast_eval, evaluation) in move_scores_check(fen).items():
            assert (fast_see, fast_eval) == (see, evaluation), (fen, move)


def test_random_playouts_end_by_the_rules() -> None:
    """Algorithm 7.4: every playout ends in mate or a draw; the 2-fold repetition and the
    fifty-move rule shorten them, threefold and no fifty-move rule lengthen them."""
    base = playouts()
    assert base["white_wins"] + base["black_wins"] + base["draws"] == 400
    threefold = playouts(repetition=3)
    no_fifty = playouts(repetition=3, fifty=False, max_playout_plies=5000)
    assert threefold["plies"] > base["plies"] and no_fifty["plies"] > threefold["plies"]
    assert base["capped"] == 0 and playouts(max_playout_plies=20)["capped"] == 400


def test_heavy_playouts_and_decisive_moves_change_results() -> None:
    """SEE-greedy playouts keep material, so fewer end in bare-king draws; decisive moves
    turn playouts into more wins; epsilon 1 is plain random play (same seed, same games)."""
    base = playouts()
    assert playouts(hp="see", epsilon=1.0) == base
    see = playouts(hp="see", epsilon=0.4)
    evaluation = playouts(hp="eval", epsilon=0.4, games=100)
    decisive = playouts(decisive=True)
    assert see != base and evaluation != playouts(games=100)
    assert decisive["white_wins"] + decisive["black_wins"] > \
        base["white_wins"] + base["black_wins"]
    assert playouts(hp="see", epsilon=0.4, tie_break="first") != see


def test_tablebase_cut_off_ends_kqk_playouts_with_the_table_result() -> None:
    """GTB: a KQK playout is cut at once and scored a White win; without it, random play
    mates rarely (the thesis' 0.5%)."""
    with_tb = playout_batch(MctsConfig(seed=1, tb_pieces=3), 200, KQK)
    assert with_tb["white_wins"] == 200 and with_tb["plies"] == 0
    without = playout_batch(MctsConfig(seed=1), 200, KQK)
    assert without["white_wins"] < 20 and without["plies"] > 200 * 20


def test_draw_discarding_replays_drawn_playouts() -> None:
    """Réti variant: with 6 tries a node is a draw only when all six playouts drew."""
    board = chess.Board(KQK)
    plain = MonteCarlo(MctsConfig(seed=2)).search(board, 2000)
    discard = MonteCarlo(MctsConfig(seed=2, draw_retries=6)).search(board, 2000)
    assert discard.playouts > 3 * plain.playouts and plain.playouts <= 2000
    assert discard.lines[0].win_rate > plain.lines[0].win_rate


def test_progressive_bias_steers_visits_to_the_capture() -> None:
    """Formula 4: a hanging queen's capture gets more visits with k_bias than without."""
    board = chess.Board("4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1")
    capture = chess.Move.from_uci("d2d5")

    def visits(k_bias: float) -> int:
        result = MonteCarlo(MctsConfig(seed=5, k_bias=k_bias)).search(board, 600, 64)
        return next(line.visits for line in result.lines if line.pv[0] == capture)

    assert visits(0.05) > visits(0.0)


def test_config_rejects_bad_switches() -> None:
    with pytest.raises(MctsConfigError, match="epsilon"):
        MctsConfig(epsilon=1.5)
    with pytest.raises(MctsConfigError, match="tb_pieces"):
        MctsConfig(tb_pieces=4)
    with pytest.raises(MctsConfigError, match="unknown variant 'mcc2'"):
        MctsConfig.variant("mcc2")
    with pytest.raises(FileNotFoundError, match="no Gaviota tables"):
        gaviota_prober(ROOT / "tests")
    assert MctsConfig.variant("combined").k_bias == 0.001
    with pytest.raises(MctsConfigError, match="hash_mb"):
        MctsConfig(hash_mb=0)


def test_a_full_tree_ends_the_search_within_its_memory() -> None:
    """hash_mb bounds the tree: at 1 MB (18,724 nodes of 56 bytes) a search asked for
    1,000,000 iterations stops when the tree is full, with a move; 64 MB goes on."""
    full = 2**20 // 56
    small = MonteCarlo(MctsConfig(seed=1, hash_mb=1)).search(chess.Board(), 1_000_000)
    assert 1000 < small.nodes < full and full - 40 < small.tree_nodes <= full
    assert small.pv and chess.Board().is_legal(small.pv[0])
    large = MonteCarlo(MctsConfig(seed=1, hash_mb=64)).search(chess.Board(), 20_000)
    assert large.nodes == 20_000 and large.tree_nodes > full


def test_scores_from_win_rates_and_mate_distances() -> None:
    assert (cp_from_win_rate(0.5), cp_from_win_rate(0.9), cp_from_win_rate(0.1)) == (0, 382, -382)
    assert [mate_moves(p) for p in (1, 3, 9, -2, -4)] == [1, 2, 5, -1, -2]


def test_command_line_switches_override_the_variant() -> None:
    config = MctsOptions(variant="combined", epsilon=0.2, solver="off").config()
    assert (config.hp, config.epsilon, config.solver, config.decisive) == ("see", 0.2, False,
                                                                           True)
    with pytest.raises(ValueError, match="epsilon"):
        MctsOptions(variant="hp-see", epsilon=3.0)
    values = {o.name: o.default for o in mcts_spec(MctsOptions(variant="hp-see")).options}
    assert config_from_values(values).hp == "see"
    with pytest.raises(UciError, match="Epsilon"):
        config_from_values({**values, "Epsilon": "lots"})


# --------------------------------------------------------------------------------------------
# The UCI program, as a GUI drives it
# --------------------------------------------------------------------------------------------

@pytest.fixture()
def combined() -> chess.engine.SimpleEngine:
    engine = chess.engine.SimpleEngine.popen_uci(
        [sys.executable, "-m", "engines.uci", "mcts", "--variant", "combined", "--seed", "1"],
        cwd=ROOT, timeout=20)
    yield engine
    engine.quit()


def test_uci_program_reports_pv_visits_and_score(combined: chess.engine.SimpleEngine) -> None:
    assert combined.id["name"] == "chesslab mcts (combined)"
    assert combined.options["HeavyPlayouts"].default == "see"
    info = combined.analyse(chess.Board(), chess.engine.Limit(nodes=3000))
    assert info["nodes"] == 3000 and len(info["pv"]) >= 2
    assert info["score"].relative.score() is not None
    assert chess.Board().is_legal(info["pv"][0])


def test_uci_program_announces_a_proven_mate(combined: chess.engine.SimpleEngine) -> None:
    board = chess.Board("k7/2R5/8/8/1K6/8/8/8 w - - 0 1")
    info = combined.analyse(board, chess.engine.Limit(nodes=200_000))
    assert info["score"].relative.mate() == 3
    result = combined.play(board, chess.engine.Limit(time=0.3))
    assert result.move in board.legal_moves


def test_uci_program_plays_a_legal_game_on_time(combined: chess.engine.SimpleEngine) -> None:
    board = chess.Board()
    while not board.is_game_over() and board.ply() < 16:
        board.push(combined.play(board, chess.engine.Limit(time=0.05)).move)
    assert board.ply() == 16 or board.is_game_over()


def test_uci_setoption_changes_the_switches(combined: chess.engine.SimpleEngine) -> None:
    assert combined.options["Hash"].default == 256
    combined.configure({"Solver": "off", "HeavyPlayouts": "none", "Hash": 64})
    info = combined.analyse(chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"),
                            chess.engine.Limit(nodes=2000))
    assert info["score"].relative.mate() is None and info["pv"][0].uci() == "d1d8"
