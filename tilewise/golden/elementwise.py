"""Golden add, sub and mul in TFLite semantics (mode "tflite"), with numpy broadcasting.

add/sub (reference_integer_ops::AddFunc / SubFunc, kernels/internal/reference/add.h, sub.h): each input
is offset by its zero point, shifted left by `left_shift` (20 for int8/uint8, 15 for int16), scaled
by its own (multiplier, shift) with MultiplyByQuantizedMultiplierSmallerThanOneExp, summed (or
subtracted), scaled by the output (multiplier, shift), offset by the output zero point and clamped to
[qmin, qmax] (the fused activation). mul (MulFunc, reference/mul.h): the product of the offset
inputs is scaled by one (multiplier, shift). All parameters are computed at import
(frontend/tflite_ops.py); zero points come from the tensors' QuantParams.
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Graph, Node
from ..ir.ops import Op
from ..ir.params import TfliteAddSubParams, TfliteMulParams
from .fixedpoint import multiply_by_quantized_multiplier, wrap32
from .registry import kernel


def _zp(graph: Graph, name: str) -> int:
    q = graph.tensors[name].quant
    return q.zp if q is not None else 0


def _add_sub(node: Node, graph: Graph, args: list[np.ndarray], sign: int) -> np.ndarray:
    a = node.params
    assert isinstance(a, TfliteAddSubParams)
    ls = int(a.left_shift)
    (m1, m2), (s1, s2) = a.input_multipliers, a.input_shifts
    x1 = (np.asarray(args[0], dtype=np.int64) - _zp(graph, node.inputs[0])) << ls
    x2 = (np.asarray(args[1], dtype=np.int64) - _zp(graph, node.inputs[1])) << ls
    y1 = multiply_by_quantized_multiplier(x1, m1, s1)
    y2 = multiply_by_quantized_multiplier(x2, m2, s2)
    raw = wrap32(y1 + sign * y2)
    out = multiply_by_quantized_multiplier(raw, a.output_multiplier, a.output_shift) + _zp(graph, node.outputs[0])
    return np.clip(out, a.qmin, a.qmax)


@kernel(Op.ADD, mode="tflite")
def add(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    return _add_sub(node, graph, args, 1)


@kernel(Op.SUB, mode="tflite")
def sub(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    return _add_sub(node, graph, args, -1)


@kernel(Op.MUL, mode="tflite")
def mul(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    a = node.params
    assert isinstance(a, TfliteMulParams)
    x1 = np.asarray(args[0], dtype=np.int64) - _zp(graph, node.inputs[0])
    x2 = np.asarray(args[1], dtype=np.int64) - _zp(graph, node.inputs[1])
    out = multiply_by_quantized_multiplier(x1 * x2, a.output_multiplier, a.output_shift)
    return np.clip(out + _zp(graph, node.outputs[0]), a.qmin, a.qmax)
