"""Golden quantize (int->int requantize, float->int) and dequantize in TFLite semantics.

quantize int->int (reference_ops::Requantize): MultiplyByQuantizedMultiplier(q − zp_in, M, shift)
+ zp_out, saturated to the output type, with (M, shift) = QuantizeMultiplier(double(s_in)/double(s_out)).
quantize float->int (reference_ops::AffineQuantize): round_half_away(x / s) in float32 + zp, saturated.
dequantize (reference_ops::Dequantize): float32(double(s) · (q − zp)).
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Graph, Node
from ..ir.ops import Op
from ..ir.params import TfliteAffineQuantizeParams, TfliteDequantizeParams, TfliteRequantizeParams
from ..ir.tensor import dtype_range
from .fixedpoint import multiply_by_quantized_multiplier
from .registry import kernel


@kernel(Op.QUANTIZE, mode="tflite")
def quantize(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    lo, hi = dtype_range(graph.tensors[node.outputs[0]].dtype)
    x = np.asarray(args[0])
    match node.params:
        case TfliteAffineQuantizeParams(scale=scale, zero_point=zp):
            v = x.astype(np.float32) / np.float32(scale)
            r = np.sign(v) * np.floor(np.abs(v) + np.float32(0.5))
            return np.clip(r.astype(np.int64) + zp, lo, hi)
        case TfliteRequantizeParams() as a:
            q = x.astype(np.int64) - a.input_zero_point
            y = multiply_by_quantized_multiplier(q, a.multiplier, a.shift) + a.zero_point
            return np.clip(y, lo, hi)
    raise TypeError(f"node '{node.name}': quantize with {type(node.params).__name__}")


@kernel(Op.DEQUANTIZE, mode="tflite")
def dequantize(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    a = node.params
    assert isinstance(a, TfliteDequantizeParams)
    q = np.asarray(args[0], dtype=np.int64) - a.zero_point
    return (np.float64(np.float32(a.scale)) * q.astype(np.float64)).astype(np.float32)
