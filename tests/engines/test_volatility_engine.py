"""Paper 003's deployment: the 774 inputs, the numpy evaluation of the exported nets,
algorithm 2 and the clock variant as iteration policies, and both programs (alpha-beta and
stockfish-volatility) driven over UCI by python-chess as real processes."""
from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import chess
import chess.engine
import numpy as np
import pytest
import torch

from engines.registry import own_identity, parse_engine
from engines.timeman import Budget, GoLimits, plan
from engines.uci import UciEngine, load_spec, program_names
from engines.volatility.features import INPUT_SETS, INPUTS, FeatureError, features
from engines.volatility.model import FORMAT, VolatilityModelError, artifact_path, load_model
from engines.volatility.policy import RandomStability, VolatilityPolicy
from pipelines.kinds.volatility.module import ConvNet, DenseNet, export_arrays
from pipelines.train.artifacts import save_npz

SUITE = Path(__file__).resolve().parent.parent / "fixtures" / "epd" / "bratko_kopec.epd"
BOARDS = [chess.Board.from_epd(line)[0] for line in SUITE.read_text().splitlines()
          if line.strip() and not line.startswith("#")]


def reference_features(board: chess.Board, delta: float, pv_changed: bool) -> np.ndarray:
    """The 774 inputs from python-chess: the side to move's view by mirroring."""
    seen = board if board.turn == chess.WHITE else board.mirror()
    x = np.zeros(INPUTS, dtype=np.float32)
    for square, piece in seen.piece_map().items():
        plane = piece.piece_type - 1 + (0 if piece.color == chess.WHITE else 6)
        x[plane * 64 + square] = 1
    x[768:772] = [seen.has_kingside_castling_rights(chess.WHITE),
                  seen.has_queenside_castling_rights(chess.WHITE),
                  seen.has_kingside_castling_rights(chess.BLACK),
                  seen.has_queenside_castling_rights(chess.BLACK)]
    x[772:] = [pv_changed, delta]
    return x


def test_features_match_python_chess() -> None:
    boards = BOARDS + [chess.Board(), chess.Board("r3k2r/8/8/8/8/8/8/R3K2R b Qk - 0 1")]
    deltas = [(-1) ** i * 7 * i for i in range(len(boards))]
    flags = [i % 3 == 0 for i in range(len(boards))]
    x = features([b.fen() for b in boards], deltas, flags)
    assert len(boards) > 5 and any(b.turn == chess.BLACK for b in boards)
    for row, board, delta, flag in zip(x, boards, deltas, flags, strict=True):
        assert np.array_equal(row, reference_features(board, delta, flag)), board.fen()
    mirrored = features([boards[-1].mirror().fen()], [0], [False])
    assert np.array_equal(mirrored[0, :772], x[-1, :772])   # colour flip = same inputs
    assert features(["8/8/8/8/8/8/8/K6k w - - 0 1"], [99999], [False])[0, 773] == 2000
    with pytest.raises(FeatureError, match="'8/8 x'"):
        features(["8/8 x"], [0], [False])


def write_net(net: torch.nn.Module, arch: str, path: Path, threshold: float = 0.5,
              inputs: int = INPUTS) -> Path:
    meta = {"format": FORMAT, "version": 1, "arch": arch, "width": 0, "inputs": inputs,
            "delta_scale": 0.01, "beta": 18.0, "target_fpr": 0.005, "threshold": threshold}
    return save_npz({"meta": np.array(json.dumps(meta)), **export_arrays(net)}, path)


