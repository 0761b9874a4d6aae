"""Shape inference of the IR's graph ops and the window geometry it shares with the frontends.

Output shapes are fully determined by input shapes and op parameters (ir/params.py); `infer_shape`
computes them and the verifier (ir/verify.py) holds the frontends to it.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import GraphError
from .graph import Graph, Node
from .ops import Op
from .params import (
    ConcatParams,
    Conv2dParams,
    LstmParams,
    MeanParams,
    PadParams,
    ReshapeParams,
    SliceParams,
    TransposeConvParams,
    TransposeParams,
    WindowParams,
)


def conv_out(size: int, kernel: int, stride: int, pad_before: int, pad_after: int, dilation: int = 1) -> int:
    """Output length of a strided, padded window sweep."""
    eff = dilation * (kernel - 1) + 1
    return (size + pad_before + pad_after - eff) // stride + 1


def same_pads(size: int, kernel: int, stride: int, dilation: int = 1) -> tuple[int, int]:
    """TFLite/TF 'SAME' padding (before, after): extra padding goes after."""
    eff = dilation * (kernel - 1) + 1
    out = math.ceil(size / stride)
    total = max((out - 1) * stride + eff - size, 0)
    return total // 2, total - total // 2


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(a, b))


def infer_shape(graph: Graph, node: Node) -> tuple[int, ...]:
    """The output shape of `node` from its input shapes and parameters."""
    shp = [graph.tensors[i].shape if i else () for i in node.inputs]
    p = node.params
    if isinstance(p, Conv2dParams):
        n, h, w, _ = shp[0]
        k, fy, fx, _ = shp[1]
        (sy, sx), (dy, dx), (t, l, b, r) = p.stride, p.dilation, p.pads
        return (n, conv_out(h, fy, sy, t, b, dy), conv_out(w, fx, sx, l, r, dx), k)
    if isinstance(p, TransposeConvParams):
        return (shp[0][0], *p.output_hw, shp[1][0])
    if node.op == Op.FULLY_CONNECTED:
        k, c = shp[1]
        size = int(np.prod(shp[0]))
        return (size // c, k)
    if node.op in (Op.ADD, Op.SUB, Op.MUL):
        return broadcast_shape(shp[0], shp[1])
    if isinstance(p, WindowParams):
        n, h, w, c = shp[0]
        (ky, kx), (sy, sx), (t, l, b, r) = p.kernel, p.stride, p.pads
        return (n, conv_out(h, ky, sy, t, b), conv_out(w, kx, sx, l, r), c)
    if isinstance(p, MeanParams):
        axes = {ax % len(shp[0]) for ax in p.axes}
        if p.keepdims:
            return tuple(1 if i in axes else d for i, d in enumerate(shp[0]))
        return tuple(d for i, d in enumerate(shp[0]) if i not in axes)
    if isinstance(p, PadParams):
        return tuple(d + p0 + p1 for d, (p0, p1) in zip(shp[0], p.pads))
    if isinstance(p, ReshapeParams):
        return tuple(p.shape)
    if isinstance(p, ConcatParams):
        axis = p.axis % len(shp[0])
        out = list(shp[0])
        out[axis] = sum(s[axis] for s in shp)
        return tuple(out)
    if isinstance(p, TransposeParams):
        return tuple(shp[0][i] for i in p.perm)
    if node.op == Op.MATMUL:
        a, b = shp[0], shp[1]
        batch = broadcast_shape(tuple(a[:-2]), tuple(b[:-2]))
        return (*batch, a[-2], b[-1])
    if node.op == Op.SVDF:   # [N, U]: U = filters / rank
        return (shp[0][0], graph.tensors[node.inputs[1]].shape[0] // p.rank)
    if isinstance(p, LstmParams):   # the hidden state of every step, in the input's order
        return (*shp[0][:-1], p.n_cell)
    if isinstance(p, SliceParams):
        return tuple(len(range(s0, e, st)) for s0, e, st in zip(p.starts, p.ends, p.steps))
    if node.op in (Op.SOFTMAX, Op.LOGISTIC, Op.TANH, Op.QUANTIZE, Op.DEQUANTIZE, Op.CLAMP, Op.REQUANT, Op.HARDSWISH,
                   Op.INT_SOFTMAX, Op.RMS_NORM, Op.LAYER_NORM, Op.INT_GELU,
                   Op.ITA_MAX):
        return tuple(shp[0])
    raise GraphError(f"node '{node.name}': op '{node.op}' has no graph-level shape inference")
