"""Golden data-movement ops: pad, reshape, transpose (every mode) and concat in tflite mode (with
TFLite's uint8 rescaling when an input's quantization differs from the output's; the onnx concat is
golden/onnx_ops.py's).

pad: constant `value` (TFLite PAD pads with the output zero point, PADV2 with its constant input).
concat, tflite mode: an input whose (scale, zero point) differs from the output's is requantized as
reference_ops::ConcatenationWithScaling does, in float32: round(q·(s_i·(1/s_o)) + (−zp_i·s)) + zp_o,
rounding half away from zero, saturated to the type. Equal quantization copies the values.
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Graph, Node
from ..ir.ops import Op
from ..ir.params import ConcatParams, PadParams, ReshapeParams, TransposeParams
from ..ir.tensor import dtype_range
from .registry import kernel


@kernel(Op.PAD)
def pad(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    p = node.params
    assert isinstance(p, PadParams)
    return np.pad(args[0], tuple(tuple(pp) for pp in p.pads), constant_values=p.value)


@kernel(Op.RESHAPE)
def reshape(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    p = node.params
    assert isinstance(p, ReshapeParams)
    return np.reshape(args[0], tuple(p.shape))


@kernel(Op.TRANSPOSE)
def transpose(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    p = node.params
    assert isinstance(p, TransposeParams)
    return np.transpose(args[0], tuple(p.perm))


def rescale_values(q: np.ndarray, s_in: float, zp_in: int, s_out: float, zp_out: int, dtype: str) -> np.ndarray:
    f = np.float32
    inv = f(1.0) / f(s_out)
    scale = f(s_in) * inv
    bias = f(-zp_in) * scale
    v = q.astype(np.float32) * scale + bias
    r = np.sign(v) * np.floor(np.abs(v) + f(0.5))
    lo, hi = dtype_range(dtype)
    return np.clip(r.astype(np.int64) + zp_out, lo, hi)


@kernel(Op.CONCAT, mode="tflite")
def concat(node: Node, graph: Graph, args: list[np.ndarray]) -> np.ndarray:
    a = node.params
    assert isinstance(a, ConcatParams)
    parts = [np.asarray(x, dtype=np.int64) for x in args]
    s_out, zp_out = a.output_quant
    dtype = graph.tensors[node.outputs[0]].dtype
    parts = [
        p if (np.float32(s), z) == (np.float32(s_out), zp_out) else rescale_values(p, s, z, s_out, zp_out, dtype)
        for p, (s, z) in zip(parts, a.input_quant)
    ]
    return np.concatenate(parts, axis=a.axis)
