"""The quantised ``chesslab NNUE v1`` export of both architectures, its exact integer
evaluation in numpy and the cross-check against the float model and the engine side's
reference. Split from ``pipelines.kinds.nnue.module``, which re-exports these names.
"""
from __future__ import annotations

import itertools
import json
from typing import Any

import numpy as np
import torch

from engines.nnue.reference import (
    FT_SCALE,
    OUTPUT_CP,
    WEIGHT_SCALE,
    evaluate_quantised,
)

from .data import NnueStream
from .model import ACCUMULATOR, META, NnueNet
from .psq import PsqNet, evaluate_psq_batch


class ExportError(ValueError):
    """The net cannot be written in the integer format: names the layer and the value."""



def quantise(net: NnueNet, calibration: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The arrays of ``chesslab NNUE v1`` from the float model (rounded, range-checked).

    With ``calibration`` (HalfKP features (n, 2, 30) of training positions) each dense
    layer's bias also absorbs its weights' rounding error at the layer's mean input (bias
    correction, Nagel et al. 2019) and half a step, so the contract's floor divisions round
    to nearest. Rounding W1 to 1/64 alone moves a net's scores by about 30 cp on average:
    its weights are mostly below 0.05, a few steps of 1/64; this leaves about 10."""
    def q(tensor: torch.Tensor | np.ndarray, scale: float, dtype: Any, name: str) -> np.ndarray:
        values = tensor.detach().cpu().double().numpy() if isinstance(tensor, torch.Tensor) \
            else tensor
        values = np.round(values * scale)
        info = np.iinfo(dtype)
        if values.size and (values.min() < info.min or values.max() > info.max):
            raise ExportError(f"{name}: values {values.min():.0f}..{values.max():.0f} do not "
                              f"fit {np.dtype(dtype).name}")
        return values.astype(dtype)

    ft_weight = q(net.ft_weight(), FT_SCALE, np.int16, "ft_weight")
    ft_weight[0] = 0  # the padding index is never active
    both = FT_SCALE * WEIGHT_SCALE
    weights = {layer: q(getattr(net, layer).weight, WEIGHT_SCALE,
                        np.int16 if layer == "out" else np.int8, f"{layer}_weight")
               for layer in ("l1", "l2", "out")}
    biases = {layer: getattr(net, layer).bias.detach().cpu().double().numpy()
              for layer in ("l1", "l2", "out")}
    if calibration is not None and len(calibration):
        inputs = mean_layer_inputs(net, calibration)   # in the contract's 0..127 units
        for layer in ("l1", "l2", "out"):
            float_weight = getattr(net, layer).weight.detach().cpu().double().numpy()
            error = weights[layer] / WEIGHT_SCALE - float_weight     # per weight, in units
            # floor(x / 64) then rounds to nearest; the output's floor(out * 600 / both) too.
            half = 0.5 / OUTPUT_CP if layer == "out" else 0.5 / FT_SCALE
            biases[layer] = biases[layer] - error @ inputs[layer] / FT_SCALE + half
    return {
        "meta": np.array(json.dumps(META)),
        "ft_weight": ft_weight,
        "ft_bias": q(net.ft_bias, FT_SCALE, np.int16, "ft_bias"),
        "l1_weight": weights["l1"],
        "l1_bias": q(biases["l1"], both, np.int32, "l1_bias"),
        "l2_weight": weights["l2"],
        "l2_bias": q(biases["l2"], both, np.int32, "l2_bias"),
        "out_weight": weights["out"],
        "out_bias": q(biases["out"], both, np.int32, "out_bias"),
    }



def mean_layer_inputs(net: NnueNet, features: np.ndarray) -> dict[str, np.ndarray]:
    """The float model's mean input of each dense layer over ``features``, in 0..127."""
    layers = ("l1", "l2", "out")
    sums: dict[str, np.ndarray] = {}
    with torch.no_grad():
        for start in range(0, len(features), 4096):
            chunk = torch.from_numpy(features[start:start + 4096].astype(np.int64))
            for layer, x in zip(layers, net.layer_inputs(chunk), strict=True):
                sums[layer] = sums.get(layer, 0) + x.double().sum(dim=0).cpu().numpy()
    return {layer: FT_SCALE * total / len(features) for layer, total in sums.items()}



def evaluate_quantised_batch(net: dict[str, np.ndarray], features: np.ndarray,
                             chunk: int = 1024) -> np.ndarray:
    """The contract's exact integer evaluation of many positions at once (numpy, int64):
    centipawns from the side to move's view. ``features`` (n, 2, 30), padding 0."""
    return np.concatenate([_evaluate_chunk(net, features[i:i + chunk])
                           for i in range(0, len(features), chunk)] or [np.zeros(0, np.int64)])



