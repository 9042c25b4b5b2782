"""The feature transformer on the active features only, forward and backward (issue 47), as
``torch.autograd.Function``s over the compiled kernels of ``_sparse.pyx`` (``sparse.h``): what
nnue-pytorch's CUDA kernels do, on a CPU.

- :func:`feature_sums`: one embedding table summed over each row's active features, the
  ``EmbeddingBag(mode="sum", padding_idx=pad)`` of the HalfKP net's tables, with the table's
  gradient scattered into the active rows only (dense, so any optimiser steps it).
- :func:`perspective_net`: the psq768 net 768 -> H x2 -> 1 fused (accumulators, clipped ReLU or
  its square, the output weights of each position's bucket), its output without the bias.

Both run on CPU tensors only (the callers keep PyTorch's own ops on a GPU) and give the same
values and gradients as those ops up to float rounding (tests/pipelines/test_nnue_sparse.py).
"""
from __future__ import annotations

import os
from typing import Any

import torch


#: Threads of the kernels: the trainer's torch threads (``torch.get_num_threads``).
def kernel_threads() -> int:
    return max(1, torch.get_num_threads() or os.cpu_count() or 1)


def _kernels() -> Any:
    import pipelines.kinds.nnue._sparse as kernels  # compiled; loaded when first used

    return kernels


def usable(*tensors: torch.Tensor) -> bool:
    """Whether the kernels can run on these tensors: all on the CPU, columns a multiple of 16."""
    return all(t.device.type == "cpu" for t in tensors) and \
        all(t.shape[-1] % 16 == 0 for t in tensors if t.dtype == torch.float32)


def as_int32(indices: torch.Tensor) -> torch.Tensor:
    return indices if indices.dtype == torch.int32 else indices.to(torch.int32)


class FeatureSums(torch.autograd.Function):
    """rows (m, k) of indices into ``weight`` (r, h) -> (m, h) sums; ``pad`` rows skipped."""

    @staticmethod
    def forward(ctx: Any, indices: torch.Tensor, weight: torch.Tensor,
                pad: int) -> torch.Tensor:
        rows = as_int32(indices).contiguous()
        table = weight.detach().contiguous()
        out = torch.empty(rows.shape[0], table.shape[1], dtype=torch.float32)
        _kernels().feature_sums(rows.numpy(), table.numpy(), pad, out.numpy(), kernel_threads())
        ctx.save_for_backward(rows)
        ctx.shape, ctx.pad = table.shape, pad
        return out

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[None, torch.Tensor | None, None]:
        if not ctx.needs_input_grad[1]:
            return None, None, None
        (rows,) = ctx.saved_tensors
        grad_weight = torch.zeros(ctx.shape, dtype=torch.float32)
        _kernels().feature_sums_backward(rows.numpy(), grad.contiguous().numpy(), ctx.pad,
                                         grad_weight.numpy(), kernel_threads())
        return None, grad_weight, None


def feature_sums(indices: torch.Tensor, weight: torch.Tensor, pad: int) -> torch.Tensor:
    """``EmbeddingBag(mode="sum", padding_idx=pad)`` of ``indices`` (m, k) over ``weight``."""
    return FeatureSums.apply(indices, weight, pad)


class PerspectiveNet(torch.autograd.Function):
    """features (n, 2, k) -> the perspective net's output without its bias (n,)."""

    @staticmethod
    def forward(ctx: Any, features: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                out_weight: torch.Tensor, bucket: torch.Tensor | None, pad: int,
                screlu: bool) -> torch.Tensor:
        rows = as_int32(features).contiguous()
        table, b, wo = (t.detach().contiguous() for t in (weight, bias, out_weight))
        buckets = torch.zeros(0, dtype=torch.int64) if bucket is None \
            else bucket.to(torch.int64).contiguous()
        n = rows.shape[0]
        acc = torch.empty(n, 2, table.shape[1], dtype=torch.float32)
        y = torch.empty(n, dtype=torch.float32)
        _kernels().perspective_forward(rows.numpy(), table.numpy(), b.numpy(), wo.numpy(),
                                       buckets.numpy(), pad, screlu, acc.numpy(), y.numpy(),
                                       kernel_threads())
        ctx.save_for_backward(rows, acc, wo, buckets)
        ctx.table_shape, ctx.pad, ctx.screlu = table.shape, pad, screlu
        return y

    @staticmethod
    def backward(ctx: Any, grad_y: torch.Tensor) -> tuple[Any, ...]:
        rows, acc, wo, buckets = ctx.saved_tensors
        grad_weight = torch.zeros(ctx.table_shape, dtype=torch.float32)
        grad_bias = torch.zeros(ctx.table_shape[1], dtype=torch.float32)
        grad_out = torch.zeros(wo.shape, dtype=torch.float32)
        _kernels().perspective_backward(
            rows.numpy(), acc.numpy(), grad_y.to(torch.float32).contiguous().numpy(),
            wo.numpy(), buckets.numpy(), ctx.pad, ctx.screlu, grad_weight.numpy(),
            grad_bias.numpy(), grad_out.numpy(), kernel_threads())
        return None, grad_weight, grad_bias, grad_out, None, None, None


def perspective_net(features: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                    out_weight: torch.Tensor, pad: int, screlu: bool,
                    bucket: torch.Tensor | None = None) -> torch.Tensor:
    """``sum over p, c of act(bias + sum of weight[features[:, p]])[c] * out_weight[b, p*h + c]``
    for each position, ``b`` its ``bucket`` (or the only row of ``out_weight``)."""
    return PerspectiveNet.apply(
        features, weight, bias, out_weight, bucket, pad, screlu)
