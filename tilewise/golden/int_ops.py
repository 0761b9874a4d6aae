"""Golden kernels of the integer exports' ops (NEMO, QuantLab, Deeploy): exact integer arithmetic
on codes, with no scales (ir/params.py "integer exports").

- add / sub / mul (IntArithParams): a ∘ b in int64, numpy broadcasting, clamped to [qmin, qmax].
  What onnxruntime computes on the float32 containers while every value is an integer below 2^24,
  and what Deeploy's Generic Add / Sub kernels compute in int32 (the frontend gives the output a
  type that holds every result, frontend/onnx_int.py).
- add (TableAddParams): clamp((ta[a − lo_a] + tb[b − lo_b]) >> shift), each 8-bit input through
  its own table.
- requant (RequantParams): golden/requant.py apply_requant along IR axis `axis` — QuantLab's
  RequantShift floor((x·mul + add + div/2) / div) as the shift mode (notes/integer-onnx.md,
  Deeploy Generic/src/RequantShift_s8.c), NEMO's chains as the div mode.
- matmul (MatMulParams): numpy.matmul in int64 (Deeploy Generic/src/MatMul_s8.c accumulates in
  int32; the frontend proves every sum fits).
- slice (SliceParams): x[start:end:step] per axis (ONNX Slice).
- reduce (ReduceParams): the int64 sum over `axes`; with `average` Deeploy's integer ReduceMean,
  floor((Σ + n/2) / n) (its test data: tests/test_onnx_int.py), n the reduced count.
- hardswish (HardswishParams): Deeploy's iHardswish (Generic/src/Hardswish_s8.c),
  y = x·(clamp(x + three, 0, six)·one_over_six).
- int_softmax (IntSoftmaxParams): Deeploy's iSoftmax (Generic/src/Softmax_s8.c; the PULP and
  Snitch kernels compute the same with coeff_a = 1), I-BERT's integer exponential along one axis:
  d = x − max, z = min(⌊−d / log2⌋, 31), p = d + z·log2, e = (a·(p + b)² + c) >> z, then
  ⌊e·(n_levels − 1) / Σe⌋ — the unsigned codes Deeploy's test data holds (its s8→s8 kernel
  subtracts n_levels/2 after; the exporter's golden outputs do not).
- rms_norm (RMSNormParams): Deeploy's iRMSNorm (Generic/src/iRMSNorm_s8.c) along one axis:
  r = ⌊√(⌊Σx² / N⌋ + 1)⌋ (its _plp_sqrt_q32 binary search is the floor square root), then
  clamp(trunc(x·w / r) >> log2d) — the product and the division in int64 here (Deeploy's int32
  product equals it while |x·w| < 2^31, which the frontend checks).
- layer_norm (LayerNormParams): Deeploy's iLayerNorm (Generic/src/Layernorm_s8.c) along one axis:
  μ = trunc(Σx / N), d = x − μ, r = ⌊√(⌊Σd² / N⌋ + 1)⌋, then
  clamp((trunc(d·w / r) + bias) >> log2d) — Deeploy's int64 product and quotient; the clamp is
  QuantLab's exporter's (PACTIntegerLayerNorm clips to n_levels; Deeploy's generic kernel casts to
  int8, the same codes wherever the value is in range, as in the corpus).
- int_gelu (IntGeluParams): Deeploy's iGELU (Generic/src/GELU_s8.c, QuantLab's PACTIntegerGELU):
  q = min(|x|, −b), L = sign(x)·(one − (q + b)²), y = x·⌊(one + L) / 2⌋.
- ita_max (ItaMaxParams): Deeploy's ITAMax (Generic/src/Softmax_s8.c ITAMax_s8, QuantLab's
  PACTIntegerITAMax) along one axis: s = (max − x + 16) >> 5, y = ⌊255·256 / Σ(256 >> s)⌋ >> s —
  the unsigned codes the exporter's golden data holds (Deeploy's s8 kernel subtracts 128 after).
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Graph, Node
from ..ir.ops import Op
from ..ir.params import (
    HardswishParams,
    IntArithParams,
    IntGeluParams,
    IntSoftmaxParams,
    ItaMaxParams,
    LayerNormParams,
    ReduceParams,
    RequantParams,
    RMSNormParams,
    SliceParams,
    TableAddParams,
)
from ..ir.tensor import dtype_range
from .registry import kernel
from .requant import apply_requant


@kernel(Op.ADD, Op.SUB, Op.MUL, mode=None)
def arith(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    p = node.params
    if isinstance(p, TableAddParams):
        return table_add(node, graph, args)
    assert isinstance(p, IntArithParams), f"node '{node.name}': integer arithmetic takes IntArithParams"
    a, b = (np.asarray(x, dtype=np.int64) for x in args)
    y = a + b if node.op == Op.ADD else a - b if node.op == Op.SUB else a * b
    return np.clip(y, p.qmin, p.qmax)


def table_add(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    """clamp((ta[a − lo_a] + tb[b − lo_b]) >> shift) (TableAddParams)."""
    p = node.params
    assert isinstance(p, TableAddParams)
    lo_a, lo_b = (dtype_range(graph.tensors[i].dtype)[0] for i in node.inputs)
    a, b = (np.asarray(x, dtype=np.int64) for x in args)
    ta, tb = np.asarray(p.table_a, np.int64), np.asarray(p.table_b, np.int64)
    return np.clip((ta[a - lo_a] + tb[b - lo_b]) >> p.shift, p.qmin, p.qmax)


def requant_along(x: np.ndarray, p: RequantParams) -> np.ndarray:
    """apply_requant with the per-channel values along IR axis p.axis."""
    x = np.asarray(x, dtype=np.int64)
    if p.axis is None or x.ndim == 0:
        return apply_requant(x, p.requant)
    moved = np.moveaxis(x, p.axis, -1)
    return np.moveaxis(apply_requant(moved, p.requant), -1, p.axis)


@kernel(Op.REQUANT)
def requant(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    p = node.params
    assert isinstance(p, RequantParams)
    return requant_along(args[0], p)


@kernel(Op.MATMUL)
def matmul(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    a, b = (np.asarray(x, dtype=np.int64) for x in args)
    return np.matmul(a, b)


@kernel(Op.SLICE)
def slice_(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    p = node.params
    assert isinstance(p, SliceParams)
    return args[0][tuple(slice(s, e, st) for s, e, st in zip(p.starts, p.ends, p.steps))]


@kernel(Op.REDUCE)
def reduce(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    p = node.params
    assert isinstance(p, ReduceParams)
    x = np.asarray(args[0], dtype=np.int64)
    axes = tuple(a % x.ndim for a in p.axes)
    s = x.sum(axis=axes, keepdims=p.keepdims)
    if not p.average:
        return s
    n = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    return np.floor_divide(s + n // 2, n)


@kernel(Op.HARDSWISH)
def hardswish(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    p = node.params
    assert isinstance(p, HardswishParams)
    x = np.asarray(args[0], dtype=np.int64)
    return x * (np.clip(x + p.three, 0, p.six) * p.one_over_six)


def int_softmax_rows(x: np.ndarray, p: IntSoftmaxParams) -> np.ndarray:
    """IntSoftmaxParams along the last axis of the int64 array x."""
    d = x - x.max(axis=-1, keepdims=True)
    z = np.minimum((-d) // p.log2, 31)
    q = d + z * p.log2
    e = (p.coeff_a * (q + p.coeff_b) ** 2 + p.coeff_c) >> z
    return (e * (p.n_levels - 1)) // e.sum(axis=-1, keepdims=True)


@kernel(Op.INT_SOFTMAX)
def int_softmax(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    p = node.params
    assert isinstance(p, IntSoftmaxParams)
    x = np.moveaxis(np.asarray(args[0], dtype=np.int64), p.axis, -1)
    return np.moveaxis(int_softmax_rows(x, p), -1, p.axis)


def isqrt_floor(s: np.ndarray) -> np.ndarray:
    """⌊√s⌋ of non-negative int64 values, exact (a float estimate corrected by one either way)."""
    r = np.floor(np.sqrt(s.astype(np.float64))).astype(np.int64)
    r = np.where(r * r > s, r - 1, r)
    return np.where((r + 1) * (r + 1) <= s, r + 1, r)


def trunc_div(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """C's integer division (toward zero) of int64 arrays, b > 0."""
    return np.sign(a) * (np.abs(a) // b)


@kernel(Op.RMS_NORM)
def rms_norm(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    p = node.params
    assert isinstance(p, RMSNormParams)
    x = np.moveaxis(np.asarray(args[0], dtype=np.int64), p.axis, -1)
    n = x.shape[-1]
    r = isqrt_floor((x * x).sum(axis=-1, keepdims=True) // n + 1)
    y = np.clip(trunc_div(x * np.asarray(p.weight, dtype=np.int64), r) >> p.log2d, p.qmin, p.qmax)
    return np.moveaxis(y, -1, p.axis)


@kernel(Op.LAYER_NORM)
def layer_norm(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    p = node.params
    assert isinstance(p, LayerNormParams)
    x = np.moveaxis(np.asarray(args[0], dtype=np.int64), p.axis, -1)
    n = x.shape[-1]
    d = x - trunc_div(x.sum(axis=-1, keepdims=True), n)
    r = isqrt_floor((d * d).sum(axis=-1, keepdims=True) // n + 1)
    q = trunc_div(d * np.asarray(p.weight, dtype=np.int64), r) + np.asarray(p.bias, dtype=np.int64)
    y = np.clip(q >> p.log2d, p.qmin, p.qmax)
    return np.moveaxis(y, -1, p.axis)


def int_gelu_values(x: np.ndarray, b: int, one: int) -> np.ndarray:
    """IntGeluParams on the int64 array x."""
    q = np.minimum(np.abs(x), -b)
    lo = np.sign(x) * (one - (q + b) * (q + b))
    return x * ((one + lo) >> 1)


@kernel(Op.INT_GELU)
def int_gelu(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    p = node.params
    assert isinstance(p, IntGeluParams)
    return int_gelu_values(np.asarray(args[0], dtype=np.int64), p.b, p.one)


@kernel(Op.ITA_MAX)
def ita_max(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    p = node.params
    assert isinstance(p, ItaMaxParams)
    x = np.moveaxis(np.asarray(args[0], dtype=np.int64), p.axis, -1)
    s = (x.max(axis=-1, keepdims=True) - x + 16) >> 5
    inv = (p.n_levels - 1) * 256 // (256 >> s).sum(axis=-1, keepdims=True)
    return np.moveaxis(inv >> s, -1, p.axis)
