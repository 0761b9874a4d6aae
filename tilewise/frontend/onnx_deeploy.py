"""Deeploy's integer transformer operators -> IR: iSoftmax, iRMSNorm, iNoNorm, iLayerNorm, iGELU, ITAMax and
IntegerMean as QuantLab exports them.

QuantLab writes them as custom nodes in the default domain, on 8-bit codes, their parameters as
attributes (floats or one-value tensors holding integers) and constant inputs. What each computes is
Deeploy's reference kernels' arithmetic (TargetLibraries/Generic/src/Softmax_s8.c and
PULPOpen/src/iSoftmax.c, Generic/src/iRMSNorm_s8.c, Snitch/src/iNoNorm.c, Generic/src/Layernorm_s8.c,
Generic/src/GELU_s8.c, ITAMax_s8 in Generic/src/Softmax_s8.c, IntegerMean as Deeploy's ReduceMean); the
exporter's golden data (../shared/models/integer_onnx/deeploy/kernels/
{Softmax,RMSNorm,iNoNorm}, and CCT's activations.npz for iLayerNorm and iGELU) is reproduced exactly:

| node | attributes / inputs | IR |
|---|---|---|
| iSoftmax(x) | coeffA, coeffB, coeffC, log2, n_levels | int_softmax along the last ONNX axis (IntSoftmaxParams): |
|             |                                        | unsigned codes in [0, n_levels − 1]                      |
| iRMSNorm(x, weight) | D (2^d), n_levels; weight one integer per element of the last axis (or one) | rms_norm |
|                     |                                                                             | (RMSNormParams) |
| iNoNorm(x, weights, bias) | D (2^d), mul, n_levels | mul by `weights` (exact), then a shift requant |
|                           |                        | clamp(⌊(v·mul + bias·mul) / D⌋) — bias per last-axis element |
|                           |                        | folded into the requant's λ (else an exact add before it) |
| iLayerNorm(x, weight, bias) | D (2^d), n_levels; weight and bias one integer per element of the last axis (or one) | |
|                             | layer_norm (LayerNormParams)                                                         | |
| iGELU(x) | b, one | int_gelu (IntGeluParams): int32 values x·⌊(one + L) / 2⌋, a RequantShift after it |
| ITAMax(x) | n_levels (256) | ita_max along the last ONNX axis (ItaMaxParams): unsigned codes in [0, 255] |
| IntegerMean(x) | axes, keepdims | reduce as ReduceMean (onnx_int.py): Deeploy's floor((Σ + n/2) / n) |

iNoNorm is Deeploy's ((x·w + b)·mul) >> log2(D) per element; its kernel casts the result to int8
where the requant clamps to the n_levels range — the same codes wherever the value is in range, as
in the corpus. iRMSNorm takes signed codes only (Deeploy adds n_levels/2 to unsigned ones and reads
them as int8, a form the corpus has no data for) and products x·weight within int32 (Deeploy's
kernel multiplies in int32); iSoftmax takes 8-bit codes, its polynomial within Deeploy's uint32.
iLayerNorm takes 8-bit codes (Deeploy's input offset recovers an unsigned code's value), weights and
biases within int32 and rows whose Σd² stays within int32 (its kernel's accumulator); its output is
clamped to the n_levels range as QuantLab's exporter clips it (Deeploy's generic kernel casts to int8:
the same codes wherever the value is in range, as in CCT). iGELU takes 8-bit codes, b an int8 and
one an int16 (the kernel's argument types: every intermediate then stays well within int32).
ITAMax takes int8 codes and 256 levels (Deeploy's kernel shifts by 5 and sums 256 >> s: B / 2^B = 1/32).
Anything else is one sentence naming the node (exit 2).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import UnsupportedOpError
from ..golden.int_ops import int_gelu_values
from ..ir.ops import Op
from ..ir.params import IntGeluParams, IntSoftmaxParams, ItaMaxParams, LayerNormParams, RMSNormParams
from .onnx_int import INT1, channel_axis, emit_arith, emit_requant, int_reduce, integer_style, out_dtype, shift_requant
from .onnx_lower import Lowering, handler
from .onnx_model import ONode, unsupported

#: the Deeploy operators this module lowers (onnx_quantlab.DEPLOYED_OPS lists them)
DEEPLOY_OPS = ("iSoftmax", "iRMSNorm", "iNoNorm", "iLayerNorm", "iGELU", "ITAMax", "IntegerMean")
EIGHT_BIT = ("int8", "uint8")
HINT = "re-export the operator with QuantLab's integer attributes"
#: Deeploy's iSoftmax keeps its exponential in a uint32
U32 = 1 << 32
INT32_MAX = (1 << 31) - 1


def int_attr(lw: Lowering, node: ONode, name: str) -> int:
    """An integer-valued attribute (an int, a float or a one-value tensor / list), refused in one
    sentence when absent, of several values or not an integer."""
    v = node.attr(name)
    a = None if v is None else np.asarray(v, dtype=np.float64).reshape(-1)
    if a is None or a.size != 1:
        raise unsupported(lw.g, node, f"lacks its attribute '{name}' (one value)", HINT)
    x = float(a[0])
    if not math.isfinite(x) or x != round(x):
        raise unsupported(lw.g, node, f"has the non-integer attribute {name} = {x}", HINT)
    return int(x)


def log2_of(lw: Lowering, node: ONode, name: str) -> int:
    d = int_attr(lw, node, name)
    if d < 1 or d & (d - 1):
        raise unsupported(lw.g, node, f"divides by {name} = {d}, not a power of two", HINT)
    return d.bit_length() - 1


def levels(lw: Lowering, node: ONode, most: int) -> int:
    n = int_attr(lw, node, "n_levels")
    if not 2 <= n <= most:
        raise unsupported(lw.g, node, f"has n_levels = {n}", f"give 2 to {most} output levels")
    return n


def eight_bit(lw: Lowering, node: ONode, x: str, signed: bool) -> None:
    dt = lw.t(x).dtype
    if dt not in (("int8",) if signed else EIGHT_BIT):
        want = "signed 8-bit codes" if signed else "8-bit codes"
        hint = "requantize its input to int8 first"
        if x in lw.ir_inputs:
            hint = f"give the input's code type with --input-dtype (e.g. --input-dtype int8), or {hint}"
        raise unsupported(lw.g, node, f"reads {dt} codes where Deeploy's kernel takes {want}", hint)


def integer_const(lw: Lowering, node: ONode, idx: int, what: str) -> np.ndarray:
    name = node.input(idx)
    if not name or name not in lw.g.consts:
        raise unsupported(lw.g, node, f"takes its {what} from a computed tensor", f"make {what} a constant")
    a = np.asarray(lw.g.consts[name], dtype=np.float64)
    if not (np.all(np.isfinite(a)) and np.all(a == np.round(a))):
        raise unsupported(lw.g, node, f"has a non-integer {what}", "give integer values, as QuantLab exports them")
    return a.astype(np.int64)


def last_axis(lw: Lowering, x: str) -> int:
    """The IR axis holding the last ONNX axis of `x` (Deeploy's operators work along it)."""
    return lw.perm[x].index(len(lw.perm[x]) - 1)


@handler("iSoftmax")
def int_softmax(lw: Lowering, node: ONode) -> None:
    integer_style(lw, node)
    x = lw.act(node, node.inputs[0])
    eight_bit(lw, node, x, signed=False)
    a, b, c, log2 = (int_attr(lw, node, k) for k in ("coeffA", "coeffB", "coeffC", "log2"))
    n = levels(lw, node, 1 << 16)
    if not 1 <= log2 <= 1 << 16:
        raise unsupported(lw.g, node, f"has log2 = {log2}", "give a positive log2 of at most 65536")
    lo, hi = lw.bound(x)
    # p takes the values (−log2, 0] (and no lower than the row's spread): the polynomial there
    p = np.arange(max(-(log2 - 1), lo - hi), 1, dtype=object)
    e = [a * (v + b) ** 2 + c for v in p]
    if min(e) < 0 or max(e) >= U32 or e[-1] < 1:
        raise unsupported(lw.g, node, f"has coefficients A = {a}, B = {b}, C = {c} whose exponential leaves "
                          "[0, 2^32) or is 0 at a row's maximum", HINT)
    dtype = out_dtype(lw, node, 0, n - 1)
    y = lw.emit(node, Op.INT_SOFTMAX, [x], lw.out_name(node.outputs[0]), None, dtype, INT1,
                IntSoftmaxParams(coeff_a=a, coeff_b=b, coeff_c=c, log2=log2, n_levels=n, axis=last_axis(lw, x)),
                layout=lw.perm[x])
    lw.bounds[y] = (0, n - 1)


@handler("iRMSNorm")
def int_rms_norm(lw: Lowering, node: ONode) -> None:
    integer_style(lw, node)
    x = lw.act(node, node.inputs[0])
    eight_bit(lw, node, x, signed=True)
    d = log2_of(lw, node, "D")
    n = levels(lw, node, 1 << 16)
    length = lw.onnx_shape(x)[-1]
    weight = per_element(lw, node, 1, "weight", length)
    lo, hi = lw.bound(x)
    xmax = max(abs(lo), abs(hi))
    if xmax * max(abs(v) for v in weight) > INT32_MAX or xmax * xmax * length > INT32_MAX:
        raise unsupported(lw.g, node, "has weights or rows whose products pass int32, where Deeploy's kernel wraps",
                          "use smaller weights or shorter rows")
    qmin, qmax = -(n // 2), n // 2 - 1
    y = lw.emit(node, Op.RMS_NORM, [x], lw.out_name(node.outputs[0]), None, out_dtype(lw, node, qmin, qmax), INT1,
                RMSNormParams(weight=weight, log2d=d, qmin=qmin, qmax=qmax, axis=last_axis(lw, x)),
                layout=lw.perm[x])
    lw.bounds[y] = (qmin, qmax)


@handler("iNoNorm")
def int_no_norm(lw: Lowering, node: ONode) -> None:
    integer_style(lw, node)
    if len(node.inputs) != 3:
        raise unsupported(lw.g, node, f"has {len(node.inputs)} inputs", "give x, weights and bias")
    x = lw.act(node, node.inputs[0])
    eight_bit(lw, node, x, signed=True)
    d = log2_of(lw, node, "D")
    mul = int_attr(lw, node, "mul")
    n = levels(lw, node, 1 << 16)
    w = integer_const(lw, node, 1, "weights")
    b = integer_const(lw, node, 2, "bias")
    lo, hi = -(n // 2), n // 2 - 1
    prod = emit_arith(lw, node, "Mul", (("ir", x), ("const", w)), lw.fresh(f"{node.name}__xw"), suffix="_xw")
    rank = len(lw.onnx_shape(prod))
    try:
        axis = channel_axis(lw, node, prod, (b,), "bias")
    except UnsupportedOpError:   # not one value per element of one axis: an exact add first
        axis = -1
    if axis is None or axis == rank - 1:
        lam = b.reshape(-1) * mul
        rq = shift_requant(mul, lam, d, lo, hi, channels=lam.size)
        v = prod
    else:
        v = emit_arith(lw, node, "Add", (("ir", prod), ("const", b)), lw.fresh(f"{node.name}__xwb"), suffix="_xwb")
        rq, axis = shift_requant(mul, 0, d, lo, hi), None
    emit_requant(lw, node, v, rq, None if rq.multiplier.size == 1 else rank - 1, lw.out_name(node.outputs[0]),
                 out_dtype(lw, node, lo, hi))


def per_element(lw: Lowering, node: ONode, idx: int, what: str, length: int) -> tuple[int, ...]:
    """A constant input holding one int32 integer per element of the last axis (or one for all)."""
    v = integer_const(lw, node, idx, what)
    if v.size not in (1, length) or v.ndim > 1 and v.size != v.shape[-1]:
        raise unsupported(lw.g, node, f"has a {what} of shape {v.shape} for rows of {length}",
                          f"give one {what} per element of the last axis")
    if np.abs(v).max(initial=0) > INT32_MAX:
        raise unsupported(lw.g, node, f"has a {what} beyond int32, where Deeploy's kernel holds int32",
                          f"use a smaller {what}")
    return tuple(int(t) for t in np.broadcast_to(v.reshape(-1), (length,)))


@handler("iLayerNorm")
def int_layer_norm(lw: Lowering, node: ONode) -> None:
    integer_style(lw, node)
    if len(node.inputs) != 3:
        raise unsupported(lw.g, node, f"has {len(node.inputs)} inputs", "give x, weight and bias")
    x = lw.act(node, node.inputs[0])
    eight_bit(lw, node, x, signed=False)
    d = log2_of(lw, node, "D")
    n = levels(lw, node, 1 << 16)
    length = lw.onnx_shape(x)[-1]
    weight = per_element(lw, node, 1, "weight", length)
    bias = per_element(lw, node, 2, "bias", length)
    lo, hi = lw.bound(x)
    if (hi - lo) ** 2 * length > INT32_MAX:     # |x − μ| ≤ hi − lo
        raise unsupported(lw.g, node, f"has rows of {length} whose sum of squares passes int32, where Deeploy's "
                          "kernel wraps", "use shorter rows")
    qmin, qmax = -(n // 2), n // 2 - 1
    y = lw.emit(node, Op.LAYER_NORM, [x], lw.out_name(node.outputs[0]), None, out_dtype(lw, node, qmin, qmax), INT1,
                LayerNormParams(weight=weight, bias=bias, log2d=d, qmin=qmin, qmax=qmax, axis=last_axis(lw, x)),
                layout=lw.perm[x])
    lw.bounds[y] = (qmin, qmax)


@handler("iGELU")
def int_gelu(lw: Lowering, node: ONode) -> None:
    integer_style(lw, node)
    x = lw.act(node, node.inputs[0])
    eight_bit(lw, node, x, signed=False)
    b, one = int_attr(lw, node, "b"), int_attr(lw, node, "one")
    if not -128 <= b <= 127 or not -(1 << 15) <= one < 1 << 15:
        raise unsupported(lw.g, node, f"has b = {b}, one = {one} beyond Deeploy's int8 b and int16 one", HINT)
    # the values over the input's range (8-bit codes, b and one this narrow: |y| < 2^23, int32 is exact)
    lo, hi = lw.bound(x)
    y = int_gelu_values(np.arange(lo, hi + 1, dtype=np.int64), b, one)
    ymin, ymax = int(y.min()), int(y.max())
    out = lw.emit(node, Op.INT_GELU, [x], lw.out_name(node.outputs[0]), None, out_dtype(lw, node, ymin, ymax), INT1,
                  IntGeluParams(b=b, one=one), layout=lw.perm[x])
    lw.bounds[out] = (ymin, ymax)


@handler("ITAMax")
def ita_max(lw: Lowering, node: ONode) -> None:
    integer_style(lw, node)
    x = lw.act(node, node.inputs[0])
    eight_bit(lw, node, x, signed=True)
    n = int_attr(lw, node, "n_levels")
    if n != 256:
        raise unsupported(lw.g, node, f"has n_levels = {n} where Deeploy's ITAMax kernel takes 256", HINT)
    y = lw.emit(node, Op.ITA_MAX, [x], lw.out_name(node.outputs[0]), None, "uint8", INT1,
                ItaMaxParams(n_levels=n, axis=last_axis(lw, x)), layout=lw.perm[x])
    lw.bounds[y] = (0, n - 1)


@handler("IntegerMean")
def integer_mean(lw: Lowering, node: ONode) -> None:
    """QuantLab's IntegerMean: Deeploy maps it onto its ReduceMean (floor((Σ + n/2) / n))."""
    int_reduce(lw, node)