@pytest.mark.parametrize("arch", ["dense", "conv"])
@pytest.mark.parametrize("input_set", ["paper", "value"])
def test_numpy_model_is_the_torch_model(arch: str, input_set: str, tmp_path: Path) -> None:
    """The engines' numpy forward pass (batch norm folded) equals the trained torch net, with
    the paper's inputs and with V6 added (both scaled to pawns on both sides)."""
    torch.manual_seed(1)
    inputs = INPUT_SETS[input_set]
    net = DenseNet(16, inputs) if arch == "dense" else ConvNet(6, inputs)
    net.train()
    n = len(BOARDS) * 4
    fens, deltas = [b.fen() for b in BOARDS * 4], np.arange(n) * 13 - 60
    changed, values = [i % 2 == 0 for i in range(n)], np.arange(n) * 9 - 150
    x = torch.from_numpy(features(fens, deltas, changed,
                                  values if input_set == "value" else None))
    assert x.shape == (n, inputs)
    for _ in range(3):     # gives batch norm running statistics that are not the defaults
        net(x)
    net.eval()
    model = load_model(str(write_net(net, arch, tmp_path / "v.npz", inputs=inputs)))
    with torch.no_grad():
        expected = torch.sigmoid(net(x)).double().numpy()
    assert np.abs(model.predict(x.numpy()) - expected).max() < 1e-6
    assert expected.std() > 1e-3
    one = model.stability(BOARDS[1], int(deltas[1]), changed[1], int(values[1]))
    assert one == pytest.approx(expected[1], abs=1e-6)
    if input_set == "value":
        with pytest.raises(VolatilityModelError, match="reads V6"):
            model.predict_positions(fens, deltas, changed)
        with pytest.raises(VolatilityModelError, match="775 inputs.*774"):
            model.predict(features(fens, deltas, changed))


