"""Golden softmax and logistic in TFLite semantics (mode "tflite").

softmax: reference_ops::Softmax for int8/uint8 (kernels/internal/reference/softmax.h) — the LiteRT
BUILTIN_REF path: per row, input_diff = x - max; entries with input_diff < diff_min give the type's
minimum; others are rescaled to Q5.26 by MultiplyByQuantizedMultiplierGreaterThanOne(input_diff,
input_multiplier, input_left_shift), exponentiated with gemmlowp's exp_on_negative_values, summed in
Q12.19, inverted with GetReciprocal and scaled to the output (scale 1/256, zero point = type minimum).
The parameters (input_multiplier, input_left_shift, diff_min) come from PreprocessSoftmaxScaling with
5 integer bits, computed at import (frontend/tflite_ops.py).

int16 softmax: reference_ops::SoftmaxInt16 — per row, d = x − max rescaled by MBQM(d,
input_multiplier, input_left_shift) so that [−65535, 0] is [−10, 0], recentred (+32767, saturated to
int16) and looked up in the exp table (LUTLookup: 513 entries, linear interpolation on the 7 low
bits); the int32 sum S of those Q0.15 values is normalised (h = CountLeadingZeros(S),
((S << (h − 1)) + 2^13) >> 14, minus 2^15 + 2^16, saturated) and looked up in the 1/(1 + x) table;
out = clamp((e · r + 2^(30 − h)) >> (31 − h), 0, 32767). The tables are LUTPopulateInt16's, built at
import (frontend/tflite_act.py).

logistic: LiteRT's int8/uint8 reference LOGISTIC is a 256-entry lookup table built at Prepare from the
float sigmoid (LUTPopulate); the frontend stores that table in TfliteLogisticParams.table, indexed by
q - qmin. tanh: LiteRT's int8/uint8 reference TANH is the same lookup of LUTPopulate's float tanh
(frontend/tflite_seq.py), the same kernel.
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Graph, Node
from ..ir.ops import Op
from ..ir.params import TfliteLogisticParams, TfliteSoftmaxParams
from ..ir.tensor import dtype_range
from .fixedpoint import multiply_by_quantized_multiplier, rounding_divide_by_pot, srdhm, wrap32
from .gemmlowp import exp_on_negative_values, get_reciprocal
from .registry import kernel

SCALED_DIFF_INTEGER_BITS = 5
ACCUMULATION_INTEGER_BITS = 12


def lut_lookup(value: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """LUTLookup of an int16 value in a 513-entry table (lut.h): entry 256 + (v >> 7), plus the
    slope to the next entry times the 7 low bits, rounded ((slope·offset + 64) >> 7)."""
    v = np.asarray(value, dtype=np.int64)
    index = 256 + (v >> 7)
    offset = v & 0x7F
    base = lut[index]
    slope = lut[index + 1] - base
    return ((base + ((slope * offset + 64) >> 7)) + 32768) % 65536 - 32768


def softmax_int16(x: np.ndarray, a: TfliteSoftmaxParams) -> np.ndarray:
    """reference_ops::SoftmaxInt16 over the last axis (module docstring)."""
    exp_lut = np.asarray(a.exp_lut, dtype=np.int64)
    recip_lut = np.asarray(a.recip_lut, dtype=np.int64)
    diff = x - x.max(axis=-1, keepdims=True)
    scaled = multiply_by_quantized_multiplier(diff, a.input_multiplier, a.input_left_shift)
    exps = lut_lookup(np.clip(scaled + 32767, -32768, 32767), exp_lut)
    total = exps.sum(axis=-1, keepdims=True)          # int32: at most depth · 32767
    assert (total > 0).all() and (total < 2**31).all()
    headroom_plus_one = 32 - np.floor(np.log2(total)).astype(np.int64) - 1   # CountLeadingZeros
    shifted = ((total << (headroom_plus_one - 1)) + (1 << 13)) >> 14
    sym = np.clip(shifted - ((1 << 15) + (1 << 16)), -32768, 32767)
    recip = lut_lookup(sym, recip_lut)
    right = 31 - headroom_plus_one
    out = (exps * recip + (np.int64(1) << (right - 1))) >> right
    return np.clip(out, 0, 32767)


@kernel(Op.SOFTMAX, mode="tflite")
def softmax(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    x = np.asarray(args[0], dtype=np.int64)
    a = node.params
    assert isinstance(a, TfliteSoftmaxParams)
    out_dtype = graph.tensors[node.outputs[0]].dtype
    if out_dtype == "int16":
        return softmax_int16(x, a)
    lo, hi = dtype_range(out_dtype)
    bits = np.dtype(out_dtype).itemsize * 8
    diff = x - x.max(axis=-1, keepdims=True)
    valid = diff >= a.diff_min
    rescaled = srdhm(wrap32(diff * (1 << a.input_left_shift)), a.input_multiplier)
    exps = exp_on_negative_values(rescaled, SCALED_DIFF_INTEGER_BITS)
    contrib = np.where(valid, rounding_divide_by_pot(exps, ACCUMULATION_INTEGER_BITS), 0)
    sum_of_exps = wrap32(contrib.sum(axis=-1, keepdims=True))
    shifted_scale, num_bits_over_unit = get_reciprocal(sum_of_exps, ACCUMULATION_INTEGER_BITS)
    unsat = rounding_divide_by_pot(srdhm(shifted_scale, exps), num_bits_over_unit + 31 - bits)
    y = np.clip(unsat + lo, lo, hi)
    return np.where(valid, y, lo)


@kernel(Op.LOGISTIC, Op.TANH, mode="tflite")
def logistic(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    x = np.asarray(args[0], dtype=np.int64)
    lo, _ = dtype_range(graph.tensors[node.inputs[0]].dtype)
    a = node.params
    assert isinstance(a, TfliteLogisticParams)
    table = np.asarray(a.table, dtype=np.int64)
    return table[x - lo]
