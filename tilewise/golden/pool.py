"""Golden average pooling and MEAN in TFLite semantics (mode "tflite"), and max pooling (every mode).

avg_pool (reference_integer_ops::AveragePool, kernels/internal/reference/integer_ops/pooling.h): the
window is clipped to the input (padded taps are not counted), the int32 sum of the valid taps is
divided by their count rounding half away from zero ((acc ± count/2) / count with C truncation), then
clamped to [qmin, qmax]. No rescaling: input and output share quantization.
max_pool: the maximum over the valid taps, clamped to [qmin, qmax] — what LiteRT's MaxPool and
onnxruntime's MaxPool on integer tensors both compute, so it serves every mode.
mean (LiteRT reduce.cc, EvalMean for kReference -> reference_ops::QuantizedMeanOrSum): int32 sum over
the axes minus n·zp_in, scaled by the (multiplier, shift) of s_in/s_out with 1/n folded into the
multiplier (shift' = min(floor(log2 n), 32, 31 + shift), multiplier' = (multiplier << shift') / n),
plus zp_out, saturated to the type. The same kernel defines the layer op global_avg_pool (a mean
over H and W).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..ir.graph import Graph, Node
from ..ir.ops import Op
from ..ir.params import MaxPoolParams, TfliteAvgPoolParams, TfliteMeanParams
from ..ir.tensor import dtype_range
from .fixedpoint import multiply_by_quantized_multiplier, wrap32
from .registry import kernel


def _windows(x: np.ndarray, kernel_hw: tuple[int, int], stride: tuple[int, int],
             pads: tuple[int, int, int, int], fill: int) -> tuple[np.ndarray, np.ndarray]:
    """Windows [N, OY, OX, C, KY, KX] of the padded input and the matching validity mask."""
    t, l, b, r = pads
    ky, kx = kernel_hw
    sy, sx = stride
    xp = np.pad(x, ((0, 0), (t, b), (l, r), (0, 0)), constant_values=fill)
    valid = np.pad(np.ones(x.shape[1:3], dtype=bool), ((t, b), (l, r)), constant_values=False)
    win = sliding_window_view(xp, (ky, kx), axis=(1, 2))[:, ::sy, ::sx]
    vwin = sliding_window_view(valid, (ky, kx))[::sy, ::sx]
    return win, vwin


@kernel(Op.AVG_POOL, mode="tflite")
def avg_pool(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    a = node.params
    assert isinstance(a, TfliteAvgPoolParams)
    x = np.asarray(args[0], dtype=np.int64)
    win, vwin = _windows(x, a.kernel, a.stride, a.pads, 0)
    acc = win.sum(axis=(-2, -1))
    count = vwin.sum(axis=(-2, -1)).astype(np.int64)[None, :, :, None]
    half = count // 2
    num = np.where(acc > 0, acc + half, acc - half)
    q = np.abs(num) // count
    out = np.where(num < 0, -q, q)
    return np.clip(out, a.qmin, a.qmax)


@kernel(Op.MAX_POOL)
def max_pool(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    a = node.params
    assert isinstance(a, MaxPoolParams)
    x = np.asarray(args[0], dtype=np.int64)
    win, _ = _windows(x, a.kernel, a.stride, a.pads, np.iinfo(np.int64).min)
    return np.clip(win.max(axis=(-2, -1)), a.qmin, a.qmax)


def _mean_scale(multiplier: int, shift: int, n: int) -> tuple[int, int]:
    """Fold 1/n into (multiplier, shift) as QuantizedMeanOrSum does."""
    s = n.bit_length() - 1  # 63 - CountLeadingZeros(uint64 n)
    s = min(s, 32, 31 + shift)
    return int((multiplier << s) // n), shift - s


@kernel(Op.MEAN, Op.GLOBAL_AVG_POOL, mode="tflite")
def mean(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    a = node.params
    assert isinstance(a, TfliteMeanParams)
    x = np.asarray(args[0], dtype=np.int64)
    tin, tout = graph.tensors[node.inputs[0]], graph.tensors[node.outputs[0]]
    zp_in = tin.quant.zp if tin.quant else 0
    zp_out = tout.quant.zp if tout.quant else 0
    axes = tuple(a.axes)
    n = int(np.prod([x.shape[i] for i in axes]))
    total = wrap32(x.sum(axis=axes, keepdims=a.keepdims))
    m, s = _mean_scale(int(a.multiplier), int(a.shift), n)
    shifted = wrap32(total - zp_in * n)
    out = multiply_by_quantized_multiplier(shifted, m, s) + zp_out
    lo, hi = dtype_range(tout.dtype)
    return np.clip(out, lo, hi)