def _evaluate_chunk(net: dict[str, np.ndarray], features: np.ndarray) -> np.ndarray:
    ft = net["ft_weight"].astype(np.int64)
    active = (features != 0)[..., None]
    acc = (ft[features] * active).sum(axis=2) + net["ft_bias"].astype(np.int64)
    q0 = np.clip(acc.reshape(len(features), 2 * ACCUMULATOR), 0, 127)
    q1 = np.clip(_affine(net, "l1", q0) // WEIGHT_SCALE, 0, 127)
    q2 = np.clip(_affine(net, "l2", q1) // WEIGHT_SCALE, 0, 127)
    out = _affine(net, "out", q2)[:, 0]
    return (out * OUTPUT_CP) // (FT_SCALE * WEIGHT_SCALE)



def _affine(net: dict[str, np.ndarray], layer: str, x: np.ndarray) -> np.ndarray:
    return x @ net[f"{layer}_weight"].astype(np.int64).T + net[f"{layer}_bias"].astype(np.int64)



def cross_check(net: NnueNet | PsqNet, arrays: dict[str, np.ndarray],
                streams: list[NnueStream], positions: int) -> dict[str, Any]:
    """Float model vs the exported integer net on up to ``positions`` warehouse positions
    (validation first, then training), mean and max |cp| gaps, and the spread of the float
    model's scores over them (:func:`saturated`); the batch evaluation vs the engine side's
    one-position reference on the first of them."""
    features = first_features(streams, positions)
    with torch.no_grad():
        net_cpu = net.to("cpu").eval()
        float_cp = net_cpu.centipawns(torch.from_numpy(features.astype(np.int64))).double()
    psq = isinstance(net, PsqNet)
    quantised = evaluate_psq_batch(arrays, features) if psq \
        else evaluate_quantised_batch(arrays, features)
    gaps = np.abs(float_cp.numpy() - quantised)
    report = {"positions": int(len(features)), "float_vs_quantised_mean_cp": float(gaps.mean()),
              "float_vs_quantised_max_cp": float(gaps.max()),
              "float_cp_spread": float(float_cp.max() - float_cp.min())}
    return report | (psq_reference_check(arrays, features, quantised) if psq
                     else reference_check(arrays, features, quantised))



def saturated(check: dict[str, Any]) -> str | None:
    """What to tell the user when a cross-check's net scores every position the same (a
    spread under 1 cp): its hidden units saturated in training, so it learnt nothing."""
    if check["positions"] < 2 or check["float_cp_spread"] >= 1.0:
        return None
    return (f"the trained net scores all {check['positions']} check positions the same "
            f"(spread {check['float_cp_spread']:.2f} cp): its hidden units saturated and it "
            f"learnt nothing; train it again with a lower --learning-rate")


def first_features(streams: list[NnueStream], positions: int) -> np.ndarray:
    taken: list[np.ndarray] = []
    for batch in itertools.chain.from_iterable(streams):
        taken.append(batch.features.numpy())
        if sum(map(len, taken)) >= positions:
            break
    return np.concatenate(taken)[:positions].astype(np.int32)



def reference_check(arrays: dict[str, np.ndarray], features: np.ndarray,
                    quantised: np.ndarray, positions: int = 100) -> dict[str, Any]:
    """Max gap between the batch evaluation and ``engines.nnue.reference.evaluate_quantised``
    (the engine side's one-position reference, ~20 ms each) on the first positions."""
    reference = np.array([
        evaluate_quantised(arrays, [i for i in row[0] if i], [i for i in row[1] if i])
        for row in features[:positions]])
    return {"reference_positions": int(len(reference)),
            "quantised_vs_reference_max_cp": float(np.abs(reference - quantised[:positions]).max())}



def psq_reference_check(arrays: dict[str, np.ndarray], features: np.ndarray,
                        quantised: np.ndarray, positions: int = 100) -> dict[str, Any]:
    """Max gap between the batch evaluation and the engine side's one-position reference
    (``engines.nnue.reference.evaluate_psq_quantised``) on the first positions."""
    from engines.nnue.reference import evaluate_psq_quantised

    activation = json.loads(str(arrays["meta"]))["activation"]
    reference = np.array([
        evaluate_psq_quantised(arrays, activation, [i for i in row[0] if i != 768],
                               [i for i in row[1] if i != 768])
        for row in features[:positions]])
    return {"reference_positions": int(len(reference)),
            "quantised_vs_reference_max_cp": float(np.abs(reference - quantised[:positions]).max())}