def test_engines_take_the_file_of_a_model_name(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Engines never look for ``volatility@N`` under a home (issue 34): a version comes with
    its file (``--volatility-file``, which chesslab resolves through the registry), a file
    that is not there or not a net is named."""
    from engines.uci import UciError
    from engines.volatility.options import check_volatility

    monkeypatch.setenv("CHESSLAB_HOME", str(tmp_path))      # read by no engine
    folder = tmp_path / "models" / "volatility" / "3"
    folder.mkdir(parents=True)
    net = write_net(DenseNet(4, INPUTS), "dense", folder / "volatility.npz")
    with pytest.raises(UciError, match="'volatility@3' names a model: give its file with "
                                       "--volatility-file"):
        check_volatility("volatility@3")
    assert check_volatility("volatility@3", str(net)) == "volatility@3"
    with pytest.raises(VolatilityModelError, match="'volatility@3'.*volatility/4"):
        artifact_path(folder.parent / "4" / "volatility.npz", "volatility@3")
    assert artifact_path(net) == net
    assert load_model(net, "volatility@3").arch == "dense"
    (tmp_path / "bad.npz").write_bytes(b"not a net")
    with pytest.raises(VolatilityModelError, match="bad.npz"):
        load_model(str(tmp_path / "bad.npz"))


def iteration(depth: int, cp: int, move: str, time_s: float = 0.0) -> SimpleNamespace:
    return SimpleNamespace(depth=depth, score_cp=cp, score_mate=None, time_s=time_s,
                           pv=[chess.Move.from_uci(move)])


class Recorder:
    def __init__(self, answer: float) -> None:
        self.answer, self.calls = answer, []

    def __call__(self, board: chess.Board, delta: int, pv_changed: bool, value: int) -> float:
        self.calls.append((delta, pv_changed, value))
        return self.answer


def test_algorithm_2_asks_once_after_depth_6() -> None:
    """Fixed depth 7: the net is asked only after depth 6, with V6 - V5, the 5 -> 6 move
    change and V6, and "stable" (> threshold) stops there."""
    budget = plan(GoLimits(depth=7), chess.WHITE)
    runs = [iteration(d, 10 * d, "e2e4") for d in range(1, 6)] + [iteration(6, 37, "d2d4")]
    for answer, expected in ((0.9, False), (0.7, True)):
        net = Recorder(answer)
        policy = VolatilityPolicy(net, threshold=0.76)
        decisions = [policy.should_continue(chess.Board(), runs[:n], budget, 0.0)
                     for n in range(1, 7)]
        assert decisions == [True] * 5 + [expected]
        assert net.calls == [(37 - 50, True, 37)] and policy.stops == (not expected)


def test_clock_variant_stops_after_min_depth_once_time_is_spent() -> None:
    budget = Budget(soft_s=1.0, hard_s=3.0)
    net = Recorder(0.99)
    policy = VolatilityPolicy(net, threshold=0.5, min_depth=5, min_soft_fraction=0.25)
    runs = [iteration(d, 5, "e2e4", 0.01 * d) for d in range(1, 8)]
    board = chess.Board()
    assert policy.should_continue(board, runs[:4], budget, 0.5)       # depth 4 < 5
    assert policy.should_continue(board, runs[:5], budget, 0.1)       # 0.1 s < 0.25 s
    assert not policy.should_continue(board, runs[:5], budget, 0.3)   # stable: stop
    assert net.calls == [(0, False, 5)]
    movetime = plan(GoLimits(movetime=1000), chess.WHITE)               # time not banked
    assert policy.should_continue(board, runs[:6], movetime, 0.5)
    never = VolatilityPolicy(Recorder(0.1), threshold=0.5)
    assert never.should_continue(board, runs[:6], budget, 0.3)


def test_random_chooser_rate() -> None:
    chooser = RandomStability(0.2, seed=7)
    share = np.mean([chooser(chess.Board(), 0, False, 0) for _ in range(5000)])
    assert share == pytest.approx(0.2, abs=0.02)


@pytest.fixture
def always(tmp_path: Path) -> dict[str, str]:
    """Two dense nets whose output ignores the inputs: always stable, never stable."""
    paths = {}
    for name, bias in (("stable", 10.0), ("unstable", -10.0)):
        net = DenseNet(4, INPUTS)
        with torch.no_grad():
            net.out.weight.zero_()
            net.out.bias.fill_(bias)
        paths[name] = str(write_net(net, "dense", tmp_path / f"{name}.npz", threshold=0.76))
    return paths


def last_depth(command: list[str], limit: chess.engine.Limit,
               board: chess.Board | None = None) -> tuple[int, chess.Move]:
    with chess.engine.SimpleEngine.popen_uci(command, timeout=60) as engine:
        result = engine.play(board or chess.Board(BOARDS[0].fen()), limit,
                             info=chess.engine.INFO_ALL)
        assert result.move is not None
        return int(result.info["depth"]), result.move


def test_alphabeta_algorithm_2_over_uci(always: dict[str, str]) -> None:
    """`alphabeta --volatility MODEL` under go depth 5 stops after depth 4 when the net says
    stable and searches depth 5 otherwise; random:1 always stops, random:0 never."""
    base = [sys.executable, "-m", "engines.uci", "alphabeta", "--volatility"]
    depth = chess.engine.Limit(depth=5)
    assert last_depth(base + [always["stable"]], depth)[0] == 4
    assert last_depth(base + [always["unstable"]], depth)[0] == 5
    assert last_depth(base + ["random:1"], depth)[0] == 4
    assert last_depth(base + ["random:0"], depth)[0] == 5


def test_stockfish_volatility_program(always: dict[str, str], stockfish_path: str) -> None:
    """The program is discovered; under go depth 7 Stockfish is stopped after depth 6 when
    the net says stable, and its move is Stockfish's depth-6 move."""
    assert "stockfish-volatility" in program_names()
    base = [sys.executable, "-m", "engines.uci", "stockfish-volatility", "--volatility"]
    assert last_depth(base + [always["stable"]], chess.engine.Limit(depth=7))[0] == 6
    assert last_depth(base + [always["unstable"]], chess.engine.Limit(depth=7))[0] == 7
    board = chess.Board(BOARDS[0].fen())
    with chess.engine.SimpleEngine.popen_uci(stockfish_path) as stockfish:
        plain = stockfish.play(board, chess.engine.Limit(depth=6)).move
    assert last_depth(base + [always["stable"]], chess.engine.Limit(depth=7), board)[1] == plain


def test_stockfish_volatility_program_exits_on_quit(stockfish_path: str) -> None:
    """The wrapper's Stockfish is closed on ``quit``: before, python-chess' reader thread of
    that child kept the program (and the pytest process that built one in-process) alive
    after ``quit``, forever."""
    import subprocess

    command = [sys.executable, "-m", "engines.uci", "stockfish-volatility",
               "--stockfish", stockfish_path]
    done = subprocess.run(command, input="uci\nisready\nposition startpos\ngo depth 5\n"
                          "quit\n", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "bestmove" in done.stdout


def test_stockfish_volatility_clock_variant(always: dict[str, str], stockfish_path: str) -> None:
    """Under a real clock the net is asked once depth 5 is done and a quarter of the soft
    time is spent; "stable" ends the search there (one early stop), "unstable" never."""
    for name, stops in (("stable", 1), ("unstable", 0)):
        out = io.StringIO()
        front = UciEngine(load_spec("stockfish-volatility", ["--volatility", always[name]]),
                          output=out)
        front.handle("isready")      # Stockfish starts here, before the clock runs
        front.handle("position startpos moves e2e4")
        front.handle("go wtime 20000 btime 20000 winc 100 binc 100")
        deadline = time.monotonic() + 30
        while "bestmove" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.02)
        front.handle("quit")
        policy = front.time_manager.policy
        assert isinstance(policy, VolatilityPolicy)
        assert "bestmove" in out.getvalue() and policy.stops == stops
        assert policy.asked >= 1


def test_volatility_is_part_of_the_identity(always: dict[str, str]) -> None:
    plain = own_identity(parse_engine("alphabeta"))
    net = own_identity(parse_engine(f"alphabeta:volatility={always['stable']}"))
    assert net.options["Volatility"] == always["stable"] and net.engine_id != plain.engine_id
    with pytest.raises(ValueError, match="random:x"):
        own_identity(parse_engine("alphabeta:volatility=random:x"))


def test_missing_model_is_a_one_line_start_error(tmp_path: Path) -> None:
    """A model that is not there stops the program at start (exit 2), never a silent plain
    search: a version without its file, a file that is not there."""
    import os
    import subprocess

    def start(*options: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "engines.uci", "alphabeta", *options],
                              capture_output=True, text=True, timeout=60,
                              env={**os.environ, "CHESSLAB_HOME": str(tmp_path)})

    done = start("--volatility", "volatility@9")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "engines.uci: error: Volatility 'volatility@9' names a model: give its file with "
        "--volatility-file (VolatilityFile; chesslab engine, tournament and evaluate resolve "
        "the model to it)"]
    missing = tmp_path / "models" / "volatility" / "9" / "volatility.npz"
    done = start("--volatility", "volatility@9", "--volatility-file", str(missing))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"engines.uci: error: volatility model 'volatility@9': no volatility net file "
        f"'{missing}'"]


def test_a_damaged_model_stops_the_program_at_start(always: dict[str, str],
                                                     tmp_path: Path) -> None:
    """Issue 32 item 5: a truncated volatility net, or one whose arrays do not fit its
    architecture, used to start, accept go and never answer; both programs now exit 2 at start
    with one line naming the model."""
    import subprocess

    good = Path(always["stable"])
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with np.load(good, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    arrays["hidden1.weight"] = arrays["hidden1.weight"][:, :2]   # no longer fits hidden0
    misshapen = tmp_path / "misshapen.npz"
    np.savez(misshapen, **arrays)
    with pytest.raises(VolatilityModelError, match="damaged"):
        load_model(str(misshapen))
    session = "uci\nisready\nposition startpos\ngo depth 3\n"
    for path in (truncated, misshapen):
        done = subprocess.run([sys.executable, "-m", "engines.uci", "alphabeta",
                               "--volatility", str(path)], input=session, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 2, done
        assert done.stderr.strip().splitlines() == [done.stderr.strip()]
        assert f"volatility model '{path}'" in done.stderr and "bestmove" not in done.stdout
