"""Golden softmax and logistic in TFLite semantics (mode "tflite").

softmax: reference_ops::Softmax for int8/uint8 (kernels/internal/reference/softmax.h) — the LiteRT
BUILTIN_REF path: per row, input_diff = x - max; entries with input_diff < diff_min give the type's
minimum; others are rescaled to Q5.26 by MultiplyByQuantizedMultiplierGreaterThanOne(input_diff,
input_multiplier, input_left_shift), exponentiated with gemmlowp's exp_on_negative_values, summed in
Q12.19, inverted with GetReciprocal and scaled to the output (scale 1/256, zero point = type minimum).
The parameters (input_multiplier, input_left_shift, diff_min) come from PreprocessSoftmaxScaling with
5 integer bits, computed at import (frontend/tflite_ops.py).

logistic: LiteRT's int8/uint8 reference LOGISTIC is a 256-entry lookup table built at Prepare from the
float sigmoid (LUTPopulate); the frontend stores that table in TfliteLogisticParams.table, indexed by
q - qmin.
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Graph, Node
from ..ir.ops import Op
from ..ir.params import TfliteLogisticParams, TfliteSoftmaxParams
from ..ir.tensor import dtype_range
from .fixedpoint import rounding_divide_by_pot, srdhm, wrap32
from .gemmlowp import exp_on_negative_values, get_reciprocal
from .registry import kernel

SCALED_DIFF_INTEGER_BITS = 5
ACCUMULATION_INTEGER_BITS = 12


@kernel(Op.SOFTMAX, mode="tflite")
def softmax(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    x = np.asarray(args[0], dtype=np.int64)
    a = node.params
    assert isinstance(a, TfliteSoftmaxParams)
    out_dtype = graph.tensors[node.outputs[0]].dtype
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


@kernel(Op.LOGISTIC, mode="tflite")
def logistic(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    x = np.asarray(args[0], dtype=np.int64)
    lo, _ = dtype_range(graph.tensors[node.inputs[0]].dtype)
    a = node.params
    assert isinstance(a, TfliteLogisticParams)
    table = np.asarray(a.table, dtype=np.int64)
    return table[x - lo]
