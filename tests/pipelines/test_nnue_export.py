"""The NNUE export against hand computation: a tiny hand-built float net, quantised, checked
element by element against round(w * scale) worked out by hand, and its integer output worked
out by hand and compared with all three evaluators of the contract (the batch evaluator, the
engine side's Python reference and the engine's compiled C network).

The position is 4k3/8/8/8/8/8/4P3/4K3: White's HalfKP feature is 2577, Black's 2039 (the
reference's doctest, checked against python-chess in tests/engines/test_nnue.py). Every
weight is chosen so that rounding to nearest and rounding down give different integers
somewhere, negative values included, and no value is a tie.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import numpy as np
import pytest
import torch

from engines.nnue.features import halfkp_batch
from engines.nnue.netfile import random_arrays
from engines.nnue.network import Network
from engines.nnue.reference import evaluate_quantised, halfkp_reference
from pipelines.kinds.nnue.module import (
    ExportError,
    NnueNet,
    evaluate_quantised_batch,
    load_npz,
    mean_layer_inputs,
    quantise,
    reference_check,
    save_npz,
)

FIXTURES = Path(__file__).parents[1] / "fixtures"

WHITE, BLACK = 2577, 2039     # the features of 4k3/8/8/8/8/8/4P3/4K3, per perspective
FEN = "4k3/8/8/8/8/8/4P3/4K3 {} - - 0 1"

# (parameter, index, float value, round(value * scale) by hand); scales: feature transformer
# 127, dense weights 64, dense biases 127 * 64 = 8128. The comments give value * scale.
PARAMETERS: list[tuple[str, tuple[int, ...], float, int]] = [
    ("ft.weight", (WHITE, 0), 0.4, 51),        # 50.8 (floor 50)
    ("ft.weight", (WHITE, 2), -0.3, -38),      # -38.1 (floor -39)
    ("ft.weight", (BLACK, 1), 0.25, 32),       # 31.75 (floor 31)
    ("ft_bias", (0,), 0.1, 13),                # 12.7 (floor 12)
    ("ft_bias", (2,), -0.2, -25),              # -25.4 (floor -26)
    ("l1.weight", (0, 0), 0.7, 45),            # 44.8 (floor 44)
    ("l1.weight", (0, 257), -0.46, -29),       # -29.44 (floor -30)
    ("l1.weight", (1, 256), 1.2, 77),          # 76.8 (floor 76)
    ("l1.bias", (0,), 0.05, 406),              # 406.4
    ("l1.bias", (1,), 0.013, 106),             # 105.664 (floor 105)
    ("l2.weight", (0, 0), 0.9, 58),            # 57.6 (floor 57)
    ("l2.weight", (0, 1), -0.6, -38),          # -38.4 (floor -39)
    ("l2.weight", (3, 1), 1.5, 96),            # 96 exactly
    ("l2.bias", (0,), 0.1, 813),               # 812.8 (floor 812)
    ("l2.bias", (3,), -0.031, -252),           # -251.968
    ("out.weight", (0, 0), 2.3, 147),          # 147.2
    ("out.weight", (0, 3), -1.71, -109),       # -109.44 (floor -110)
    ("out.bias", (0,), 0.2, 1626),             # 1625.6 (floor 1625)
]
ARRAY_OF = {"ft.weight": "ft_weight", "ft_bias": "ft_bias", "l1.weight": "l1_weight",
            "l1.bias": "l1_bias", "l2.weight": "l2_weight", "l2.bias": "l2_bias",
            "out.weight": "out_weight", "out.bias": "out_bias"}


def hand_built_net() -> NnueNet:
    """The float net: every parameter zero but those of PARAMETERS."""
    net = NnueNet()
    with torch.no_grad():
        for parameter in net.parameters():
            parameter.zero_()
        for name, index, value, _ in PARAMETERS:
            net.get_parameter(name)[index] = value
    return net


def features(turn: str) -> np.ndarray:
    return halfkp_batch([FEN.format(turn)])


def test_quantised_arrays_are_each_weight_rounded_to_nearest() -> None:
    """Every array of the export holds round(w * scale) element by element (hand values
    above), zeros elsewhere, in the contract's dtypes: rounding down, or a wrong scale, fails
    here on the first weight."""
    arrays = quantise(hand_built_net())
    expected = {name: np.zeros_like(array) for name, array in arrays.items() if name != "meta"}
    for name, index, _, value in PARAMETERS:
        expected[ARRAY_OF[name]][index] = value
    for name, array in expected.items():
        assert arrays[name].dtype == array.dtype, name
        assert arrays[name].shape == array.shape, name
        different = np.argwhere(arrays[name] != array)
        assert len(different) == 0, (name, different[:3].tolist(),
                                     [arrays[name][tuple(i)] for i in different[:3]])
    assert {name: array.dtype.name for name, array in arrays.items() if name != "meta"} == {
        "ft_weight": "int16", "ft_bias": "int16", "l1_weight": "int8", "l1_bias": "int32",
        "l2_weight": "int8", "l2_bias": "int32", "out_weight": "int16", "out_bias": "int32"}


# White to move, by hand (floor divisions; clip to 0..127 before each dense layer):
#   accumulators: White's [51 + 13, 0, -38 - 25 -> 0], Black's [0 + 13, 32, -25 -> 0]
#   x0 = White's then Black's: x0[0] = 64, x0[256] = 13, x0[257] = 32
#   h1[0] = (45 * 64 - 29 * 32 + 406) // 64 = 2358 // 64 = 36
#   h1[1] = (77 * 13 + 106) // 64 = 1107 // 64 = 17
#   h2[0] = (58 * 36 - 38 * 17 + 813) // 64 = 2255 // 64 = 35
#   h2[3] = (96 * 17 - 252) // 64 = 1380 // 64 = 21
#   out = 147 * 35 - 109 * 21 + 1626 = 4482; 4482 * 600 // 8128 = 330 cp
# Black to move (Black's accumulator first):
#   x0[0] = 13, x0[1] = 32, x0[256] = 64
#   h1[0] = (45 * 13 + 406) // 64 = 991 // 64 = 15
#   h1[1] = (77 * 64 + 106) // 64 = 5034 // 64 = 78
#   h2[0] = (58 * 15 - 38 * 78 + 813) // 64 = -1281 // 64 = -21 -> clipped to 0
#   h2[3] = (96 * 78 - 252) // 64 = 7236 // 64 = 113
#   out = -109 * 113 + 1626 = -10691; -10691 * 600 // 8128 = -790 cp (rounded down)
BY_HAND = {"w": 330, "b": -790}


@pytest.mark.parametrize("turn", ["w", "b"])
def test_the_three_evaluators_give_the_hand_computed_score(turn: str) -> None:
    """The batch evaluator (training side), the Python reference and the compiled network
    (engine side) all give the hand-computed centipawns of the quantised hand-built net."""
    arrays = quantise(hand_built_net())
    board = chess.Board(FEN.format(turn))
    batch = evaluate_quantised_batch(arrays, features(turn))
    assert batch.dtype == np.int64 and batch.tolist() == [BY_HAND[turn]]
    assert evaluate_quantised(arrays, *halfkp_reference(board)) == BY_HAND[turn]
    assert Network(arrays).evaluate(board) == BY_HAND[turn]


def test_bias_correction_by_hand() -> None:
    """Calibrated on the White-to-move position, each dense bias absorbs its weights'
    rounding error at the float model's input there, plus half a step (0.5 / 127 for the
    hidden layers, 0.5 / 600 for the output), before rounding to 1/8128:

    float inputs: x0[0] = 0.4 + 0.1 = 0.5, x0[256] = 0.1, x0[257] = 0.25;
      x1[0] = 0.7 * 0.5 - 0.46 * 0.25 + 0.05 = 0.285, x1[1] = 1.2 * 0.1 + 0.013 = 0.133;
      x2[0] = 0.9 * 0.285 - 0.6 * 0.133 + 0.1 = 0.2767, x2[3] = 1.5 * 0.133 - 0.031 = 0.1685
    errors (q / 64 - w): l1 0.003125 (0,0), 0.006875 (0,257), 0.003125 (1,256);
      l2 0.00625 (0,0), 0.00625 (0,1), 0 (3,1); out -0.003125 (0,0), 0.006875 (0,3)
    l1[0] = 8128 * (0.05 - 0.003125 * 0.5 - 0.006875 * 0.25 + 0.5 / 127) = 411.73 -> 412
    l1[1] = 8128 * (0.013 - 0.003125 * 0.1 + 0.5 / 127) = 135.12 -> 135
    l2[0] = 8128 * (0.1 - 0.00625 * (0.285 + 0.133) + 0.5 / 127) = 823.57 -> 824
    l2[3] = 8128 * (-0.031 + 0.5 / 127) = -219.97 -> -220
    out = 8128 * (0.2 + 0.003125 * 0.2767 - 0.006875 * 0.1685 + 0.5 / 600) = 1629.99 -> 1630
    every other hidden bias: 8128 * 0.5 / 127 = 32. The weights are unchanged."""
    net = hand_built_net()
    plain = quantise(net)
    corrected = quantise(net, features("w"))
    l1_bias = np.full(32, 32, np.int32)
    l1_bias[:2] = [412, 135]
    l2_bias = np.full(32, 32, np.int32)
    l2_bias[[0, 3]] = [824, -220]
    assert corrected["l1_bias"].tolist() == l1_bias.tolist()
    assert corrected["l2_bias"].tolist() == l2_bias.tolist()
    assert corrected["out_bias"].tolist() == [1630]
    for name in ("ft_weight", "ft_bias", "l1_weight", "l2_weight", "out_weight"):
        assert np.array_equal(corrected[name], plain[name]), name


def test_a_weight_beyond_its_integer_type_names_the_array() -> None:
    """A dense weight of 2.0 is 128 after * 64: beyond int8, the export refuses, naming the
    array and the range (the clip during training keeps weights inside 127 / 64); -2.0 is
    -128, the least int8, and exports."""
    net = hand_built_net()
    with torch.no_grad():
        net.l2.weight[5, 6] = 2.0
    with pytest.raises(ExportError, match=r"^l2_weight: values -38\.\.128 do not fit int8$"):
        quantise(net)
    with torch.no_grad():
        net.l2.weight[5, 6] = -2.02   # -129.28
    with pytest.raises(ExportError, match=r"^l2_weight: values -129\.\.96 do not fit int8$"):
        quantise(net)
    with torch.no_grad():
        net.l2.weight[5, 6] = -2.0
        net.l2.weight[5, 7] = 127 / 64
    assert quantise(net)["l2_weight"][5, 6:8].tolist() == [-128, 127]   # int8's two ends


OVERFLOWS = [   # (parameter, index, value, the array named, its dtype)
    ("ft.weight", (100, 3), 300.0, "ft_weight", "int16"),     # 38,100 > 32,767
    ("ft_bias", (3,), -300.0, "ft_bias", "int16"),
    ("l1.weight", (3, 3), 2.5, "l1_weight", "int8"),
    ("l1.bias", (3,), 3e5, "l1_bias", "int32"),              # 2.4e9 > 2.1e9
    ("l2.bias", (3,), -3e5, "l2_bias", "int32"),
    ("out.weight", (0, 3), 600.0, "out_weight", "int16"),    # 38,400
    ("out.bias", (0,), 3e5, "out_bias", "int32"),
]


@pytest.mark.parametrize("name,index,value,array,dtype", OVERFLOWS)
def test_an_overflowing_array_is_named(name: str, index: tuple[int, ...], value: float,
                                       array: str, dtype: str) -> None:
    net = hand_built_net()
    with torch.no_grad():
        net.get_parameter(name)[index] = value
    with pytest.raises(ExportError, match=rf"^{array}: values -?\d+\.\.-?\d+ do not fit "
                                          rf"{dtype}$"):
        quantise(net)


def test_the_padding_row_is_zero_and_the_next_row_is_kept() -> None:
    """Feature index 0 pads the feature lists: its exported row is zero whatever the float
    model holds there; row 1 (a real feature) is exported like any other."""
    net = hand_built_net()
    with torch.no_grad():
        net.ft.weight[0, 5] = 0.3
        net.ft.weight[1, 5] = 0.3
    exported = quantise(net)["ft_weight"]
    assert (exported[0] == 0).all() and exported[1, 5] == 38     # 0.3 * 127 = 38.1


def test_meta_names_the_format() -> None:
    meta: dict[str, Any] = json.loads(str(quantise(hand_built_net())["meta"]))
    assert meta == {"format": "chesslab-nnue", "version": 1, "features": "halfkp",
                    "sizes": [41024, 256, 32, 32, 1], "ft_scale": 127, "weight_scale": 64,
                    "output_cp": 600}


def fixture_positions(count: int) -> list[chess.Board]:
    """The first ``count`` positions of the Opera game and Stockfish self-play fixture."""
    boards: list[chess.Board] = []
    with open(FIXTURES / "label_engines" / "selfplay.pgn", encoding="utf-8") as handle:
        while len(boards) < count and (game := chess.pgn.read_game(handle)) is not None:
            board = game.board()
            for move in game.mainline_moves():
                board.push(move)
                boards.append(board.copy())
    return boards[:count]


def test_batch_evaluation_equals_the_reference_in_any_chunking() -> None:
    """A random quantised net whose layers clip below 0 and above 127 (netfile.random_arrays)
    on 60 positions: the batch evaluator equals the engine side's Python reference position by
    position, in chunks of 1024, 7 (eight full chunks and a rest) or 1; no positions, no
    scores."""
    arrays = random_arrays(3)
    boards = fixture_positions(60)
    reference = [evaluate_quantised(arrays, *halfkp_reference(board)) for board in boards]
    batch = halfkp_batch([board.fen() for board in boards])
    for chunk in (1024, 7, 1):
        scores = evaluate_quantised_batch(arrays, batch, chunk=chunk)
        assert scores.dtype == np.int64 and scores.tolist() == reference
    empty = evaluate_quantised_batch(arrays, batch[:0])
    assert empty.dtype == np.int64 and empty.shape == (0,)
    assert len(set(reference)) > 30


def test_reference_check_reports_the_gap() -> None:
    """reference_check compares the batch scores with the reference on the first positions:
    0 for the evaluator's own scores, 7 when one of them is 7 off."""
    arrays = quantise(hand_built_net())
    both = np.concatenate([features("w"), features("b"), features("w")])
    scores = evaluate_quantised_batch(arrays, both)
    assert scores.tolist() == [BY_HAND["w"], BY_HAND["b"], BY_HAND["w"]]
    assert reference_check(arrays, both, scores) == {
        "reference_positions": 3, "quantised_vs_reference_max_cp": 0.0}
    off = scores.copy()
    off[1] += 7
    assert reference_check(arrays, both, off, positions=2) == {
        "reference_positions": 2, "quantised_vs_reference_max_cp": 7.0}
    many = np.repeat(features("b"), 130, axis=0)   # by default the first 100 (20 ms each)
    assert reference_check(arrays, many, evaluate_quantised_batch(arrays, many)) == {
        "reference_positions": 100, "quantised_vs_reference_max_cp": 0.0}


