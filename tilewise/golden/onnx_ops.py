"""Golden kernels of the ``onnx`` mode: what onnxruntime's CPU QLinear* kernels compute, bit for bit.

conv2d and fully_connected need nothing here: golden/linear.py accumulates exactly and
golden/requant.py applies the ``onnx`` Requant (MlasRequantizeOutput: float32 acc·scale, clamp,
round half to even, + zero point). The other quantized operators of onnxruntime (1.31, x86-64 MLAS,
default session options) each compute in float32 in their own way, and those exact float32 steps are
reproduced below. The float32 constants each operator derives from its scales are computed once by
the ONNX frontend (frontend/onnx_qparams.py) and stored in the node's Onnx* parameters
(ir/params.py), as onnxruntime's kernels derive them at setup; the kernels here only apply them.

| IR op (mode onnx) | onnxruntime kernel | arithmetic (float32 unless said) |
|---|---|---|
| add | QLinearAdd, MlasQLinearAdd AVX2 | r = fma(a, ratio_a, fma(b, ratio_b, fixed)); y = sat(rint(r)) |
| avg_pool | QLinearAveragePool (qlinear_pool.cc) | Σ in window order of s_x·(x−zp_x), / count, y = sat(rint(v/s_y + |
|          |                                      | zp_y))                                                           |
| mean, global_avg_pool | QLinearGlobalAveragePool,    | int Σ(x) − zp_x·N, then the onnx Requant |
|                       | MlasQLinearGlobalAveragePool |                                          |
| softmax | QLinearSoftmax (qlinear_softmax.cc) | 256-entry exp table, sequential Σ, sat(rint(t·⌊1/s_y⌋/Σ) + zp_y) |
| concat | QLinearConcat (lookup tables) | per input: copy, or sat(rint(s_x·(x−zp_x)/s_y) + zp_y) |
| quantize | DequantizeLinear→QuantizeLinear | sat(rint(s_x·(x−zp_x)/s_y) + zp_y), then [qmin, |
|          | (MlasQuantizeLinear)            | qmax]                                           |

"fma" is a fused multiply-add (one rounding), as the compiler contracts the AVX2 intrinsics of
qladd_avx2.cpp; it is evaluated in float64 (exact product of an 8-bit integer and a float32) and
rounded once to float32. Which operand of an add is "a" follows onnxruntime's broadcaster: the
full-size operand, input 0 when both are (OnnxAddParams.a_index).

clamp is mode-independent (ClampParams, registered for every mode here, beside the clamp helper);
max_pool (golden/pool.py), reshape and transpose (golden/shape_ops.py) serve every mode too.
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Graph, Node
from ..ir.ops import Op
from ..ir.params import (
    ClampParams,
    ConcatParams,
    OnnxAddParams,
    OnnxAvgPoolParams,
    OnnxMeanParams,
    OnnxQuantizeParams,
    OnnxSoftmaxParams,
)
from ..ir.tensor import dtype_range
from .conv import pad_nhwc
from .fixedpoint import INT32_MIN, wrap32
from .registry import kernel
from .requant import apply_requant

f32 = np.float32


def fma32(a: np.ndarray, b: np.ndarray | float, c: np.ndarray | float) -> np.ndarray:
    """float32 fused multiply-add a·b + c with a single rounding (a holds small integers)."""
    return (np.asarray(a, dtype=np.float64) * np.float64(f32(b))
            + np.asarray(c, dtype=np.float32).astype(np.float64)).astype(np.float32)


def _saturate(v: np.ndarray, dtype: str) -> np.ndarray:
    lo, hi = dtype_range(dtype)
    return np.clip(v, lo, hi)


def _out_dtype(graph: Graph, node: Node) -> str:
    return graph.tensors[node.outputs[0]].dtype


def _clamp(node: Node, graph: Graph, y: np.ndarray, qmin: int, qmax: int) -> np.ndarray:
    """y clamped to [qmin, qmax] within the output type's range."""
    lo, hi = dtype_range(_out_dtype(graph, node))
    return np.clip(y, max(lo, int(qmin)), min(hi, int(qmax)))


def requantize_values(x: np.ndarray, x_scale: float, x_zp: int, y_scale: float, y_zp: int, dtype: str) -> np.ndarray:
    """MlasQuantizeLinear(DequantizeLinear(x)): sat(rint(f32(s_x·(x−zp_x)) / s_y) + zp_y)."""
    deq = f32(x_scale) * (np.asarray(x, dtype=np.int64) - int(x_zp)).astype(np.float32)
    q = np.rint(deq.astype(np.float32) / f32(y_scale)).astype(np.int64) + int(y_zp)
    return _saturate(q, dtype)


@kernel(Op.ADD, mode="onnx")
def add(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    at = node.params
    assert isinstance(at, OnnxAddParams)
    shape = graph.tensors[node.outputs[0]].shape
    a = np.broadcast_to(np.asarray(args[at.a_index], dtype=np.int64), shape)
    b = np.broadcast_to(np.asarray(args[1 - at.a_index], dtype=np.int64), shape)
    r = fma32(a, at.ratio_a, fma32(b, at.ratio_b, f32(at.fixed)))
    return _clamp(node, graph, np.rint(r).astype(np.int64), at.qmin, at.qmax)


@kernel(Op.QUANTIZE, mode="onnx")
def quantize(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    at = node.params
    assert isinstance(at, OnnxQuantizeParams)
    y = requantize_values(args[0], at.x_scale, at.x_zero_point, at.y_scale, at.y_zero_point, _out_dtype(graph, node))
    return _clamp(node, graph, y, at.qmin, at.qmax)


@kernel(Op.CONCAT, mode="onnx")
def concat(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    at = node.params
    assert isinstance(at, ConcatParams)
    ys, yz = at.output_quant
    dtype = _out_dtype(graph, node)
    parts = []
    for x, (xs, xz) in zip(args, at.input_quant):
        if f32(xs) == f32(ys) and int(xz) == int(yz):
            parts.append(np.asarray(x, dtype=np.int64))
        else:
            parts.append(requantize_values(x, xs, xz, ys, yz, dtype))
    return np.concatenate(parts, axis=int(at.axis))


def _window_sum_f32(v: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int],
                    pads: tuple[int, int, int, int], out_hw: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Sequential float32 window sums (h outer, w inner, padding skipped) and valid-tap counts."""
    ky, kx = kernel
    sy, sx = stride
    t, l, _, _ = pads
    n, h, w, c = v.shape
    oy, ox = out_hw
    vp = pad_nhwc(v, (t, l, ky + sy * oy, kx + sx * ox), 0)
    mask = pad_nhwc(np.ones((1, h, w, 1), dtype=np.float32), (t, l, ky + sy * oy, kx + sx * ox), 0)
    acc = np.zeros((n, oy, ox, c), dtype=np.float32)
    count = np.zeros((1, oy, ox, 1), dtype=np.int64)
    for i in range(ky):
        for j in range(kx):
            tap = vp[:, i: i + sy * (oy - 1) + 1: sy, j: j + sx * (ox - 1) + 1: sx, :]
            acc = (acc + tap).astype(np.float32)  # adding the 0.0 of a padded tap is exact
            count += mask[:, i: i + sy * (oy - 1) + 1: sy, j: j + sx * (ox - 1) + 1: sx, :].astype(np.int64)
    return acc, count


def global_average(x: np.ndarray, at: OnnxMeanParams) -> np.ndarray:
    """MlasQLinearGlobalAveragePool: int32 Σ(x) − zp_x·N, requantized (and clamped) by at.requant."""
    acc = np.asarray(x, dtype=np.int64).sum(axis=tuple(at.axes), keepdims=True) - int(at.x_zero_point) * int(at.count)
    return apply_requant(acc, at.requant)


@kernel(Op.MEAN, Op.GLOBAL_AVG_POOL, mode="onnx")
def mean(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    at = node.params
    assert isinstance(at, OnnxMeanParams)
    y = global_average(args[0], at)
    if not at.keepdims:
        y = y.reshape(graph.tensors[node.outputs[0]].shape)
    return y


@kernel(Op.AVG_POOL, mode="onnx")
def avg_pool(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    at = node.params
    assert isinstance(at, OnnxAvgPoolParams)
    x = np.asarray(args[0], dtype=np.int64)
    out_shape = graph.tensors[node.outputs[0]].shape
    deq = (f32(at.x_scale) * (x - int(at.x_zero_point)).astype(np.float32)).astype(np.float32)
    acc, count = _window_sum_f32(deq, tuple(at.kernel), tuple(at.stride), tuple(at.pads), out_shape[1:3])
    if at.count_include_pad:
        count = np.full_like(count, int(at.kernel[0]) * int(at.kernel[1]))
    avg = (acc / count.astype(np.float32)).astype(np.float32)
    v = ((avg / f32(at.y_scale)).astype(np.float32) + f32(int(at.y_zero_point))).astype(np.float32)
    y = _saturate(np.rint(v).astype(np.int64), _out_dtype(graph, node))
    return _clamp(node, graph, y, at.qmin, at.qmax)


@kernel(Op.SOFTMAX, mode="onnx")
def softmax(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    at = node.params
    assert isinstance(at, OnnxSoftmaxParams)
    dtype = _out_dtype(graph, node)
    axis = int(at.axis)
    x = np.moveaxis(np.asarray(args[0], dtype=np.int64), axis, -1)
    table = np.asarray(at.table, dtype=np.float32)  # table[i] = exp((i - 255 + shift)·s_x)
    idx = 255 - x.max(axis=-1, keepdims=True) + x
    t = table[idx]
    total = np.zeros(t.shape[:-1], dtype=np.float32)
    for j in range(t.shape[-1]):  # sequential float32 sum, as the kernel's loop
        total = (total + t[..., j]).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):  # a depth-1 softmax can overflow float32
        q = np.rint(((t * f32(at.y_scale_inv)).astype(np.float32) / total[..., None]).astype(np.float32))
    # onnxruntime converts with x86's cvtss2si: a non-finite quotient becomes INT32_MIN, and the zero
    # point is added with int32 wrap-around before saturating (tw_softmax.h documents the same)
    qi = np.where(np.isfinite(q), q, np.float32(INT32_MIN)).astype(np.int64)
    y = _saturate(wrap32(qi + int(at.y_zero_point)), dtype)
    return np.moveaxis(y, -1, axis)


@kernel(Op.CLAMP)
def clamp(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    at = node.params
    assert isinstance(at, ClampParams)
    return _clamp(node, graph, np.asarray(args[0], dtype=np.int64), at.qmin, at.qmax)