def test_bias_correction_means_over_every_calibration_position() -> None:
    """Calibrating on 4,097 copies of the position (more than one 4,096-position chunk) gives
    the same biases as calibrating on one: the mean input is the same; mixing in the
    Black-to-move position moves them."""
    net = hand_built_net()
    once = quantise(net, features("w"))
    many = quantise(net, np.repeat(features("w"), 4097, axis=0))
    for name in ("l1_bias", "l2_bias", "out_bias"):
        assert many[name].tolist() == once[name].tolist(), name
    mixed = quantise(net, np.concatenate([features("w"), features("b")]))
    assert mixed["l1_bias"].tolist() != once["l1_bias"].tolist()


def test_saved_nets_load_back_exactly_and_leave_no_temporary(tmp_path: Path) -> None:
    arrays = quantise(hand_built_net())
    path = save_npz(arrays, tmp_path / "net.npz")
    assert path == tmp_path / "net.npz" and sorted(p.name for p in tmp_path.iterdir()) == [
        "net.npz"]
    loaded = load_npz(path)
    assert set(loaded) == set(arrays)
    for name, array in arrays.items():
        assert loaded[name].dtype == array.dtype and np.array_equal(loaded[name], array), name
    assert Network(loaded).evaluate(chess.Board(FEN.format("w"))) == BY_HAND["w"]


def test_mean_layer_inputs_weighs_every_position_once() -> None:
    """4,096 bare-kings positions and the White-to-move one at index 4,096 (the first of the
    second 4,096-position chunk): each layer's mean input is (4096 kings + 1 other) / 4097
    of the two positions' own inputs, each taken alone."""
    net = hand_built_net()
    kings = halfkp_batch(["4k3/8/8/8/8/8/8/4K3 w - - 0 1"])
    assert not kings.any()   # no features: only the biases reach the layers
    alone = {"kings": mean_layer_inputs(net, kings), "w": mean_layer_inputs(net, features("w"))}
    mixed = mean_layer_inputs(net, np.concatenate([np.repeat(kings, 4096, axis=0),
                                                   features("w")]))
    for layer in ("l1", "l2", "out"):
        expected = (4096 * alone["kings"][layer] + alone["w"][layer]) / 4097
        assert mixed[layer] == pytest.approx(expected, rel=1e-9, abs=1e-12), layer
    assert alone["w"]["l1"][0] == pytest.approx(127 * 0.5)   # x0[0] = 0.4 + 0.1, in 0..127
